import { type ChatPauseRow, chatPauseFromRow, PAUSE_REASON_MAX } from "../rows-chat-pause.ts";
import type { ChatPause, ChatPauseStore } from "../types.ts";
import type { Db } from "./db.ts";

/** Chats that refuse the bot (see ChatPauseStore), in SQLite. */
export class SqliteChatPauseStore implements ChatPauseStore {
  // Prepared once: resume runs after every command, and preparing cost more than the read.
  private readonly find;
  private readonly insert;
  private readonly remove;
  private readonly insertFor;

  constructor(db: Db) {
    this.find = db.prepare<[string, string], ChatPauseRow>(
      "SELECT * FROM chat_pauses WHERE platform = ? AND chat_id = ?",
    );
    this.insert = db.prepare<[string, string, number, string]>(
      "INSERT OR IGNORE INTO chat_pauses (platform, chat_id, paused_at, pause_reason) VALUES (?, ?, ?, ?)",
    );
    this.remove = db.prepare<[string, string]>(
      "DELETE FROM chat_pauses WHERE platform = ? AND chat_id = ?",
    );
    this.insertFor = db.prepare<[number, string, number]>(
      `INSERT OR IGNORE INTO chat_pauses (platform, chat_id, paused_at, pause_reason)
       SELECT platform, chat_id, ?, ? FROM subscriptions WHERE id = ?`,
    );
  }

  async pause(platform: string, chatId: string, reason: string, now: number): Promise<boolean> {
    return this.insert.run(platform, chatId, now, reason.slice(0, PAUSE_REASON_MAX)).changes > 0;
  }

  /** The chat of subscription `id` pauses (the alert delivery knows the subscription). */
  async pauseSubscriptionChat(id: number, reason: string, now: number): Promise<void> {
    this.insertFor.run(now, reason.slice(0, PAUSE_REASON_MAX), id);
  }

  async resume(platform: string, chatId: string): Promise<boolean> {
    // Asked after every command: a read first, so a chat not paused (nearly all) never takes the
    // database's write lock.
    if (this.find.get(platform, chatId) === undefined) return false;
    return this.remove.run(platform, chatId).changes > 0;
  }

  async get(platform: string, chatId: string): Promise<ChatPause | undefined> {
    const row = this.find.get(platform, chatId);
    return row && chatPauseFromRow(row);
  }
}
