/**
 * The durable state of the bot, one async interface per aggregate. Callers await every method, so
 * another backend (PostgreSQL, shared by several instances) can stand in for SQLite; every backend
 * passes the contract suites under test/store/. What must happen at once (a batch of new contracts
 * with their alerts and the cursor) is one method, one transaction.
 */

import type { AlertRules } from "../alerts/rules-shape.ts";
import type { ActionStore, NewAction, StoredAction } from "../core/actions.ts";
import type {
  ChainCollectionIndexStore,
  CollectionIndexStore,
  IndexedCollection,
} from "../core/known-collections.ts";
import type { GateStore } from "../gates/types.ts";
import type { SqlLayer } from "./sql.ts";

export type {
  ActionStore,
  ChainCollectionIndexStore,
  CollectionIndexStore,
  IndexedCollection,
  NewAction,
  StoredAction,
};

// Subscriptions ---------------------------------------------------------------------------------

export type SubscriptionTypes = "all" | "erc721" | "erc1155";

/**
 * What a channel does with contracts whose minter is labelled BEHAVIOR_BADACTOR: not posted
 * (the default), or posted marked as likely spam.
 */
export type BadActorRule = "hide" | "show";

export interface Subscription {
  id: number;
  platform: string;
  chatId: string;
  /** The chain whose new collections it posts (a chat may subscribe to several). */
  chain: string;
  types: SubscriptionTypes;
  /** Contracts minted by bad actors: hidden (default) or shown marked as likely spam. */
  badActors: BadActorRule;
  /** The channel's rules (/alerts): filters, quiet hours, digest mode; {} when none. */
  rules: AlertRules;
  createdBy: string;
  createdAt: number;
  /** When its chat refused the bot (null: not paused; the chat's pause, see ChatPauseStore). */
  pausedAt: number | null;
  /** Why, as the platform said it: shown in /subscriptions. */
  pauseReason: string | null;
}

/**
 * Which channels get new-collection alerts of which chain, and which are paused (and why). A
 * chat has at most one subscription per chain.
 */
export interface SubscriptionStore {
  /**
   * Subscribes a chat to a chain (once: a second call updates the types and lifts any pause).
   * `badActors` given sets the rule; not given, a new subscription hides them and an existing one
   * keeps its rule.
   */
  upsert(input: {
    platform: string;
    chatId: string;
    chain: string;
    types: SubscriptionTypes;
    badActors?: BadActorRule | undefined;
    createdBy: string;
    now: number;
  }): Promise<{ subscription: Subscription; created: boolean }>;
  /** The chat's subscription to `chain`; without a chain, its oldest subscription of any chain. */
  find(platform: string, chatId: string, chain?: string): Promise<Subscription | undefined>;
  /** The chat's subscriptions, one per chain, oldest first. */
  forChat(platform: string, chatId: string): Promise<Subscription[]>;
  /**
   * Removes the chat's subscription to `chain` (without a chain: all of them) and their
   * undelivered alerts; whether there was one.
   */
  remove(platform: string, chatId: string, chain?: string): Promise<boolean>;
  /**
   * A chat got a new id (a Telegram group upgraded to a supergroup): its subscriptions follow,
   * and with them the queued alerts, its buttons, its report history and its scheduled digests. Where the new chat
   * already has a subscription to the same chain, that one is kept and the old one's alerts join
   * it, dropping those it already has queued. Returns the new chat's oldest subscription, if any.
   */
  moveChat(
    platform: string,
    fromChatId: string,
    toChatId: string,
  ): Promise<Subscription | undefined>;
  /**
   * The subscription's chat refuses the bot: the chat pauses, every feature of it
   * (ChatPauseStore.pause; an earlier pause is kept).
   */
  pause(id: number, reason: string, now: number): Promise<void>;
  /** Replaces the subscription's rules (/alerts); alerts already queued keep their due time. */
  setRules(id: number, rules: AlertRules): Promise<void>;
  /** Subscriptions not paused, oldest first. */
  active(): Promise<Subscription[]>;
  all(): Promise<Subscription[]>;
}

// Alert outbox (with the contracts seen and the poller's cursor) ---------------------------------

