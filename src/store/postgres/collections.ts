import type { Address } from "../../api/validate.ts";
import { DEFAULT_CHAIN_ID } from "../../chains.ts";
import {
  type ChainCollectionIndexStore,
  type CollectionIndexStore,
  type IndexedCollection,
  nameKey,
} from "../../core/known-collections.ts";
import { type CollectionRow, toCollection } from "../rows.ts";
import type { PgDb } from "./db.ts";

/** The collection index in PostgreSQL, a chain's rows apart, shared by every instance. */
export class PgCollectionIndexStore implements ChainCollectionIndexStore {
  constructor(
    private readonly db: PgDb,
    private readonly chain: string = DEFAULT_CHAIN_ID,
  ) {}

  forChain(chain: string): CollectionIndexStore {
    return chain === this.chain ? this : new PgCollectionIndexStore(this.db, chain);
  }

  async load(): Promise<IndexedCollection[]> {
    const { rows } = await this.db.query<CollectionRow>(
      "SELECT address, name, symbol, top_rank, source, seen_at FROM known_collections WHERE chain = $1",
      [this.chain],
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
          `INSERT INTO known_collections (chain, address, name, symbol, name_key, top_rank, source, seen_at)
           SELECT $1, * FROM unnest($2::text[], $3::text[], $4::text[], $5::text[], $6::int[], $7::text[], $8::bigint[])
           ON CONFLICT (chain, address) DO UPDATE SET name = excluded.name, symbol = excluded.symbol,
             name_key = excluded.name_key, top_rank = excluded.top_rank, source = excluded.source,
             seen_at = excluded.seen_at`,
          [
            this.chain,
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
        await client.query(
          "DELETE FROM known_collections WHERE chain = $1 AND address = ANY($2::text[])",
          [this.chain, [...change.remove]],
        );
    });
  }
}
