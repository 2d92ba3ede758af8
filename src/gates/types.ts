/**
 * Gates (issue 29): a Discord role, or entry to a Telegram group, for the people whose proved
 * wallets (src/verify/) pass the gate's criteria, re-checked so that those who stop passing lose
 * it after a grace period. The contract between the gate service (src/gates/service.ts), the
 * stores, the /gate command and the platforms (Discord roles, Telegram join requests).
 */
import type { Platform } from "../core/command.ts";

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

/** What a gate gives: a Discord role in a server, or entry to a Telegram group. */
export type GateTarget =
  | { platform: "discord"; guildId: string; roleId: string; roleName: string }
  | { platform: "telegram"; chatId: string; title: string; inviteLink?: string };

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

/** A platform's answer to a grant or a removal. */
export type MembershipResult =
  | { ok: true }
  /** The person is not (or no longer) in the server/group: nothing to do. */
  | { ok: false; kind: "gone"; reason: string }
  /** The platform refused the bot (lost right, role above the bot's): the gate pauses. */
  | { ok: false; kind: "refused"; reason: string }
  /** A network error, a 5xx, a rate limit: tried again at the next check. */
  | { ok: false; kind: "transient"; reason: string };

/**
 * Whether a private message reached the person: true; "closed" when they do not take the bot's
 * messages (direct messages turned off, the bot blocked or never started); false when it failed
 * otherwise (a network error, a 5xx). Compare with `=== true`: "closed" is not delivered.
 */
export type Delivery = boolean | "closed";

/**
 * What a platform does for gates. Discord: roles through REST (both modes). Telegram: the group's
 * join-request link, approve / decline, and removal as ban then unban.
 */
export interface GateMembership {
  readonly platform: Platform;
  /**
   * Whether the bot can enforce this target now; when not, plain words saying how to fix it
   * (Manage Roles, the role's place under the bot's highest role, the admin rights). For
   * Telegram, makes the join-request invite link and returns it, named after `hint.gateNumber`
   * when given (the number /gate list will show), so managers can tell the links apart.
   */
  check(
    target: GateTarget,
    hint?: { gateNumber?: number },
    signal?: AbortSignal,
  ): Promise<{ ok: true; target: GateTarget } | { ok: false; reason: string }>;
  /**
   * Whether a person may add (or remove) a gate giving this target, by the platform's own rule for
   * people: the bot must never do for someone what they could not do by hand. Discord: the owner,
   * or Manage Roles (or Administrator) and a highest role above the gate's (issue 34). Absent
   * (Telegram): the chat's managers may (Invocation.canManageChannel, the group's admins).
   */
  mayGive?(
    target: GateTarget,
    userId: string,
    purpose: "add" | "remove",
  ): Promise<{ ok: true } | { ok: false; reason: string }>;
  /**
   * Gives the target. Discord checks the role again first: one that gained an elevated permission
   * since the gate was added is refused (the gate pauses), never given. Every call takes the
   * re-check round's signal (its stop, its lease, the call's timeout): an aborted call ends at
   * once, as a transient failure.
   */
  grant(target: GateTarget, userId: string, signal?: AbortSignal): Promise<MembershipResult>;
  revoke(target: GateTarget, userId: string, signal?: AbortSignal): Promise<MembershipResult>;
  /** Telegram only: declines a pending join request. */
  decline?(target: GateTarget, userId: string, signal?: AbortSignal): Promise<MembershipResult>;
  /**
   * Tells the person privately (a direct message; a Telegram join request's user_chat_id).
   * Whether it was delivered (see Delivery); never throws.
   */
  tell(userId: string, text: string, userChatId?: string, signal?: AbortSignal): Promise<Delivery>;
  /**
   * Added by gservice. Telegram: the address that opens the person's private chat with the bot
   * and runs /verify there (t.me/<bot>?start=verify_<chain>), put in the join-request message.
   */
  verifyLink?(chain: string): string;
  /**
   * Added by gservice. Discord: the server a channel belongs to (undefined for a direct message),
   * so a wallet proved from a /verify run in a channel is checked against that server's gates.
   */
  guildOf?(channelId: string): Promise<string | undefined>;
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
    wallets: readonly string[],
    signal?: AbortSignal,
  ): Promise<GateVerdict>;
}