export interface NewContract {
  address: string;
  name: string;
  types: string[];
  minter: string | undefined;
  txHash: string | undefined;
  mintedAt: string | undefined;
  /**
   * The minter's behavior label (endpoint 1) when the poller looked it up: a BEHAVIOR_* value, or
   * "NOT_BADACTOR" when only that much is known; undefined when unknown. Stored with the contract,
   * so every channel's alert shows the same and it is never looked up again.
   */
  minterBehavior?: string | undefined;
}

export interface DueAlert {
  id: number;
  subscriptionId: number;
  platform: string;
  chatId: string;
  /** The chain the contract was minted on (the subscription's). */
  chain: string;
  attempts: number;
  note: string | null;
  /** Held by the channel's rules (quiet hours, digest mode): sent with the others as one digest. */
  held?: boolean;
  contract: NewContract;
}

/** A poll's new contracts on one chain, whom to alert, and where the cursor moves: recorded at once. */
export interface NewBatch {
  /** The chain the contracts were minted on: contracts are seen, and alerts owed, per chain. */
  chain: string;
  contracts: NewContract[];
  /** Those to alert (of this chain), or "active": every active subscription to this chain. */
  subscriptions:
    | readonly (Pick<Subscription, "id" | "types"> &
        Partial<Pick<Subscription, "badActors" | "rules">>)[]
    | "active";
  cursorKey: string;
  cursor: string;
  note: string | null;
  now: number;
}

/**
 * New contracts and the alerts owed for them. Recording a batch is one transaction (insert the
 * unseen contracts, enqueue one row per matching subscription, move the cursor), and marking an
 * alert delivered is another, so a crash between them loses nothing.
 */
export interface OutboxStore {
  /**
   * `subscriptions`: those to enqueue for, or "active" for every subscription to the batch's chain
   * not paused, read inside the same transaction (a chat subscribing meanwhile is either in the batch or after it).
   */
  record(input: NewBatch): Promise<{ fresh: NewContract[]; enqueued: number; hidden: number }>;
  /**
   * Of `addresses` (any case), those not yet seen on `chain`, lower-case: the poller looks up the
   * minters of these only.
   */
  unseen(chain: string, addresses: readonly string[]): Promise<string[]>;
  /**
   * Drops alerts suppressed in their channel (members reported the contract as spam): out of the
   * outbox and into suppressed_alerts, at once. `noted`: the channel was told why.
   */
  suppress(
    alerts: readonly DueAlert[],
    input: { reports: number; noted: boolean; now: number },
  ): Promise<void>;
  /**
   * Of the alerts, those whose channel was already told that their contract is suppressed there
   * (the note is posted once per channel and contract, across restarts): their ids.
   */
  alreadyNoted(alerts: readonly DueAlert[]): Promise<Set<number>>;
  /**
   * Alerts due now for active subscriptions (of one platform when given), oldest first, claimed
   * or not: a read, for inspection. Delivery claims instead.
   */
  due(now: number, limit: number, platform?: string): Promise<DueAlert[]>;
  /**
   * Claims up to `limit` alerts due at `now` for `holder`, like due(), skipping those another
   * holder claimed less than its `claimMs` ago; those returned are claimed for `claimMs`.
   * delivered(), retryLater() and giveUp() end a claim. Two claimers at once never get the same
   * alert; a claimer that dies leaves its alerts to be claimed again once the claim expires (an
   * alert it had sent but not yet marked is then sent again: one duplicate per kill at most).
   * A backend shared by several hosts may time claims by its own clock and ignore `now` there.
   * `isDead` may say that a holder is known to be gone (a crashed process on this host): its
   * claims are free at once, as its lease is.
   */
  claim(input: {
    now: number;
    limit: number;
    platform?: string | undefined;
    holder: string;
    claimMs: number;
    isDead?: ((holder: string) => boolean) | undefined;
  }): Promise<DueAlert[]>;
  /** Removes delivered alerts from the outbox and records them, at once. */
  delivered(alerts: readonly DueAlert[], now: number): Promise<void>;
  /**
   * Tries again later (ending the claim); `countAttempt` is false for rate limits (not the alert's
   * fault).
   */
  retryLater(
    alerts: readonly DueAlert[],
    dueAt: number,
    error: string,
    countAttempt: boolean,
  ): Promise<void>;
  /** Gives up on alerts: out of the outbox and recorded as failed with their last error, at once. */
  giveUp(alerts: readonly DueAlert[], error: string, now: number): Promise<void>;
  /** Contracts first seen on `chain` since `since` (ms), oldest first (/alerts test). */
  seenSince(chain: string, since: number, limit: number): Promise<NewContract[]>;
  /** Alerts waiting in the outbox. */
  depth(): Promise<number>;
  /** Alerts delivered since the store was created. */
  deliveredCount(): Promise<number>;
}

