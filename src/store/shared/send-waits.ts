import type { Sql } from "../query.ts";
import { sendWaitFromRow, WAIT_REASON_MAX } from "../rows-send-wait.ts";
import type { SendWait, SendWaitStore } from "../types.ts";

/** The outbound module's waits after a failed send (see SendWaitStore). */
export class SqlSendWaitStore implements SendWaitStore {
  constructor(private readonly sql: Sql) {}

  async all(stream: string): Promise<SendWait[]> {
    const { q } = this.sql;
    const rows = await this.sql.all(
      q
        .selectFrom("send_waits")
        .selectAll()
        .where("stream", "=", stream)
        .orderBy("platform")
        .orderBy("chat_id"),
    );
    return rows.map(sendWaitFromRow);
  }

  async get(stream: string, platform: string, chatId: string): Promise<SendWait | undefined> {
    const { q } = this.sql;
    const row = await this.sql.first(
      q
        .selectFrom("send_waits")
        .selectAll()
        .where("stream", "=", stream)
        .where("platform", "=", platform)
        .where("chat_id", "=", chatId),
    );
    return row && sendWaitFromRow(row);
  }

  async set(wait: SendWait): Promise<void> {
    const { q } = this.sql;
    await this.sql.run(
      q
        .insertInto("send_waits")
        .values({
          stream: wait.stream,
          platform: wait.platform,
          chat_id: wait.chatId,
          attempts: wait.attempts,
          wait_until: Math.round(wait.until),
          reason: wait.reason.slice(0, WAIT_REASON_MAX),
        })
        .onConflict((conflict) =>
          conflict.columns(["stream", "platform", "chat_id"]).doUpdateSet((row) => ({
            attempts: row.ref("excluded.attempts"),
            wait_until: row.ref("excluded.wait_until"),
            reason: row.ref("excluded.reason"),
          })),
        ),
    );
  }

  async clear(stream: string, platform: string, chatId: string): Promise<void> {
    const { q } = this.sql;
    await this.sql.run(
      q
        .deleteFrom("send_waits")
        .where("stream", "=", stream)
        .where("platform", "=", platform)
        .where("chat_id", "=", chatId),
    );
  }

  async moveChat(platform: string, fromChatId: string, toChatId: string): Promise<void> {
    const { q } = this.sql;
    await this.sql.transaction(
      function* (tx) {
        // A wait the new id has already in a stream is kept; the old id's in that stream goes.
        yield* tx.run(
          q
            .updateTable("send_waits as w")
            .set({ chat_id: toChatId })
            .where("w.platform", "=", platform)
            .where("w.chat_id", "=", fromChatId)
            .where((row) =>
              row.not(
                row.exists(
                  row
                    .selectFrom("send_waits as n")
                    .select("n.chat_id")
                    .whereRef("n.stream", "=", "w.stream")
                    .where("n.platform", "=", platform)
                    .where("n.chat_id", "=", toChatId),
                ),
              ),
            ),
        );
        yield* tx.run(
          q
            .deleteFrom("send_waits")
            .where("platform", "=", platform)
            .where("chat_id", "=", fromChatId),
        );
      },
      { immediate: true },
    );
  }
}
