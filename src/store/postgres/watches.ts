import { chatPauseJoin, PAUSE_COLUMNS } from "../rows-chat-pause.ts";
import { type WatchRow, watchFromRow } from "../rows-watch.ts";
import { SqlChatPauseStore } from "../shared/chat-pause.ts";
import type { NewWatch, Watch, WatchStore } from "../types.ts";
import type { PgDb } from "./db.ts";
import { postgresSql } from "./query.ts";

/** Every watch with its chat's pause (the rows carry none of their own). */
const ALL = `${PAUSE_COLUMNS} FROM watches w ${chatPauseJoin("w")}`;

/** Watches in PostgreSQL, shared by every instance. */
export class PgWatchStore implements WatchStore {
  constructor(private readonly db: PgDb) {}

  async add(
    watch: NewWatch,
    max: number,
  ): Promise<
    { kind: "added" | "updated"; watch: Watch } | { kind: "full"; count: number; max: number }
  > {
    return this.db.tx(async (client) => {
      // One adder per chat at a time: two instances adding at once cannot both pass the cap.
      await client.query("SELECT pg_advisory_xact_lock(hashtext('watches:' || $1 || ':' || $2))", [
        watch.platform,
        watch.chatId,
      ]);
      const updated = await client.query<WatchRow>(
        `UPDATE watches SET owners_percent = $6, whales_points = $7, label = $8
         WHERE platform = $1 AND chat_id = $2 AND chain = $3 AND kind = $4 AND target = $5
         RETURNING *`,
        [
          watch.platform,
          watch.chatId,
          watch.chain,
          watch.kind,
          watch.target,
          watch.ownersPercent,
          watch.whalesPoints,
          watch.label,
        ],
      );
      const row = updated.rows[0];
      if (row) return { kind: "updated" as const, watch: watchFromRow(row) };
      const { rows } = await client.query<{ count: number }>(
        "SELECT COUNT(*) AS count FROM watches WHERE platform = $1 AND chat_id = $2",
        [watch.platform, watch.chatId],
      );
      const count = Number(rows[0]?.count ?? 0);
      if (count >= max) return { kind: "full" as const, count, max };
      const inserted = await client.query<WatchRow>(
        `INSERT INTO watches (platform, chat_id, chain, kind, target, label, owners_percent,
           whales_points, created_by, created_at) VALUES ($1, $2, $3, $4, $5, $6, $7, $8, $9, $10)
         RETURNING *`,
        [
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
        ],
      );
      return { kind: "added" as const, watch: watchFromRow(inserted.rows[0] as WatchRow) };
    });
  }

  async forChat(platform: string, chatId: string): Promise<Watch[]> {
    const { rows } = await this.db.query<WatchRow>(
      `SELECT w.*, ${PAUSE_COLUMNS} FROM watches w ${chatPauseJoin("w")}
        WHERE w.platform = $1 AND w.chat_id = $2 ORDER BY w.id`,
      [platform, chatId],
    );
    return rows.map(watchFromRow);
  }

  async remove(platform: string, chatId: string, id: number): Promise<boolean> {
    const result = await this.db.query(
      "DELETE FROM watches WHERE platform = $1 AND chat_id = $2 AND id = $3",
      [platform, chatId, id],
    );
    return (result.rowCount ?? 0) > 0;
  }

  async all(chain?: string): Promise<Watch[]> {
    const { rows } =
      chain === undefined
        ? await this.db.query<WatchRow>(`SELECT w.*, ${ALL} ORDER BY w.id`)
        : await this.db.query<WatchRow>(`SELECT w.*, ${ALL} WHERE w.chain = $1 ORDER BY w.id`, [
            chain,
          ]);
    return rows.map(watchFromRow);
  }

  async advance(id: number, state: string, pending: string | null): Promise<void> {
    await this.db.query("UPDATE watches SET state = $2, pending = $3 WHERE id = $1", [
      id,
      state,
      pending,
    ]);
  }

  async posted(id: number, pending: string): Promise<void> {
    await this.db.query("UPDATE watches SET pending = NULL WHERE id = $1 AND pending = $2", [
      id,
      pending,
    ]);
  }

  async moveChat(platform: string, fromChatId: string, toChatId: string): Promise<void> {
    await this.db.tx(async (client) => {
      await client.query(
        `UPDATE watches AS w SET chat_id = $3 WHERE w.platform = $1 AND w.chat_id = $2
           AND NOT EXISTS (SELECT 1 FROM watches AS n WHERE n.platform = $1 AND n.chat_id = $3
             AND n.chain = w.chain AND n.kind = w.kind AND n.target = w.target)`,
        [platform, fromChatId, toChatId],
      );
      // Left when the new chat watches the same already.
      await client.query("DELETE FROM watches WHERE platform = $1 AND chat_id = $2", [
        platform,
        fromChatId,
      ]);
    });
  }

  async pauseChat(platform: string, chatId: string, reason: string, now: number): Promise<void> {
    await new SqlChatPauseStore(postgresSql(this.db)).pause(platform, chatId, reason, now);
  }
}
