import type { UpdateStore } from "../types.ts";
import type { PgDb } from "./db.ts";

/** Update ids in PostgreSQL, per source: every instance behind one webhook sees the same ids. */
export class PgUpdateStore implements UpdateStore {
  constructor(private readonly db: PgDb) {}

  async firstSeen(source: string, updateId: number, now: number): Promise<boolean> {
    const result = await this.db.query(
      "INSERT INTO seen_updates (source, update_id, seen_at) VALUES ($1, $2, $3) ON CONFLICT DO NOTHING",
      [source, updateId, now],
    );
    return result.rowCount === 1;
  }

  async prune(before: number): Promise<number> {
    return (
      (await this.db.query("DELETE FROM seen_updates WHERE seen_at < $1", [before])).rowCount ?? 0
    );
  }
}
