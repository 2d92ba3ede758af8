/** The watches' store contract: a channel's watched collections and wallets. */

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
