import { chatPauseJoin, PAUSE_COLUMNS } from "../rows-chat-pause.ts";
import { type WatchRow, watchFromRow } from "../rows-watch.ts";
import { SqlChatPauseStore } from "../shared/chat-pause.ts";
import type { NewWatch, Watch, WatchStore } from "../types.ts";
import type { Db } from "./db.ts";
import { sqliteSql } from "./query.ts";

/** Every watch with its chat's pause (the rows carry none of their own). */
const ALL = `${PAUSE_COLUMNS} FROM watches w ${chatPauseJoin("w")}`;

/** Watches in SQLite. */
export class SqliteWatchStore implements WatchStore {
  private readonly chatPauses: SqlChatPauseStore;

  constructor(private readonly db: Db) {
    this.chatPauses = new SqlChatPauseStore(sqliteSql(db));
  }

  async add(
    watch: NewWatch,
    max: number,
  ): Promise<
    { kind: "added" | "updated"; watch: Watch } | { kind: "full"; count: number; max: number }
  > {
    const { db } = this;
    return db
      .transaction(() => {
        const existing = db
          .prepare<[string, string, string, string, string], { id: number }>(
            `SELECT id FROM watches
             WHERE platform = ? AND chat_id = ? AND chain = ? AND kind = ? AND target = ?`,
          )
          .get(watch.platform, watch.chatId, watch.chain, watch.kind, watch.target);
        if (existing) {
          db.prepare(
            "UPDATE watches SET owners_percent = ?, whales_points = ?, label = ? WHERE id = ?",
          ).run(watch.ownersPercent, watch.whalesPoints, watch.label, existing.id);
          return { kind: "updated" as const, watch: this.byId(existing.id) as Watch };
        }
        const { count } = db
          .prepare<[string, string], { count: number }>(
            "SELECT COUNT(*) AS count FROM watches WHERE platform = ? AND chat_id = ?",
          )
          .get(watch.platform, watch.chatId) as { count: number };
        if (count >= max) return { kind: "full" as const, count, max };
        const { lastInsertRowid } = db
          .prepare(
            `INSERT INTO watches (platform, chat_id, chain, kind, target, label, owners_percent,
               whales_points, created_by, created_at) VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?)`,
          )
          .run(
            watch.platform,
            watch.chatId,
            watch.chain,
            watch.kind,
            watch.target,
            watch.label,
            watch.ownersPercent,
            watch.whalesPoints,
            watch.createdBy,
            watch.createdAt,
          );
        return { kind: "added" as const, watch: this.byId(Number(lastInsertRowid)) as Watch };
      })
      .immediate();
  }

  private byId(id: number): Watch | undefined {
    const row = this.db.prepare<[number], WatchRow>(`SELECT w.*, ${ALL} WHERE w.id = ?`).get(id);
    return row ? watchFromRow(row) : undefined;
  }

  async forChat(platform: string, chatId: string): Promise<Watch[]> {
    return this.db
      .prepare<[string, string], WatchRow>(
        `SELECT w.*, ${ALL} WHERE w.platform = ? AND w.chat_id = ? ORDER BY w.id`,
      )
      .all(platform, chatId)
      .map(watchFromRow);
  }

  async remove(platform: string, chatId: string, id: number): Promise<boolean> {
    return (
      this.db
        .prepare("DELETE FROM watches WHERE platform = ? AND chat_id = ? AND id = ?")
        .run(platform, chatId, id).changes > 0
    );
  }

  async all(chain?: string): Promise<Watch[]> {
    const rows =
      chain === undefined
        ? this.db.prepare<[], WatchRow>(`SELECT w.*, ${ALL} ORDER BY w.id`).all()
        : this.db
            .prepare<[string], WatchRow>(`SELECT w.*, ${ALL} WHERE w.chain = ? ORDER BY w.id`)
            .all(chain);
    return rows.map(watchFromRow);
  }

  async advance(id: number, state: string, pending: string | null): Promise<void> {
    this.db
      .prepare("UPDATE watches SET state = ?, pending = ? WHERE id = ?")
      .run(state, pending, id);
  }

  async posted(id: number, pending: string): Promise<void> {
    this.db
      .prepare("UPDATE watches SET pending = NULL WHERE id = ? AND pending = ?")
      .run(id, pending);
  }

  async moveChat(platform: string, fromChatId: string, toChatId: string): Promise<void> {
    this.db
      .transaction(() => {
        this.db
          .prepare("UPDATE OR IGNORE watches SET chat_id = ? WHERE platform = ? AND chat_id = ?")
          .run(toChatId, platform, fromChatId);
        // Left when the new chat watches the same already.
        this.db
          .prepare("DELETE FROM watches WHERE platform = ? AND chat_id = ?")
          .run(platform, fromChatId);
      })
      .immediate();
  }

  async pauseChat(platform: string, chatId: string, reason: string, now: number): Promise<void> {
    await this.chatPauses.pause(platform, chatId, reason, now);
  }
}
