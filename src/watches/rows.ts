import type { Watch, WatchKind } from "./types.ts";

/** A watches row as both backends read it (column names as in the table). */
export interface WatchRow {
  id: number;
  platform: string;
  chat_id: string;
  chain: string;
  kind: string;
  target: string;
  label: string;
  owners_percent: number | null;
  whales_points: number | null;
  state: string | null;
  pending: string | null;
  created_by: string;
  created_at: number;
  /** The chat's pause, joined in (rows-chat-pause.ts); absent from a row written back. */
  paused_at?: number | null;
  pause_reason?: string | null;
}

export function watchFromRow(row: WatchRow): Watch {
  return {
    id: Number(row.id),
    platform: row.platform,
    chatId: row.chat_id,
    chain: row.chain,
    kind: row.kind as WatchKind,
    target: row.target,
    label: row.label,
    ownersPercent: row.owners_percent === null ? null : Number(row.owners_percent),
    whalesPoints: row.whales_points === null ? null : Number(row.whales_points),
    state: row.state,
    pending: row.pending,
    createdBy: row.created_by,
    createdAt: Number(row.created_at),
    pausedAt: row.paused_at == null ? null : Number(row.paused_at),
    pauseReason: row.pause_reason ?? null,
  };
}