// Reports and linked wallets ---------------------------------------------------------------------

export interface LinkedWallet {
  address: string;
  /** What the person typed: the ENS name or the address. */
  label: string;
  linkedAt: number;
}

/** At most this many wallets per person (issue 27). */
export const MAX_WALLETS_PER_PERSON = 10;

/** One of a person's wallets: proved by a signed message, or linked before proofs ("not proved"). */
export interface PersonWallet {
  /** Lower-case. */
  address: string;
  /** The chain it was proved on ("" for a wallet linked before proofs: it names none). */
  chain: string;
  label: string;
  /** When it was proved (epoch ms); undefined: linked on the person's word, not proved. */
  provedAt: number | undefined;
  linkedAt: number;
}

/** A proved wallet with its proof: the EIP-4361 message and the signature over it. */
export interface ProvedWallet {
  platform: string;
  userId: string;
  /** Lower-case. */
  address: string;
  chain: string;
  label: string;
  message: string;
  signature: string;
  provedAt: number;
}

/** What keeping a proved wallet did: added or updated it, and the accounts it was moved from. */
export interface KeptWallet {
  kept: "added" | "updated";
  /** The platform's other accounts that held it as proved (at most one): they hold it no more. */
  movedFrom: string[];
}

/**
 * A person's wallets (up to MAX_WALLETS_PER_PERSON), and the one their spam reports are made for.
 * On each platform a proved wallet is one person's (issue 34): a proof by another account of the
 * platform moves it, since that account holds the key now. Accounts of other platforms (the same
 * person's Telegram and Discord) may each hold it.
 */
export interface WalletStore {
  /** The person's wallets, the most recently proved first, then the not proved ones. */
  list(platform: string, userId: string): Promise<PersonWallet[]>;
  /**
   * Keeps a proved wallet with its proof (a wallet already there, proved or not, is replaced),
   * moving it from the platform's account that held it: "full" when the person has
   * MAX_WALLETS_PER_PERSON others, and then nothing changes.
   */
  addProved(wallet: ProvedWallet): Promise<"added" | "updated" | "full">;
  /** Forgets one wallet (an address) or all of them; how many were forgotten. */
  remove(platform: string, userId: string, address: string | "all"): Promise<number>;
  /** The wallet spam reports are made for: the most recently proved one (never a not proved). */
  reportWallet(platform: string, userId: string): Promise<PersonWallet | undefined>;
  /**
   * Before proofs (/link): keeps a wallet on the person's word, as not proved, replacing the
   * person's other not proved one. Kept while /link still calls it.
   */
  link(
    platform: string,
    userId: string,
    address: string,
    label: string,
    now: number,
  ): Promise<void>;
  /** Before proofs (/unlink): forgets every wallet of the person; whether there was one. */
  unlink(platform: string, userId: string): Promise<boolean>;
  /** Before proofs: the most recently linked or proved wallet. Reports use reportWallet. */
  find(platform: string, userId: string): Promise<LinkedWallet | undefined>;
}

/** @deprecated the wallet store's former name. */
export type LinkedWalletStore = WalletStore;

/**
 * A /verify link as stored: the token itself never is, only its SHA-256 (a copy of the database
 * cannot be used to prove a wallet for someone).
 */
export interface VerifyLinkRow {
  tokenHash: string;
  platform: string;
  userId: string;
  chatId: string;
  /** The adapter's opaque way to confirm privately; dropped when the link is used or expires. */
  confirm: string | undefined;
  chain: string;
  createdAt: number;
  expiresAt: number;
  /** The pending challenge's nonce and the address it was made for (the latest challenge). */
  nonce: string | undefined;
  nonceAddress: string | undefined;
  usedAt: number | undefined;
  /** The SIWE message the latest challenge issued: the only text a proof may sign. */
  challenge: string | undefined;
}

