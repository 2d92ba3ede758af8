import type { PgDb } from "./db.ts";

/** The tables whose rows pause per chat with a reason (subscriptions pause per row). */
export type PausedPerChat = "digests" | "watches";

/**
 * Pausing a chat's rows of `table` (the chat refused the bot): the first reason is kept, a later
 * refusal changes nothing. Resuming returns how many rows resumed.
 */
export function chatPause(db: PgDb, table: PausedPerChat) {
  return {
    async pauseChat(platform: string, chatId: string, reason: string, now: number): Promise<void> {
      await db.query(
        `UPDATE ${table} SET paused_at = $3, pause_reason = $4
          WHERE platform = $1 AND chat_id = $2 AND paused_at IS NULL`,
        [platform, chatId, now, reason.slice(0, 500)],
      );
    },
    async resumeChat(platform: string, chatId: string): Promise<number> {
      const { rowCount } = await db.query(
        `UPDATE ${table} SET paused_at = NULL, pause_reason = NULL
          WHERE platform = $1 AND chat_id = $2 AND paused_at IS NOT NULL`,
        [platform, chatId],
      );
      return rowCount ?? 0;
    },
  };
}
