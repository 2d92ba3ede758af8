import { type OnConflictBuilder, sql as raw } from "kysely";
import type { Address } from "../../api/validate.ts";
import { DEFAULT_CHAIN_ID } from "../../chains.ts";
import {
  type ChainCollectionIndexStore,
  type CollectionIndexStore,
  type IndexedCollection,
  nameKey,
} from "../../core/known-collections.ts";
import { anyOf, type Sql } from "../query.ts";
import { toCollection } from "../rows.ts";
import type { Tables } from "../tables.ts";

/** A put replaces what is kept for its chain and address. */
const replace = (conflict: OnConflictBuilder<Tables, "known_collections">) =>
  conflict.columns(["chain", "address"]).doUpdateSet((row) => ({
    name: row.ref("excluded.name"),
    symbol: row.ref("excluded.symbol"),
    name_key: row.ref("excluded.name_key"),
    top_rank: row.ref("excluded.top_rank"),
    source: row.ref("excluded.source"),
    seen_at: row.ref("excluded.seen_at"),
  }));

/** The collection index, a chain's rows apart: what the bot knew survives a restart. */
export class SqlCollectionIndexStore implements ChainCollectionIndexStore {
  constructor(
    private readonly sql: Sql,
    private readonly chain: string = DEFAULT_CHAIN_ID,
  ) {}

  forChain(chain: string): CollectionIndexStore {
    return chain === this.chain ? this : new SqlCollectionIndexStore(this.sql, chain);
  }

  async load(): Promise<IndexedCollection[]> {
    const { q } = this.sql;
    const rows = await this.sql.all(
      q
        .selectFrom("known_collections")
        .select(["address", "name", "symbol", "top_rank", "source", "seen_at"])
        .where("chain", "=", this.chain),
    );
    return rows.map(toCollection);
  }

  /**
   * One transaction. On PostgreSQL the puts are one multi-row upsert from arrays and the removes
   * one DELETE (one round trip each, whatever the count); on SQLite each row is its own run of
   * one prepared statement, which costs no round trip and keeps one SQL text.
   */
  async write(change: {
    put: readonly IndexedCollection[];
    remove: readonly Address[];
  }): Promise<void> {
    if (change.put.length === 0 && change.remove.length === 0) return;
    const { q } = this.sql;
    const { chain } = this;
    // The last of several puts for one address wins, as it would row by row (and one multi-row
    // upsert may not touch a row twice on PostgreSQL).
    const put = [...new Map(change.put.map((c) => [c.address, c])).values()];
    const remove = [...change.remove];
    const into = q.insertInto("known_collections");
    await this.sql.transaction(function* (tx) {
      if (tx.dialect === "postgres") {
        if (put.length > 0)
          yield* tx.run(
            into
              .columns([
                "chain",
                "address",
                "name",
                "symbol",
                "name_key",
                "top_rank",
                "source",
                "seen_at",
              ])
              .expression(
                raw`SELECT ${chain}, * FROM unnest(${put.map((c) => c.address)}::text[], ${put.map((c) => c.name)}::text[], ${put.map((c) => c.symbol)}::text[], ${put.map((c) => nameKey(c.name))}::text[], ${put.map((c) => c.rank ?? null)}::int[], ${put.map((c) => c.source)}::text[], ${put.map((c) => c.seenAt)}::bigint[])`,
              )
              .onConflict(replace),
          );
        if (remove.length > 0)
          yield* tx.run(
            q
              .deleteFrom("known_collections")
              .where("chain", "=", chain)
              .where("address", "=", anyOf(remove, "text")),
          );
        return;
      }
      for (const c of put)
        yield* tx.run(
          into
            .values({
              chain,
              address: c.address,
              name: c.name,
              symbol: c.symbol,
              name_key: nameKey(c.name),
              top_rank: c.rank ?? null,
              source: c.source,
              seen_at: c.seenAt,
            })
            .onConflict(replace),
        );
      for (const address of remove)
        yield* tx.run(
          q
            .deleteFrom("known_collections")
            .where("chain", "=", chain)
            .where("address", "=", address),
        );
    });
  }
}