export interface VerifyLinkStore {
  create(link: VerifyLinkRow): Promise<void>;
  find(tokenHash: string): Promise<VerifyLinkRow | undefined>;
  /**
   * A new challenge for the link (replacing an earlier one): its nonce, the address asked about
   * and the message issued. False when the link is used or expired.
   */
  setNonce(
    tokenHash: string,
    nonce: string,
    address: string,
    now: number,
    challenge: string,
  ): Promise<boolean>;
  /**
   * In one transaction: uses the link up (only while unused, unexpired and with this nonce) and
   * keeps the proved wallet, moved from the account that held it (WalletStore.addProved). "used":
   * the link was not (or no longer) open with that nonce; "full": the person has too many
   * wallets. In both cases nothing changes.
   */
  complete(
    tokenHash: string,
    nonce: string,
    wallet: ProvedWallet,
    now: number,
  ): Promise<KeptWallet | "used" | "full">;
  /** Drops the confirmations of expired links, and links expired before `before`; how many. */
  prune(now: number, before: number): Promise<number>;
}

export type ReportKind = "spam" | "not_spam";
/**
 * sending: an attempt is under way; queued: waiting for a retry (the service certainly did not
 * get it); unknown: the bot stopped or timed out during the call, so it may or may not have
 * arrived, and it is never sent again; the others are final answers.
 */
export type ReportStatus = "sending" | "sent" | "queued" | "unsupported" | "failed" | "unknown";

export interface SpamReport {
  id: number;
  /** The chain whose spam classifier the report is for (and whose data service gets it). */
  chain: string;
  platform: string;
  chatId: string;
  userId: string;
  userName: string;
  wallet: string;
  contract: string;
  /** "" when the report is about a whole collection. */
  tokenId: string;
  kind: ReportKind;
  feedback: string | null;
  status: ReportStatus;
  upstream: string | null;
  attempts: number;
  nextAttemptAt: number | null;
  createdAt: number;
  updatedAt: number;
}

/** `chain` defaults to ethereum (what every report was before chains). */
export type NewReport = Partial<Pick<SpamReport, "chain">> &
  Pick<
    SpamReport,
    | "platform"
    | "chatId"
    | "userId"
    | "userName"
    | "wallet"
    | "contract"
    | "tokenId"
    | "kind"
    | "feedback"
  >;

export type ReportKey = Partial<Pick<SpamReport, "chain">> &
  Pick<SpamReport, "platform" | "userId" | "wallet" | "contract" | "tokenId" | "kind">;

/** The audit trail of every report: who, where, what, and what the data service answered. */
export interface ReportStore {
  /**
   * Records a report (status 'sending') unless this person already reported the same (chain,
   * wallet, contract, token, kind): then the earlier report is returned and `created` is false.
   */
  create(report: NewReport, now: number): Promise<{ report: SpamReport; created: boolean }>;
  /** This person's earlier report of the same (chain, wallet, contract, token, kind), if any. */
  findSame(key: ReportKey): Promise<SpamReport | undefined>;
  /**
   * Records an attempt before its call is made (committed first, so a crash during the call
   * leaves the report in 'sending', which the next start marks unknown).
   */
  begin(id: number, now: number): Promise<SpamReport>;
  finish(
    id: number,
    status: Exclude<ReportStatus, "sending" | "queued">,
    upstream: string,
    now: number,
  ): Promise<void>;
  queue(id: number, upstream: string, nextAttemptAt: number, now: number): Promise<void>;
  /**
   * Reports left in 'sending' by a process that stopped during the call: whether the service
   * got them is unknown, and they are not sent again. Only those sending since before
   * `sendingBefore`: with several instances on one store, a younger one may be another
   * instance's call still in progress. Returns how many.
   */
  markInterrupted(now: number, sendingBefore: number): Promise<number>;
  /** Reports waiting for a retry, oldest first. */
  due(now: number, limit: number): Promise<SpamReport[]>;
  /** How many reports a person made since `since` (for the per-person limit). */
  countSince(platform: string, userId: string, since: number): Promise<number>;
  /** A chat's reports, newest first. */
  forChat(platform: string, chatId: string, limit?: number): Promise<SpamReport[]>;
  /**
   * How many people reported each of `contracts` on `chain` as spam in each of `chatIds` (kind
   * 'spam', any status): only the (chat, contract) pairs with at least one report.
   */
  spamReporters(
    platform: string,
    chain: string,
    chatIds: readonly string[],
    contracts: readonly string[],
  ): Promise<{ chatId: string; contract: string; reporters: number }[]>;
}

