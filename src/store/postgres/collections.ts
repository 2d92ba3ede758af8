import type { Address } from "../../api/validate.ts";
import {
  type CollectionIndexStore,
  type IndexedCollection,
  nameKey,
} from "../../core/known-collections.ts";
import { type CollectionRow, toCollection } from "../rows.ts";
import type { PgDb } from "./db.ts";

/** The collection index in PostgreSQL, shared by every instance. */
export class PgCollectionIndexStore implements CollectionIndexStore {
  constructor(private readonly db: PgDb) {}

  async load(): Promise<IndexedCollection[]> {
    const { rows } = await this.db.query<CollectionRow>(
      "SELECT address, name, symbol, top_rank, source, seen_at FROM known_collections",
    );
    return rows.map(toCollection);
  }

  /** One transaction; the puts as one multi-row upsert from arrays (one round trip). */
  async write(change: {
    put: readonly IndexedCollection[];
    remove: readonly Address[];
  }): Promise<void> {
    if (change.put.length === 0 && change.remove.length === 0) return;
    await this.db.tx(async (client) => {
      // The last of several puts for one address wins, as it did row by row.
      const put = [...new Map(change.put.map((c) => [c.address, c])).values()];
      if (put.length > 0)
        await client.query(
          `INSERT INTO known_collections (address, name, symbol, name_key, top_rank, source, seen_at)
           SELECT * FROM unnest($1::text[], $2::text[], $3::text[], $4::text[], $5::int[], $6::text[], $7::bigint[])
           ON CONFLICT (address) DO UPDATE SET name = excluded.name, symbol = excluded.symbol,
             name_key = excluded.name_key, top_rank = excluded.top_rank, source = excluded.source,
             seen_at = excluded.seen_at`,
          [
            put.map((c) => c.address),
            put.map((c) => c.name),
            put.map((c) => c.symbol),
            put.map((c) => nameKey(c.name)),
            put.map((c) => c.rank ?? null),
            put.map((c) => c.source),
            put.map((c) => c.seenAt),
          ],
        );
      if (change.remove.length > 0)
        await client.query("DELETE FROM known_collections WHERE address = ANY($1::text[])", [
          [...change.remove],
        ]);
    });
  }
}
