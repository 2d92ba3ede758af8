import type { UpdateStore } from "../types.ts";
import type { PgDb } from "./db.ts";

/** Update ids in PostgreSQL, per source: every instance behind one webhook sees the same ids. */
export class PgUpdateStore implements UpdateStore {
  constructor(private readonly db: PgDb) {}

  async firstSeen(source: string, updateId: number | bigint, now: number): Promise<boolean> {
    const result = await this.db.query(
      "INSERT INTO seen_updates (source, update_id, seen_at) VALUES ($1, $2, $3) ON CONFLICT DO NOTHING",
      [source, String(updateId), now],
    );
    return result.rowCount === 1;
  }

  async prune(source: string, before: number): Promise<number> {
    const result = await this.db.query(
      "DELETE FROM seen_updates WHERE source = $1 AND seen_at < $2",
      [source, before],
    );
    return result.rowCount ?? 0;
  }
}
