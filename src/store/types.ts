/**
 * The durable state of the bot, one async interface per aggregate. Callers await every method, so
 * another backend (PostgreSQL, shared by several instances) can stand in for SQLite; every backend
 * passes the contract suites under test/store/. What must happen at once is one method, one
 * transaction. A feature's own store (the alerts', the gates') lives in its folder, over `sql`.
 */

import type { ActionStore, NewAction, StoredAction } from "../core/actions.ts";
import type {
  ChainCollectionIndexStore,
  CollectionIndexStore,
  IndexedCollection,
} from "../core/known-collections.ts";
import type { SqlLayer } from "./sql.ts";
import type { DelegationStore, ReportStore, VerifyLinkStore, WalletStore } from "./types-people.ts";

// Wallets, verify links and reports: src/store/types-people.ts.
export type {
  Delegation,
  DelegationStore,
  KeptWallet,
  LinkedWallet,
  LinkedWalletStore,
  NewReport,
  PersonDelegation,
  PersonWallet,
  ProvedWallet,
  ReportKey,
  ReportKind,
  ReportStatus,
  ReportStore,
  SpamReport,
  VerifyLinkRow,
  VerifyLinkStore,
  WalletKind,
  WalletStore,
} from "./types-people.ts";
export { MAX_WALLETS_PER_PERSON } from "./types-people.ts";
export type {
  ActionStore,
  ChainCollectionIndexStore,
  CollectionIndexStore,
  IndexedCollection,
  NewAction,
  StoredAction,
};

// Key-value and lease ----------------------------------------------------------------------------

/** Small named values: each chain's poller cursor and pending gap note. */
export interface KeyValueStore {
  get(key: string): Promise<string | undefined>;
  set(key: string, value: string): Promise<void>;
  delete(key: string): Promise<void>;
}

/**
 * A lease so that only one process polls a chain (one lease per chain). It is taken when free or expired, and renewed by its
 * holder; another process sees who holds it.
 */
export interface LeaseStore {
  /**
   * Takes or renews the lease; returns the current holder. `isDead` may say that the holder is
   * known to be gone (a crashed process on this host), so a restart need not wait for expiry.
   */
  acquire(
    name: string,
    holder: string,
    ttlMs: number,
    now: number,
    isDead?: (holder: string) => boolean,
  ): Promise<string>;
  release(name: string, holder: string): Promise<void>;
}

// Platform update ids ----------------------------------------------------------------------------

/** Periodic upkeep of a store (see Store.chores): one round every `everyMs`. */
export interface StoreChore {
  name: string;
  everyMs: number;
  /**
   * Started with the bot even while the store is not ready (`waiting()`): the chore that makes it
   * ready (SQLite's migrations waiting for room). The others start once it is.
   */
  first?: boolean;
  /**
   * One round: false when it could not be done for a reason the store already says (a full
   * disk: `diskFull()`); it throws on any other failure.
   */
  run(): boolean;
}

/**
 * Which platform updates were already taken, per source (one bot token's ids). Telegram
 * delivers at least once: a webhook it thinks timed out, or polling restarted before its offset
 * was confirmed, brings the same update again.
 */
export interface UpdateStore {
  /**
   * True the first time (source, update id) is offered, false for every later offer. Ids are
   * 64-bit: a Discord interaction id (a snowflake) is a bigint, a double would merge neighbours.
   */
  firstSeen(source: string, updateId: number | bigint, now: number): Promise<boolean>;
  /** Forgets the source's ids seen before `before` (each source has its own window); how many. */
  prune(source: string, before: number): Promise<number>;
}

/** One source's view of the update store, as an adapter uses it. */
export interface UpdateDedup {
  /** True the first time an update id is offered, false for every later delivery of it. */
  firstSeen(updateId: number | bigint): Promise<boolean>;
}

// Chat settings ---------------------------------------------------------------------------------

/** What the people who manage a chat chose for it. */
export interface ChatSettings {
  /** The chain commands read when they name none (undefined: the first configured chain). */
  chain: string | undefined;
}

/** Per-chat settings (/settings), keyed like subscriptions by platform and chat id. */
export interface ChatSettingsStore {
  /** The chat's settings; a chat never set has every setting undefined. */
  get(platform: string, chatId: string): Promise<ChatSettings>;
  /** Sets (or, with undefined, clears) the chat's default chain. */
  setChain(platform: string, chatId: string, chain: string | undefined, now: number): Promise<void>;
  /**
   * A chat got a new id (a Telegram group upgraded to a supergroup): its settings follow, unless
   * the new chat has settings of its own, which are kept.
   */
  moveChat(platform: string, fromChatId: string, toChatId: string): Promise<void>;
}

