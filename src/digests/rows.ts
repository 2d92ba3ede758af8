/** The digests' rows as their store reads them. */
import type { Digest, DigestRun } from "./types.ts";

export interface DigestRow {
  id: number;
  platform: string;
  chat_id: string;
  chain: string;
  cadence: Digest["cadence"];
  weekday: number | null;
  time: string;
  zone: string;
  metric: string;
  period: string;
  created_by: string;
  created_at: number;
  /** The chat's pause, joined in (rows-chat-pause.ts); absent from a row written back. */
  paused_at?: number | null;
  pause_reason?: string | null;
}

export const toDigest = (row: DigestRow): Digest => ({
  id: row.id,
  platform: row.platform,
  chatId: row.chat_id,
  chain: row.chain,
  cadence: row.cadence,
  weekday: row.weekday,
  time: row.time,
  zone: row.zone,
  metric: row.metric,
  period: row.period,
  createdBy: row.created_by,
  createdAt: row.created_at,
  pausedAt: row.paused_at == null ? null : Number(row.paused_at),
  pauseReason: row.pause_reason ?? null,
});

export interface DigestRunRow {
  digest_id: number;
  slot: number;
  status: DigestRun["status"];
  attempts: number;
  claimed_by: string | null;
  claimed_until: number | null;
  last_error: string | null;
  finished_at: number | null;
}

export const toDigestRun = (row: DigestRunRow): DigestRun => ({
  digestId: row.digest_id,
  slot: row.slot,
  status: row.status,
  attempts: row.attempts,
  claimedBy: row.claimed_by,
  claimedUntil: row.claimed_until,
  lastError: row.last_error,
  finishedAt: row.finished_at,
});
