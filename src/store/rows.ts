/**
 * The kernel's stores' rows as both databases give them (the same column names in both schemas),
 * how a row becomes the interfaces' value, and how a button id is made.
 */
import { timingSafeEqual } from "node:crypto";
import type { Address } from "../api/validate.ts";
import type { CollectionSource, IndexedCollection } from "../core/known-collections.ts";
import type { ButtonAction } from "../core/reply.ts";
import type { ReportKind, ReportStatus, SpamReport } from "./types.ts";

export interface ReportRow {
  id: number;
  chain: string;
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
  chain: row.chain,
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

export interface CollectionRow {
  address: string;
  name: string;
  symbol: string;
  top_rank: number | null;
  source: string;
  seen_at: number;
}

export const toCollection = (row: CollectionRow): IndexedCollection => ({
  address: row.address as Address,
  name: row.name,
  symbol: row.symbol,
  rank: row.top_rank ?? undefined,
  source: row.source as CollectionSource,
  seenAt: row.seen_at,
});

/** A reply's stored buttons: one row, its secret and its actions (JSON) in button order. */
export interface ReplyRow {
  secret: Buffer;
  platform: string;
  chat_id: string;
  user_id: string;
  actions: string;
  expires_at: number;
}

/** Whether a decoded id carries its reply's secret (compared in constant time). */
export function sameSecret(row: ReplyRow, key: { secret: Buffer }): boolean {
  return row.secret.length === key.secret.length && timingSafeEqual(row.secret, key.secret);
}

/** The button at `index` of a reply's row, if it has one. */
export function actionAt(row: ReplyRow, index: number): ButtonAction | undefined {
  return (JSON.parse(row.actions) as ButtonAction[])[index];
}