// Chat pauses ------------------------------------------------------------------------------------

/** A chat that refused the bot, since when and the platform's reason. */
export interface ChatPause {
  platform: string;
  chatId: string;
  pausedAt: number;
  reason: string;
}

/**
 * Chats that refuse the bot (kicked, blocked, channel gone, no access). The pause is the chat's:
 * while it lasts, nothing is done for that chat by any feature (no alert queued or sent, no
 * digest, no watch read from the data service), and the pause with its reason shows on each
 * feature's row (pausedAt, pauseReason). Using the bot in the chat again lifts it.
 */
export interface ChatPauseStore {
  /** Pauses the chat; a chat paused already keeps its first time and reason. Whether it was new. */
  pause(platform: string, chatId: string, reason: string, now: number): Promise<boolean>;
  /** The chat works again; whether it was paused. */
  resume(platform: string, chatId: string): Promise<boolean>;
  /** The chat's pause, if it is paused. */
  get(platform: string, chatId: string): Promise<ChatPause | undefined>;
}

// Send waits ------------------------------------------------------------------------------------

/**
 * A chat the outbound module waits on for one kind of post (its `stream`, "watches"), after a
 * failed send: not sent to again before `until`, with the failed tries counted so far. Kept for
 * the senders that have no row of their own to count tries in (the alerts' outbox rows and the
 * digests' runs count theirs): a restart keeps the wait and the count.
 */
export interface SendWait {
  stream: string;
  platform: string;
  chatId: string;
  /** Failed tries counted (a rate limit counts none). */
  attempts: number;
  /** Not tried again before (epoch ms). */
  until: number;
  /** Why the last try failed. */
  reason: string;
}

export interface SendWaitStore {
  /** Every chat waiting in `stream`. */
  all(stream: string): Promise<SendWait[]>;
  /** One chat's (or person's) wait in `stream`, if any. */
  get(stream: string, platform: string, chatId: string): Promise<SendWait | undefined>;
  /** Records (or replaces) the chat's wait in its stream. */
  set(wait: SendWait): Promise<void>;
  /** The chat's send went through (or it paused): no wait. */
  clear(stream: string, platform: string, chatId: string): Promise<void>;
  /** A chat got a new id: its waits follow (a wait already under the new id is kept). */
  moveChat(platform: string, fromChatId: string, toChatId: string): Promise<void>;
}

/**
 * The rows the kernel keeps per chat that follow it to a new id: its buttons (so they keep
 * working there) and its report history.
 */
export interface ChatRowsStore {
  moveChat(platform: string, fromChatId: string, toChatId: string): Promise<void>;
}

// The whole store --------------------------------------------------------------------------------

export interface Store {
  actions: ActionStore;
  reports: ReportStore;
  wallets: WalletStore;
  verifyLinks: VerifyLinkStore;
  /** Delegations read from delegate.xyz's registry (issue 37). */
  delegations: DelegationStore;
  collections: ChainCollectionIndexStore;
  kv: KeyValueStore;
  leases: LeaseStore;
  updates: UpdateStore;
  chatSettings: ChatSettingsStore;
  /** What else of a chat follows it to a new id (buttons, reports). */
  chatRows: ChatRowsStore;
  /** Chats that refuse the bot: every feature's work for them waits (issue 34). */
  chatPauses: ChatPauseStore;
  /** The outbound module's waits after a failed send, for senders without rows of their own. */
  sendWaits: SendWaitStore;
  /**
   * The query layer the features' own stores and migrations are written in, once for both
   * databases (src/store/sql.ts).
   */
  sql: SqlLayer;
  /** Whether the store answers now. */
  healthy(): Promise<boolean>;
  /**
   * Why writes fail for lack of room (a full disk), or undefined. Reads still answer meanwhile;
   * a store on a server of its own (PostgreSQL) has none to say.
   */
  diskFull?(): string | undefined;
  /**
   * Why the store is not ready for the background jobs (its migrations wait for room on a full
   * disk: issue 34), or undefined when it is; `ready()` resolves once it is. Reads (the commands
   * that need no write) answer meanwhile.
   */
  waiting?(): string | undefined;
  ready?(): Promise<void>;
  /**
   * Upkeep the store needs on a timer (SQLite: the checkpoint of its write-ahead log); the bot
   * runs each as a job, with the others.
   */
  chores?(): readonly StoreChore[];
  /** Closes the store; waits for writes under way. */
  close(): Promise<void>;
}
