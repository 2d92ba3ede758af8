/**
 * A chat that refuses the bot (kicked, blocked, channel gone, no access) is paused as a whole
 * (issue 34): one row per chat, written by whichever feature met the refusal first, and read by
 * every feature's work for that chat (alert deliveries and enqueueing, digests, the watches'
 * upstream reads). The rows of subscriptions, watches and digests carry no pause of their own:
 * their `paused_at` and `pause_reason` are the chat's, joined in (see PAUSE_COLUMNS).
 */

import { sql as raw, type SqlBool } from "kysely";
import type { ChatPause } from "./types.ts";

export interface ChatPauseRow {
  platform: string;
  chat_id: string;
  paused_at: number | string;
  pause_reason: string;
}

export const chatPauseFromRow = (row: ChatPauseRow): ChatPause => ({
  platform: row.platform,
  chatId: row.chat_id,
  pausedAt: Number(row.paused_at),
  reason: row.pause_reason,
});

/** How long a stored reason may be (a platform's description, never a secret). */
export const PAUSE_REASON_MAX = 500;

/** True for the rows of `alias` whose chat is not paused, as a condition of a built query. */
export const chatNotPaused = (alias: string) =>
  raw.raw<SqlBool>(
    `NOT EXISTS (SELECT 1 FROM chat_pauses p WHERE p.platform = ${alias}.platform AND p.chat_id = ${alias}.chat_id)`,
  );

/**
 * The migration that makes the pause the chat's: the table, each chat's earliest pause among its
 * subscriptions, watches and digests (with that pause's reason), and the rows' own columns gone.
 */
export function chatPausesMigration(dialect: "sqlite" | "postgres"): string {
  const time = dialect === "sqlite" ? "INTEGER" : "BIGINT";
  const paused = ["subscriptions", "watches", "digests"]
    .map(
      (table) =>
        `SELECT platform, chat_id, paused_at, COALESCE(pause_reason, 'the chat refused the bot') AS pause_reason FROM ${table} WHERE paused_at IS NOT NULL`,
    )
    .join("\n      UNION ALL ");
  const carry =
    dialect === "sqlite"
      ? `INSERT OR IGNORE INTO chat_pauses (platform, chat_id, paused_at, pause_reason)
    SELECT platform, chat_id, paused_at, pause_reason FROM (
      ${paused}
    ) ORDER BY paused_at;`
      : `INSERT INTO chat_pauses (platform, chat_id, paused_at, pause_reason)
    SELECT DISTINCT ON (platform, chat_id) platform, chat_id, paused_at, pause_reason FROM (
      ${paused}
    ) AS paused ORDER BY platform, chat_id, paused_at;`;
  const drops = ["subscriptions", "watches", "digests"]
    .flatMap((table) => [
      `ALTER TABLE ${table} DROP COLUMN paused_at;`,
      `ALTER TABLE ${table} DROP COLUMN pause_reason;`,
    ])
    .join("\n  ");
  return `
  CREATE TABLE chat_pauses (
    platform TEXT NOT NULL,
    chat_id TEXT NOT NULL,
    paused_at ${time} NOT NULL,
    pause_reason TEXT NOT NULL,
    PRIMARY KEY (platform, chat_id)
  );
  ${carry}
  ${drops}
  `;
}
