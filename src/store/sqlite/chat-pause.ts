import type { Db } from "./db.ts";

/** The tables whose rows pause per chat with a reason (subscriptions pause per row). */
export type PausedPerChat = "digests" | "watches";

/**
 * Pausing a chat's rows of `table` (the chat refused the bot): the first reason is kept, a later
 * refusal changes nothing. Resuming returns how many rows resumed.
 */
export function chatPause(db: Db, table: PausedPerChat) {
  // Prepared once: resumeChat runs after every command, and preparing cost more than the read.
  const findPaused = db.prepare<[string, string]>(
    `SELECT 1 FROM ${table} WHERE platform = ? AND chat_id = ? AND paused_at IS NOT NULL LIMIT 1`,
  );
  const resume = db.prepare<[string, string]>(
    `UPDATE ${table} SET paused_at = NULL, pause_reason = NULL
      WHERE platform = ? AND chat_id = ? AND paused_at IS NOT NULL`,
  );
  return {
    async pauseChat(platform: string, chatId: string, reason: string, now: number): Promise<void> {
      db.prepare(
        `UPDATE ${table} SET paused_at = ?, pause_reason = ?
          WHERE platform = ? AND chat_id = ? AND paused_at IS NULL`,
      ).run(now, reason.slice(0, 500), platform, chatId);
    },
    async resumeChat(platform: string, chatId: string): Promise<number> {
      // Asked after every command: a read first, so a chat with nothing paused (nearly all) never
      // takes the database's write lock.
      if (findPaused.get(platform, chatId) === undefined) return 0;
      return resume.run(platform, chatId).changes;
    },
  };
}
