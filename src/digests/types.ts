/** The digests' store contract: channels' scheduled digests and their runs. */

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
  /** A chat got a new id (a Telegram group upgraded to a supergroup): its digests follow. */
  moveChat(platform: string, fromChatId: string, toChatId: string): Promise<void>;
}
