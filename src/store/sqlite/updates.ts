import type { UpdateStore } from "../types.ts";
import type { Db } from "./db.ts";

/** Update ids in SQLite, per source (one bot token's ids). */
export class SqliteUpdateStore implements UpdateStore {
  private readonly insert;
  private readonly deleteOld;

  constructor(db: Db) {
    this.insert = db.prepare<[string, number | bigint, number]>(
      "INSERT OR IGNORE INTO seen_updates (source, update_id, seen_at) VALUES (?, ?, ?)",
    );
    this.deleteOld = db.prepare<[string, number]>(
      "DELETE FROM seen_updates WHERE source = ? AND seen_at < ?",
    );
  }

  async firstSeen(source: string, updateId: number | bigint, now: number): Promise<boolean> {
    return this.insert.run(source, updateId, now).changes === 1;
  }

  async prune(source: string, before: number): Promise<number> {
    return this.deleteOld.run(source, before).changes;
  }
}
