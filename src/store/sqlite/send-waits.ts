import { type SendWaitRow, sendWaitFromRow, WAIT_REASON_MAX } from "../rows-send-wait.ts";
import type { SendWait, SendWaitStore } from "../types.ts";
import type { Db } from "./db.ts";

/** The outbound module's waits after a failed send (see SendWaitStore), in SQLite. */
export class SqliteSendWaitStore implements SendWaitStore {
  constructor(private readonly db: Db) {}

  async all(stream: string): Promise<SendWait[]> {
    return this.db
      .prepare<[string], SendWaitRow>(
        "SELECT * FROM send_waits WHERE stream = ? ORDER BY platform, chat_id",
      )
      .all(stream)
      .map(sendWaitFromRow);
  }

  async set(wait: SendWait): Promise<void> {
    this.db
      .prepare(
        `INSERT INTO send_waits (stream, platform, chat_id, attempts, wait_until, reason)
         VALUES (?, ?, ?, ?, ?, ?)
         ON CONFLICT (stream, platform, chat_id) DO UPDATE SET
           attempts = excluded.attempts, wait_until = excluded.wait_until, reason = excluded.reason`,
      )
      .run(
        wait.stream,
        wait.platform,
        wait.chatId,
        wait.attempts,
        Math.round(wait.until),
        wait.reason.slice(0, WAIT_REASON_MAX),
      );
  }

  async clear(stream: string, platform: string, chatId: string): Promise<void> {
    this.db
      .prepare("DELETE FROM send_waits WHERE stream = ? AND platform = ? AND chat_id = ?")
      .run(stream, platform, chatId);
  }

  async moveChat(platform: string, fromChatId: string, toChatId: string): Promise<void> {
    this.db
      .transaction(() => {
        this.db
          .prepare("UPDATE OR IGNORE send_waits SET chat_id = ? WHERE platform = ? AND chat_id = ?")
          .run(toChatId, platform, fromChatId);
        // Left when the new id has a wait of its own in that stream already.
        this.db
          .prepare("DELETE FROM send_waits WHERE platform = ? AND chat_id = ?")
          .run(platform, fromChatId);
      })
      .immediate();
  }
}
