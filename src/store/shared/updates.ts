import type { Sql } from "../query.ts";
import type { UpdateStore } from "../types.ts";

/**
 * Update ids seen, per source (one bot token's ids): on PostgreSQL every instance behind one
 * webhook sees the same ids.
 */
export class SqlUpdateStore implements UpdateStore {
  constructor(private readonly sql: Sql) {}

  async firstSeen(source: string, updateId: number | bigint, now: number): Promise<boolean> {
    const { q } = this.sql;
    const added = await this.sql.run(
      q
        .insertInto("seen_updates")
        .values({ source, update_id: String(updateId), seen_at: now })
        .onConflict((conflict) => conflict.doNothing()),
    );
    return added === 1;
  }

  async prune(source: string, before: number): Promise<number> {
    const { q } = this.sql;
    return this.sql.run(
      q.deleteFrom("seen_updates").where("source", "=", source).where("seen_at", "<", before),
    );
  }
}
