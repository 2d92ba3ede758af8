/**
 * The store's contract for what runs on a schedule (part of src/store/types.ts, which re-exports
 * all of it): channels' scheduled digests with their runs, and their watches.
 */

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
