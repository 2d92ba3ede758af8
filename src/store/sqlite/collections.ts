import type { Address } from "../../api/validate.ts";
import { DEFAULT_CHAIN_ID } from "../../chains.ts";
import {
  type ChainCollectionIndexStore,
  type CollectionIndexStore,
  type IndexedCollection,
  nameKey,
} from "../../core/known-collections.ts";
import { type CollectionRow, toCollection } from "../rows.ts";
import type { Db } from "./db.ts";

/** The collection index in SQLite, a chain's rows apart: what the bot knew survives a restart. */
export class SqliteCollectionIndexStore implements ChainCollectionIndexStore {
  private readonly upsert;
  private readonly remove;
  private readonly selectAll;

  constructor(
    private readonly db: Db,
    private readonly chain: string = DEFAULT_CHAIN_ID,
  ) {
    this.upsert = db.prepare(
      `INSERT INTO known_collections (chain, address, name, symbol, name_key, top_rank, source, seen_at)
       VALUES (?, ?, ?, ?, ?, ?, ?, ?)
       ON CONFLICT (chain, address) DO UPDATE SET name = excluded.name, symbol = excluded.symbol,
         name_key = excluded.name_key, top_rank = excluded.top_rank, source = excluded.source,
         seen_at = excluded.seen_at`,
    );
    this.remove = db.prepare("DELETE FROM known_collections WHERE chain = ? AND address = ?");
    this.selectAll = db.prepare<[string], CollectionRow>(
      "SELECT address, name, symbol, top_rank, source, seen_at FROM known_collections WHERE chain = ?",
    );
  }

  forChain(chain: string): CollectionIndexStore {
    return chain === this.chain ? this : new SqliteCollectionIndexStore(this.db, chain);
  }

  async load(): Promise<IndexedCollection[]> {
    return this.selectAll.all(this.chain).map(toCollection);
  }

  async write(change: {
    put: readonly IndexedCollection[];
    remove: readonly Address[];
  }): Promise<void> {
    this.db.transaction(() => {
      for (const c of change.put) {
        this.upsert.run(
          this.chain,
          c.address,
          c.name,
          c.symbol,
          nameKey(c.name),
          c.rank ?? null,
          c.source,
          c.seenAt,
        );
      }
      for (const address of change.remove) this.remove.run(this.chain, address);
    })();
  }
}
