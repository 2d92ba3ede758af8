/**
 * Gates (issue 29): a Discord role, or entry to a Telegram group, for the people whose proved
 * wallets (src/verify/) pass the gate's criteria, re-checked so that those who stop passing lose
 * it after a grace period. The contract between the gate service (src/gates/service.ts), the
 * stores, the /gate command and the platforms (Discord roles, Telegram join requests).
 */
import type { Delivery, GateTarget } from "../adapters/membership.ts";
import type { CountedWallets } from "../core/person-wallets.ts";
import type { Platform } from "../core/platform.ts";

// The platforms' side of gates is the adapters' contract (src/adapters/membership.ts): gates use
// it, no adapter imports gates.
export type {
  Delivery,
  GateMembership,
  GateTarget,
  MembershipResult,
} from "../adapters/membership.ts";

/**
 * Tells a person privately (the gates feature sends through the outbound module, Outbound.tell):
 * whether it was delivered. A `warning` before a grace (`first` as the grace starts, `again` at
 * the re-checks during it while it has not reached them) is tried again after the wait the
 * outbound module keeps for that person; other notices are tried once. Never throws.
 */
export type GateTell = (note: {
  platform: Platform;
  userId: string;
  text: string;
  /** Telegram: the private chat a join request opened. */
  userChatId?: string | undefined;
  warning?: "first" | "again";
  signal?: AbortSignal | undefined;
}) => Promise<Delivery>;

/** Holds at least `min` NFTs of a collection, the person's proved wallets added up. */
export interface HoldsCriterion {
  kind: "holds";
  chain: string;
  /** Checksummed contract address. */
  contract: string;
  /** The collection's name when known (shown, never used to decide). */
  name?: string;
  min: number;
}

/**
 * A wallet's behavior (the data service's daily label: BEHAVIOR_COLLECTOR…) in the set, or with
 * `not`, outside it. Passes when any one proved wallet passes.
 */
export interface BehaviorCriterion {
  kind: "behavior";
  chain: string;
  /** Behavior names as the service sends them, e.g. "BEHAVIOR_COLLECTOR". */
  behaviors: string[];
  not: boolean;
}

/**
 * Spend, the data service's financial-stats filters (endpoint 5), combined with AND; at least one
 * given. Passes when any one proved wallet passes them all.
 */
export interface SpendCriterion {
  kind: "spend";
  chain: string;
  /** NFT purchase volume at least, in the chain's currency (decimal string). */
  volumeGte?: string;
  /** Average purchase price at least (decimal string). */
  priceAvgGte?: string;
  /** Unique collections currently owned at least. */
  collectionsGte?: number;
  /** Last NFT purchase at most this many days ago. */
  lastPurchaseDaysLte?: number;
}

export type GateCriterion = HoldsCriterion | BehaviorCriterion | SpendCriterion;

/** Gates per chat (a Discord server counts as one chat: gates are per guild). */
export const MAX_GATES_PER_CHAT = 10;

export interface Gate {
  id: number;
  /** The chat the gate belongs to: the Discord guild id, or the Telegram group's chat id. */
  platform: Platform;
  chatId: string;
  target: GateTarget;
  criteria: GateCriterion[];
  createdBy: string;
  createdAt: number;
  /** Set when the platform refused (a lost right, the role moved above the bot's): why. */
  pausedAt?: number;
  pauseReason?: string;
}

export type NewGate = Omit<Gate, "id" | "pausedAt" | "pauseReason">;

/**
 * A person's standing with a gate. `granted`: has the role / is in the group; `grace`: stopped
 * passing at `failingSince`, keeps access until `graceUntil` and was told once (`toldAt`);
 * `pending`: a Telegram join request waiting for a proof (declined at `decideBy`).
 */
export interface GateMember {
  gateId: number;
  userId: string;
  status: "granted" | "grace" | "pending";
  since: number;
  failingSince?: number;
  graceUntil?: number;
  toldAt?: number;
  /** Telegram join request: the private chat the bot may message (5 minutes), and its deadline. */
  userChatId?: string;
  decideBy?: number;
  lastCheckedAt?: number;
}

/** One line of /gate log (its CSV): who got or lost what, when and why. */
export interface GateLogEntry {
  gateId: number;
  userId: string;
  at: number;
  action: "granted" | "approved" | "grace" | "kept" | "removed" | "declined" | "paused" | "failed";
  /** Plain words, e.g. "holds 0 of 1 Azuki (needs 1)". */
  reason: string;
}