// Scheduled digests -----------------------------------------------------------------------------

/** A channel's scheduled digest: the top collections and the day's new-collection count. */
export interface Digest {
  id: number;
  platform: string;
  chatId: string;
  /** The chain whose collections it shows. */
  chain: string;
  cadence: "daily" | "weekly";
  /** ISO weekday (1 = Monday) of a weekly digest; null for a daily one. */
  weekday: number | null;
  /** "HH:MM" local to `zone`. */
  time: string;
  /** IANA time zone name. */
  zone: string;
  /** What /top ranks by ("volume", "sales", "max_price") and over which period ("1d"...). */
  metric: string;
  period: string;
  createdBy: string;
  createdAt: number;
  /** When its chat refused the bot (null: not paused; the chat's pause); a paused digest is not attempted. */
  pausedAt: number | null;
  /** Why, as the platform said it: shown in /digest list. */
  pauseReason: string | null;
}

export type NewDigest = Omit<Digest, "id" | "pausedAt" | "pauseReason">;

/**
 * One slot's post of one digest. 'sending': claimed by `claimedBy` until `claimedUntil` (or,
 * after a failed try, waiting until then); 'sent' and 'failed' are final.
 */
export interface DigestRun {
  digestId: number;
  slot: number;
  status: "sending" | "sent" | "failed";
  attempts: number;
  claimedBy: string | null;
  claimedUntil: number | null;
  lastError: string | null;
  finishedAt: number | null;
}

/**
 * Channels' scheduled digests, and each slot's run: a run row is unique per (digest, slot), and
 * claiming it is one statement, so however many instances (or restarts) look at a slot, one
 * claimer at a time holds it and a sent slot is never claimed again.
 */
export interface DigestStore {
  /**
   * Adds a digest unless the chat already has `cap` of them (counted and inserted in one
   * transaction); "full" then.
   */
  add(digest: NewDigest, cap: number): Promise<Digest | "full">;
  /** The chat's digests, oldest first. */
  forChat(platform: string, chatId: string): Promise<Digest[]>;
  /** Removes the chat's digest `id` and its runs; whether there was one (of this chat). */
  remove(platform: string, chatId: string, id: number): Promise<boolean>;
  /** Every digest, oldest first. */
  all(): Promise<Digest[]>;
  /**
   * Claims the run of (digest, slot) for `holder` for `claimMs`: when there is no run yet
   * (created), or its run is 'sending' and free: a failed try's wait is over (`claimedUntil <=
   * now`) or its claimer died (its claim is over; a shared store times claims by the database's
   * clock, not `now`). Returns the run claimed, or undefined: it is sent, failed, held by
   * another, or the digest is gone.
   */
  claimRun(input: {
    digestId: number;
    slot: number;
    holder: string;
    now: number;
    claimMs: number;
  }): Promise<DigestRun | undefined>;
  /** Ends a run: sent or failed (never claimed again). */
  finishRun(
    digestId: number,
    slot: number,
    status: "sent" | "failed",
    now: number,
    error?: string,
  ): Promise<void>;
  /** Frees a claimed run to be claimed again from `dueAt`, counting a try when `countAttempt`. */
  retryRun(
    digestId: number,
    slot: number,
    dueAt: number,
    error: string,
    countAttempt: boolean,
  ): Promise<void>;
  /** A digest's runs, newest slot first (inspection and tests). */
  runs(digestId: number): Promise<DigestRun[]>;
  /**
   * The chat refuses the bot: the chat pauses, every feature of it (ChatPauseStore.pause; an
   * earlier pause is kept).
   */
  pauseChat(platform: string, chatId: string, reason: string, now: number): Promise<void>;
}

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
  /** Records (or replaces) the chat's wait in its stream. */
  set(wait: SendWait): Promise<void>;
  /** The chat's send went through (or it paused): no wait. */
  clear(stream: string, platform: string, chatId: string): Promise<void>;
  /** A chat got a new id: its waits follow (a wait already under the new id is kept). */
  moveChat(platform: string, fromChatId: string, toChatId: string): Promise<void>;
}

