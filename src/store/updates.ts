import type { Db } from "./db.ts";

/**
 * Which platform updates were already taken. Telegram delivers at least once: a webhook it
 * thinks timed out, or polling restarted before its offset was confirmed, brings the same
 * update again. Async so another store (PostgreSQL, shared by several instances) can stand in.
 */
export interface UpdateDedup {
  /** True the first time an update id is offered, false for every later delivery of it. */
  firstSeen(updateId: number): Promise<boolean>;
}

/** Telegram keeps an undelivered update for 24 hours: no redelivery comes later than that. */
export const UPDATE_REDELIVERY_WINDOW_MS = 24 * 3_600_000;

/** Update ids in SQLite, per source (one bot token's ids), forgotten after the window. */
export class SqliteUpdateDedup implements UpdateDedup {
  private readonly insert;
  private readonly deleteOld;
  private readonly source: string;
  private readonly windowMs: number;
  private readonly now: () => number;

  constructor(db: Db, options: { source: string; windowMs?: number; now?: () => number }) {
    this.source = options.source;
    this.windowMs = options.windowMs ?? UPDATE_REDELIVERY_WINDOW_MS;
    // Wall clock: seen_at outlives the process.
    this.now = options.now ?? Date.now;
    this.insert = db.prepare(
      "INSERT OR IGNORE INTO seen_updates (source, update_id, seen_at) VALUES (?, ?, ?)",
    );
    this.deleteOld = db.prepare("DELETE FROM seen_updates WHERE seen_at < ?");
  }

  async firstSeen(updateId: number): Promise<boolean> {
    return this.insert.run(this.source, updateId, this.now()).changes === 1;
  }

  /** Drops ids older than the window; returns how many. */
  prune(): number {
    return this.deleteOld.run(this.now() - this.windowMs).changes;
  }
}
