import { type ChatPauseRow, chatPauseFromRow, PAUSE_REASON_MAX } from "../rows-chat-pause.ts";
import type { ChatPause, ChatPauseStore } from "../types.ts";
import type { PgDb } from "./db.ts";

/** Chats that refuse the bot (see ChatPauseStore), in PostgreSQL. */
export class PgChatPauseStore implements ChatPauseStore {
  constructor(private readonly db: PgDb) {}

  async pause(platform: string, chatId: string, reason: string, now: number): Promise<boolean> {
    const { rowCount } = await this.db.query(
      `INSERT INTO chat_pauses (platform, chat_id, paused_at, pause_reason) VALUES ($1, $2, $3, $4)
       ON CONFLICT DO NOTHING`,
      [platform, chatId, now, reason.slice(0, PAUSE_REASON_MAX)],
    );
    return (rowCount ?? 0) > 0;
  }

  /** The chat of subscription `id` pauses (the alert delivery knows the subscription). */
  async pauseSubscriptionChat(id: number, reason: string, now: number): Promise<void> {
    await this.db.query(
      `INSERT INTO chat_pauses (platform, chat_id, paused_at, pause_reason)
       SELECT platform, chat_id, $2, $3 FROM subscriptions WHERE id = $1
       ON CONFLICT DO NOTHING`,
      [id, now, reason.slice(0, PAUSE_REASON_MAX)],
    );
  }

  async resume(platform: string, chatId: string): Promise<boolean> {
    // Asked after every command: a DELETE finding nothing writes nothing.
    const { rowCount } = await this.db.query(
      "DELETE FROM chat_pauses WHERE platform = $1 AND chat_id = $2",
      [platform, chatId],
    );
    return (rowCount ?? 0) > 0;
  }

  async get(platform: string, chatId: string): Promise<ChatPause | undefined> {
    const { rows } = await this.db.query<ChatPauseRow>(
      "SELECT * FROM chat_pauses WHERE platform = $1 AND chat_id = $2",
      [platform, chatId],
    );
    return rows[0] && chatPauseFromRow(rows[0]);
  }
}
