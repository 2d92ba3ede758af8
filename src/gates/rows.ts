import type { Platform } from "../core/command.ts";
import type { Gate, GateLogEntry, GateMember, GateTarget, OwedGrant } from "./types.ts";

/** Times and ids as either backend returns them (numbers; a string would be a BIGINT unparsed). */
type Num = number | string;

/** A gates row as both backends read it (column names as in the table). */
export interface GateRow {
  id: Num;
  platform: string;
  chat_id: string;
  target: string;
  criteria: string;
  created_by: string;
  created_at: Num;
  paused_at: Num | null;
  pause_reason: string | null;
}

export function gateFromRow(row: GateRow): Gate {
  const gate: Gate = {
    id: Number(row.id),
    platform: row.platform as Platform,
    chatId: row.chat_id,
    target: JSON.parse(row.target),
    criteria: JSON.parse(row.criteria),
    createdBy: row.created_by,
    createdAt: Number(row.created_at),
  };
  if (row.paused_at !== null) gate.pausedAt = Number(row.paused_at);
  if (row.pause_reason !== null) gate.pauseReason = row.pause_reason;
  return gate;
}

export interface GateMemberRow {
  gate_id: Num;
  user_id: string;
  status: string;
  since: Num;
  failing_since: Num | null;
  grace_until: Num | null;
  told_at: Num | null;
  user_chat_id: string | null;
  decide_by: Num | null;
  last_checked_at: Num | null;
}

/** The columns of gate_members in the order memberValues gives them. */
export const MEMBER_COLUMNS = [
  "gate_id",
  "user_id",
  "status",
  "since",
  "failing_since",
  "grace_until",
  "told_at",
  "user_chat_id",
  "decide_by",
  "last_checked_at",
] as const;

export function memberValues(m: GateMember): (string | number | null)[] {
  return [
    m.gateId,
    m.userId,
    m.status,
    m.since,
    m.failingSince ?? null,
    m.graceUntil ?? null,
    m.toldAt ?? null,
    m.userChatId ?? null,
    m.decideBy ?? null,
    m.lastCheckedAt ?? null,
  ];
}

export function memberFromRow(row: GateMemberRow): GateMember {
  const member: GateMember = {
    gateId: Number(row.gate_id),
    userId: row.user_id,
    status: row.status as GateMember["status"],
    since: Number(row.since),
  };
  if (row.failing_since !== null) member.failingSince = Number(row.failing_since);
  if (row.grace_until !== null) member.graceUntil = Number(row.grace_until);
  if (row.told_at !== null) member.toldAt = Number(row.told_at);
  if (row.user_chat_id !== null) member.userChatId = row.user_chat_id;
  if (row.decide_by !== null) member.decideBy = Number(row.decide_by);
  if (row.last_checked_at !== null) member.lastCheckedAt = Number(row.last_checked_at);
  return member;
}

export interface GateLogRow {
  gate_id: Num;
  user_id: string;
  at: Num;
  action: string;
  reason: string;
}

export function logFromRow(row: GateLogRow): GateLogEntry {
  return {
    gateId: Number(row.gate_id),
    userId: row.user_id,
    at: Number(row.at),
    action: row.action as GateLogEntry["action"],
    reason: row.reason,
  };
}

/** A gate's target once its chat got a new id: a Telegram group's target names the chat too. */
export function movedTarget(target: GateTarget, fromChatId: string, toChatId: string): GateTarget {
  return target.platform === "telegram" && target.chatId === fromChatId
    ? { ...target, chatId: toChatId }
    : target;
}

/** The columns of gate_grants in the order owedValues gives them. */
export const OWED_COLUMNS = [
  "gate_id",
  "user_id",
  "action",
  "reason",
  "since",
  "attempts",
  "retry_at",
  "last_error",
] as const;

export interface OwedGrantRow {
  gate_id: Num;
  user_id: string;
  action: string;
  reason: string;
  since: Num;
  attempts: Num;
  retry_at: Num;
  last_error: string;
}

export function owedValues(g: OwedGrant): (string | number)[] {
  return [g.gateId, g.userId, g.action, g.reason, g.since, g.attempts, g.retryAt, g.lastError];
}

export function owedFromRow(row: OwedGrantRow): OwedGrant {
  return {
    gateId: Number(row.gate_id),
    userId: row.user_id,
    action: row.action as OwedGrant["action"],
    reason: row.reason,
    since: Number(row.since),
    attempts: Number(row.attempts),
    retryAt: Number(row.retry_at),
    lastError: row.last_error,
  };
}
