import type { SendWait } from "./types.ts";

/** A send_waits row as both backends read it. */
export interface SendWaitRow {
  stream: string;
  platform: string;
  chat_id: string;
  attempts: number | string;
  wait_until: number | string;
  reason: string;
}

export const sendWaitFromRow = (row: SendWaitRow): SendWait => ({
  stream: row.stream,
  platform: row.platform,
  chatId: row.chat_id,
  attempts: Number(row.attempts),
  until: Number(row.wait_until),
  reason: row.reason,
});

/** How long a stored reason may be (a platform's description, never a secret). */
export const WAIT_REASON_MAX = 500;

/**
 * The outbound module's waits (issue 35): a chat not sent to again in one stream before
 * `wait_until`, with its failed tries counted, so a restart keeps both.
 */
export function sendWaitsMigration(dialect: "sqlite" | "postgres"): string {
  const time = dialect === "sqlite" ? "INTEGER" : "BIGINT";
  return `
  CREATE TABLE send_waits (
    stream TEXT NOT NULL,
    platform TEXT NOT NULL,
    chat_id TEXT NOT NULL,
    attempts INTEGER NOT NULL,
    wait_until ${time} NOT NULL,
    reason TEXT NOT NULL,
    PRIMARY KEY (stream, platform, chat_id)
  );
  `;
}
