/** The alerts' rows as their store reads them, and how each becomes the store's value. */
import { parseRules } from "../rules.ts";
import type {
  BadActorRule,
  DueAlert,
  NewContract,
  Subscription,
  SubscriptionTypes,
} from "./types.ts";

export interface SubscriptionRow {
  id: number;
  platform: string;
  chat_id: string;
  chain: string;
  types: string;
  bad_actors: string;
  rules?: string | null;
  created_by: string;
  created_at: number;
  /** The chat's pause, joined in (rows-chat-pause.ts); absent from a row written back. */
  paused_at?: number | null;
  pause_reason?: string | null;
}

export const toSubscription = (row: SubscriptionRow): Subscription => ({
  id: row.id,
  platform: row.platform,
  chatId: row.chat_id,
  chain: row.chain,
  types: row.types as SubscriptionTypes,
  badActors: (row.bad_actors === "show" ? "show" : "hide") as BadActorRule,
  rules: parseRules(row.rules),
  createdBy: row.created_by,
  createdAt: row.created_at,
  pausedAt: row.paused_at == null ? null : Number(row.paused_at),
  pauseReason: row.pause_reason ?? null,
});

export interface DueRow {
  id: number;
  subscription_id: number;
  platform: string;
  chat_id: string;
  chain: string;
  attempts: number;
  note: string | null;
  address: string;
  name: string;
  types: string;
  minter: string | null;
  tx_hash: string | null;
  minted_at: string | null;
  minter_behavior: string | null;
  held?: number | null;
}

export type ContractRow = Pick<
  DueRow,
  "address" | "name" | "types" | "minter" | "tx_hash" | "minted_at" | "minter_behavior"
>;

/** A seen contract's row as a NewContract. */
export const toContract = (row: ContractRow): NewContract => ({
  address: row.address,
  name: row.name,
  types: JSON.parse(row.types) as string[],
  minter: row.minter ?? undefined,
  txHash: row.tx_hash ?? undefined,
  mintedAt: row.minted_at ?? undefined,
  minterBehavior: row.minter_behavior ?? undefined,
});

export const toAlert = (row: DueRow): DueAlert => ({
  id: row.id,
  subscriptionId: row.subscription_id,
  platform: row.platform,
  chatId: row.chat_id,
  chain: row.chain,
  attempts: row.attempts,
  note: row.note,
  ...(row.held ? { held: true } : {}),
  contract: toContract(row),
});
