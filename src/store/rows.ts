/**
 * What the SQLite and PostgreSQL stores share: the rows they read (the same column names in both
 * schemas), how a row becomes the interfaces' value, and how a button id is made. One place, so
 * the two backends cannot drift apart.
 */
import type {
  DueAlert,
  ReportKind,
  ReportStatus,
  SpamReport,
  Subscription,
  SubscriptionTypes,
} from "./types.ts";

export interface ReportRow {
  id: number;
  platform: string;
  chat_id: string;
  user_id: string;
  user_name: string;
  wallet: string;
  contract: string;
  token_id: string;
  kind: ReportKind;
  feedback: string | null;
  status: ReportStatus;
  upstream: string | null;
  attempts: number;
  next_attempt_at: number | null;
  created_at: number;
  updated_at: number;
}

export const toReport = (row: ReportRow): SpamReport => ({
  id: row.id,
  platform: row.platform,
  chatId: row.chat_id,
  userId: row.user_id,
  userName: row.user_name,
  wallet: row.wallet,
  contract: row.contract,
  tokenId: row.token_id,
  kind: row.kind,
  feedback: row.feedback,
  status: row.status,
  upstream: row.upstream,
  attempts: row.attempts,
  nextAttemptAt: row.next_attempt_at,
  createdAt: row.created_at,
  updatedAt: row.updated_at,
});

export interface SubscriptionRow {
  id: number;
  platform: string;
  chat_id: string;
  types: string;
  created_by: string;
  created_at: number;
  paused_at: number | null;
  pause_reason: string | null;
}

export const toSubscription = (row: SubscriptionRow): Subscription => ({
  id: row.id,
  platform: row.platform,
  chatId: row.chat_id,
  types: row.types as SubscriptionTypes,
  createdBy: row.created_by,
  createdAt: row.created_at,
  pausedAt: row.paused_at,
  pauseReason: row.pause_reason,
});

/**
 * A button's id: 16 bytes, base64url (22 characters, inside Discord's 100 and Telegram's 64
 * bytes): the reply's row number (5 bytes), the button's place in the reply (1) and the reply's
 * 80-bit random secret (10), checked in constant time. A guessed or stale id finds no row or
 * the wrong secret.
 */
export const SECRET_BYTES = 10;

export function encodeId(n: number, index: number, secret: Buffer): string {
  const bytes = Buffer.alloc(16);
  bytes.writeUIntBE(n, 0, 5);
  bytes[5] = index;
  secret.copy(bytes, 6);
  return bytes.toString("base64url");
}

export function decodeId(id: string): { n: number; index: number; secret: Buffer } | undefined {
  const bytes = Buffer.from(id, "base64url");
  if (bytes.length !== 16) return undefined;
  return { n: bytes.readUIntBE(0, 5), index: bytes[5] ?? 0, secret: bytes.subarray(6) };
}

export interface DueRow {
  id: number;
  subscription_id: number;
  platform: string;
  chat_id: string;
  attempts: number;
  note: string | null;
  address: string;
  name: string;
  types: string;
  minter: string | null;
  tx_hash: string | null;
  minted_at: string | null;
}

export const toAlert = (row: DueRow): DueAlert => ({
  id: row.id,
  subscriptionId: row.subscription_id,
  platform: row.platform,
  chatId: row.chat_id,
  attempts: row.attempts,
  note: row.note,
  contract: {
    address: row.address,
    name: row.name,
    types: JSON.parse(row.types) as string[],
    minter: row.minter ?? undefined,
    txHash: row.tx_hash ?? undefined,
    mintedAt: row.minted_at ?? undefined,
  },
});