// Watches ---------------------------------------------------------------------------------------

/** A collection (owner count, whale share) or a wallet (new NFTs). */
export type WatchKind = "collection" | "wallet";

export interface Watch {
  id: number;
  platform: string;
  chatId: string;
  /** The chain whose data is watched. */
  chain: string;
  kind: WatchKind;
  /** The collection's or wallet's address, lower-case. */
  target: string;
  /** What people see: the collection's name, the ENS name, or the address. */
  label: string;
  /** Posts when the owner count moves by more than this percent over a day (collections). */
  ownersPercent: number | null;
  /** Posts when the whale share moved by more than these points over 30 days (collections). */
  whalesPoints: number | null;
  /** What the checker last saw, and when it looked (JSON, the checker's own); null: never. */
  state: string | null;
  /** A post owed (JSON, the checker's own), written with the state that caused it. */
  pending: string | null;
  createdBy: string;
  createdAt: number;
  /** When its chat refused the bot (null: not paused; the chat's pause); a paused watch is not read. */
  pausedAt: number | null;
  /** Why, as the platform said it: shown in /watch list. */
  pauseReason: string | null;
}

export type NewWatch = Pick<
  Watch,
  | "platform"
  | "chatId"
  | "chain"
  | "kind"
  | "target"
  | "label"
  | "ownersPercent"
  | "whalesPoints"
  | "createdBy"
  | "createdAt"
>;

/**
 * The channels' watches. A chat watches a target once per chain and kind (adding it again changes
 * the thresholds and keeps what was seen); a chat holds at most `max` watches, checked in the
 * same transaction as the insert.
 */
export interface WatchStore {
  add(
    watch: NewWatch,
    max: number,
  ): Promise<
    { kind: "added" | "updated"; watch: Watch } | { kind: "full"; count: number; max: number }
  >;
  /** The chat's watches (every chain), oldest first. */
  forChat(platform: string, chatId: string): Promise<Watch[]>;
  /** Removes the chat's watch `id`; whether there was one (another chat's id is not removed). */
  remove(platform: string, chatId: string, id: number): Promise<boolean>;
  /** Every watch (of `chain` when given), oldest first: the checker's list. */
  all(chain?: string): Promise<Watch[]>;
  /**
   * Stores what the checker saw and the post it owes (null: none), at once. A watch removed
   * meanwhile stays removed.
   */
  advance(id: number, state: string, pending: string | null): Promise<void>;
  /** The owed post went out: cleared, unless another has replaced it meanwhile. */
  posted(id: number, pending: string): Promise<void>;
  /**
   * A chat got a new id (a Telegram group upgraded to a supergroup): its watches follow, except
   * those the new chat already has (same chain, kind and target), which are kept and the old
   * ones dropped.
   */
  moveChat(platform: string, fromChatId: string, toChatId: string): Promise<void>;
  /**
   * The chat refuses the bot: the chat pauses, every feature of it (ChatPauseStore.pause; an
   * earlier pause is kept).
   */
  pauseChat(platform: string, chatId: string, reason: string, now: number): Promise<void>;
}

// The whole store --------------------------------------------------------------------------------

export interface Store {
  subscriptions: SubscriptionStore;
  outbox: OutboxStore;
  actions: ActionStore;
  reports: ReportStore;
  wallets: WalletStore;
  verifyLinks: VerifyLinkStore;
  collections: ChainCollectionIndexStore;
  kv: KeyValueStore;
  leases: LeaseStore;
  updates: UpdateStore;
  chatSettings: ChatSettingsStore;
  /** Chats that refuse the bot: every feature's work for them waits (issue 34). */
  chatPauses: ChatPauseStore;
  /** The outbound module's waits after a failed send, for senders without rows of their own. */
  sendWaits: SendWaitStore;
  digests: DigestStore;
  watches: WatchStore;
  /** Gates (issue 29): roles and groups for the holders, their members and log. */
  gates: GateStore;
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
