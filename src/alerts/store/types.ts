/**
 * The store's contract for alerts (part of src/store/types.ts, which re-exports all of it): which
 * channels subscribe to which chain, and the outbox of new contracts and the alerts owed for them.
 */

import type { AlertRules } from "../rules-shape.ts";

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
   * and with them the queued alerts (the chat mover moves the rest of the chat). Where the new
   * chat already has a subscription to the same chain, that one is kept and the old one's alerts
   * join it, dropping those it already has queued.
   */
  moveChat(platform: string, fromChatId: string, toChatId: string): Promise<void>;
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
