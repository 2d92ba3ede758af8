import type { Sql } from "../query.ts";
import { chatPauseFromRow, PAUSE_REASON_MAX } from "../rows-chat-pause.ts";
import type { ChatPause, ChatPauseStore } from "../types.ts";

/** Chats that refuse the bot (see ChatPauseStore). */
export class SqlChatPauseStore implements ChatPauseStore {
  constructor(private readonly sql: Sql) {}

  private find(platform: string, chatId: string) {
    const { q } = this.sql;
    return this.sql.first(
      q
        .selectFrom("chat_pauses")
        .selectAll()
        .where("platform", "=", platform)
        .where("chat_id", "=", chatId),
    );
  }

  async pause(platform: string, chatId: string, reason: string, now: number): Promise<boolean> {
    const { q } = this.sql;
    const added = await this.sql.run(
      q
        .insertInto("chat_pauses")
        .values({
          platform,
          chat_id: chatId,
          paused_at: now,
          pause_reason: reason.slice(0, PAUSE_REASON_MAX),
        })
        .onConflict((conflict) => conflict.doNothing()),
    );
    return added > 0;
  }

  /** The chat of subscription `id` pauses (the alert delivery knows the subscription). */
  async pauseSubscriptionChat(id: number, reason: string, now: number): Promise<void> {
    const { q } = this.sql;
    await this.sql.run(
      q
        .insertInto("chat_pauses")
        .columns(["platform", "chat_id", "paused_at", "pause_reason"])
        .expression(
          q
            .selectFrom("subscriptions")
            .select((row) => [
              "platform",
              "chat_id",
              row.val(now).as("paused_at"),
              row.val(reason.slice(0, PAUSE_REASON_MAX)).as("pause_reason"),
            ])
            .where("id", "=", id),
        )
        .onConflict((conflict) => conflict.doNothing()),
    );
  }

  async resume(platform: string, chatId: string): Promise<boolean> {
    // Asked after every command. On SQLite a read comes first, so a chat not paused (nearly all)
    // never takes the database's write lock; on PostgreSQL a DELETE finding nothing writes
    // nothing, and one round trip is less than two.
    if (this.sql.dialect === "sqlite" && (await this.find(platform, chatId)) === undefined)
      return false;
    const { q } = this.sql;
    const removed = await this.sql.run(
      q.deleteFrom("chat_pauses").where("platform", "=", platform).where("chat_id", "=", chatId),
    );
    return removed > 0;
  }

  async get(platform: string, chatId: string): Promise<ChatPause | undefined> {
    const row = await this.find(platform, chatId);
    return row && chatPauseFromRow(row);
  }
}
