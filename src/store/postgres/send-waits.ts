import { type SendWaitRow, sendWaitFromRow, WAIT_REASON_MAX } from "../rows-send-wait.ts";
import type { SendWait, SendWaitStore } from "../types.ts";
import type { PgDb } from "./db.ts";

/** The outbound module's waits after a failed send (see SendWaitStore), in PostgreSQL. */
export class PgSendWaitStore implements SendWaitStore {
  constructor(private readonly db: PgDb) {}

  async all(stream: string): Promise<SendWait[]> {
    const { rows } = await this.db.query<SendWaitRow>(
      "SELECT * FROM send_waits WHERE stream = $1 ORDER BY platform, chat_id",
      [stream],
    );
    return rows.map(sendWaitFromRow);
  }

  async set(wait: SendWait): Promise<void> {
    await this.db.query(
      `INSERT INTO send_waits (stream, platform, chat_id, attempts, wait_until, reason)
       VALUES ($1, $2, $3, $4, $5, $6)
       ON CONFLICT (stream, platform, chat_id) DO UPDATE SET
         attempts = excluded.attempts, wait_until = excluded.wait_until, reason = excluded.reason`,
      [
        wait.stream,
        wait.platform,
        wait.chatId,
        wait.attempts,
        Math.round(wait.until),
        wait.reason.slice(0, WAIT_REASON_MAX),
      ],
    );
  }

  async clear(stream: string, platform: string, chatId: string): Promise<void> {
    await this.db.query(
      "DELETE FROM send_waits WHERE stream = $1 AND platform = $2 AND chat_id = $3",
      [stream, platform, chatId],
    );
  }

  async moveChat(platform: string, fromChatId: string, toChatId: string): Promise<void> {
    await this.db.tx(async (client) => {
      // A wait the new id has already in a stream is kept; the old id's in that stream goes.
      await client.query(
        `UPDATE send_waits w SET chat_id = $3 WHERE platform = $1 AND chat_id = $2
         AND NOT EXISTS (SELECT 1 FROM send_waits n
           WHERE n.stream = w.stream AND n.platform = $1 AND n.chat_id = $3)`,
        [platform, fromChatId, toChatId],
      );
      await client.query("DELETE FROM send_waits WHERE platform = $1 AND chat_id = $2", [
        platform,
        fromChatId,
      ]);
    });
  }
}