/** What one criterion says about a person: pass, fail, or unknown (an upstream error). */
export interface CriterionResult {
  criterion: GateCriterion;
  outcome: "pass" | "fail" | "unknown";
  /** Plain words for /gate test and the log, e.g. "holds 2 of Azuki (needs 1)". */
  why: string;
}

/** All criteria together: pass when all pass; unknown when none fails but one is unknown. */
export interface GateVerdict {
  outcome: "pass" | "fail" | "unknown";
  results: CriterionResult[];
}

/**
 * A grant decided (the person passed) that the platform did not carry out for a transient reason
 * (a 5xx, a 429, no answer): kept, and tried again by the re-check job at `retryAt` until it goes
 * through, the platform refuses, or a day has passed since `since`.
 */
export interface OwedGrant {
  gateId: number;
  userId: string;
  /** What the log says once it goes through: "granted" (a role), "approved" (a join request). */
  action: "granted" | "approved";
  /** The verdict's words, for that log line. */
  reason: string;
  /** The first failed attempt. */
  since: number;
  attempts: number;
  retryAt: number;
  /** The last failure, in plain words. */
  lastError: string;
}

/** The gates and their members, on both stores (SQLite and PostgreSQL). */
export interface GateStore {
  /** Adds a gate unless the chat has `max` already. */
  add(
    gate: NewGate,
    max: number,
  ): Promise<{ kind: "added"; gate: Gate } | { kind: "full"; count: number }>;
  /** The chat's gates, oldest first (numbered 1… in that order by /gate list and /gate remove). */
  forChat(platform: Platform, chatId: string): Promise<Gate[]>;
  get(id: number): Promise<Gate | undefined>;
  /** Every gate of a platform (all when omitted), paused ones included. */
  all(platform?: Platform): Promise<Gate[]>;
  /** Removes a gate with its members and log; whether there was one. */
  remove(platform: Platform, chatId: string, id: number): Promise<boolean>;
  pause(id: number, reason: string, now: number): Promise<void>;
  /**
   * A chat got a new id (a Telegram group upgraded to a supergroup): its gates follow, their
   * Telegram target's chat id with them; members and log stay with their gates.
   */
  moveChat(platform: Platform, fromChatId: string, toChatId: string): Promise<void>;
  resume(id: number): Promise<void>;

  member(gateId: number, userId: string): Promise<GateMember | undefined>;
  /** Inserts or replaces the person's standing. */
  putMember(member: GateMember): Promise<void>;
  removeMember(gateId: number, userId: string): Promise<void>;
  /** Members of a gate (every status). */
  members(gateId: number): Promise<GateMember[]>;
  /** Every gate membership of one person on a platform. */
  memberships(platform: Platform, userId: string): Promise<GateMember[]>;
  /**
   * The members due for a re-check (lastCheckedAt before `checkedBefore`, or never), oldest check
   * first, across every gate: the re-check job's next batch.
   */
  due(checkedBefore: number, limit: number): Promise<GateMember[]>;
  /** Pending Telegram join requests whose deadline has passed. */
  expiredRequests(now: number): Promise<GateMember[]>;

  /** Inserts or replaces a grant owed (the gate removed meanwhile: nothing is written). */
  oweGrant(grant: OwedGrant): Promise<void>;
  owedGrant(gateId: number, userId: string): Promise<OwedGrant | undefined>;
  /** Owed grants of gates not paused whose retry time has come, soonest first. */
  owedDue(now: number, limit: number): Promise<OwedGrant[]>;
  dropOwed(gateId: number, userId: string): Promise<void>;
  /** Members in grace who were not warned (the message was not delivered). */
  unwarned(gateId: number): Promise<number>;

  log(entry: GateLogEntry): Promise<void>;
  /** The gate's log, newest first. */
  logOf(gateId: number, limit: number): Promise<GateLogEntry[]>;
  /** Counts for /healthz and metrics. */
  counts(): Promise<{
    gates: number;
    paused: number;
    granted: number;
    grace: number;
    pending: number;
    owed: number;
  }>;
}

/**
 * Reads what the data service says of a person's proved wallets against criteria. Never throws on
 * an upstream failure: that criterion is "unknown".
 */
export interface GateEvaluator {
  /** `signal` ends the reads (a stop, the round's lease): the criteria read are then unknown. */
  evaluate(
    criteria: readonly GateCriterion[],
    wallets: readonly string[] | CountedWallets,
    signal?: AbortSignal,
    /**
     * `explain`: a person reads the answer (/gate test), so a passing spend criterion says the
     * wallet's figures too (one more read); decisions leave it out.
     */
    how?: { explain?: boolean },
  ): Promise<GateVerdict>;
}
