import type { Platform } from "../core/command.ts";
import type { RenderableReply, Reply } from "../core/reply.ts";

/**
 * How a send failed, as the platform adapter tells it. `rate_limited`: the platform said when
 * to come back; `transient`: worth another try later; `permanent`: the chat refuses the bot
 * (gone, blocked, kicked, no right to post); `moved`: the chat has a new id (a Telegram group
 * upgraded to a supergroup).
 */
export type SendFailure =
  | { kind: "rate_limited"; retryAfterMs: number }
  | { kind: "transient"; reason: string }
  | { kind: "permanent"; reason: string }
  | { kind: "moved"; newChatId: string };

/**
 * What a platform adapter offers the outbound module: send to a chat, and say what an error
 * means. Every adapter implements it (src/adapters/types.ts); no feature calls it but through
 * the outbound module.
 */
export interface ChatSender {
  /**
   * Sends a reply to a chat. `idempotencyKey` is the same for every attempt at the same post:
   * a platform that can deduplicate on it (Discord's enforced nonce) makes a re-send harmless.
   */
  sendToChat(chatId: string, reply: RenderableReply, idempotencyKey?: string): Promise<void>;
  classifySendError(error: unknown): SendFailure;
  /**
   * Sends allowed in flight at once. A platform without idempotent sends must keep this at 1:
   * every send in flight when the process dies is sent again after restart.
   */
  readonly maxInFlight: number;
  /**
   * Sends a person a message privately (a gate's notice, a proof's confirmation): where they
   * asked when `to.origin` says how (Discord: an ephemeral follow-up on the interaction's token,
   * valid 15 minutes; Telegram: the private chat a group's button opened), else a direct message
   * (Telegram: to `to.userChatId`, the chat a join request opens, when given). Throws the
   * platform's error (see classifySendError: a person who closed their direct messages or blocked
   * the bot is `permanent`). Any instance may call it. A string is sent as plain text (a gate's
   * notice: the platform escapes nothing and links nobody). Every platform's adapter has it; a
   * sender without it tells no one privately.
   */
  sendPrivately?(
    to: PrivateTarget,
    message: RenderableReply | string,
    signal?: AbortSignal,
  ): Promise<void>;
}

/** Who a private message goes to (ChatSender.sendPrivately). */
export interface PrivateTarget {
  userId: string;
  /** Telegram: the private chat with the person a join request opened (valid 5 minutes). */
  userChatId?: string | undefined;
  /** Where they asked, when the answer goes back there (a /verify link's). */
  origin?: PrivateOrigin | undefined;
}

/** Where a person asked for something the bot answers privately later (a /verify link). */
export interface PrivateOrigin {
  platform: Platform;
  userId: string;
  /** The chat the person asked in (Telegram: the private chat a group's button opened). */
  chatId: string;
  /**
   * The community the person asked from, when there is one: a Discord server's id, or the
   * Telegram group whose button opened the private chat. A proof there makes them one of its
   * members (insights).
   */
  place?: string | undefined;
  /** The person's name as the platform gave it when they asked. */
  name?: string | undefined;
  /** The community's name (the server's, the group's) and the bot's, as the platform gave them. */
  placeName?: string | undefined;
  botName?: string | undefined;
  /**
   * How the adapter confirms privately, opaque to the rest (e.g. a Discord interaction's
   * application id and token for an ephemeral follow-up, valid 15 minutes). Stored with the link,
   * dropped when the link is used or expires; never logged.
   */
  confirm?: string;
}

/** Stores a reply's button actions for the chat it goes to and returns what renderers take. */
export type Materialize = (
  platform: Platform,
  chatId: string,
  reply: Reply,
) => Promise<RenderableReply>;
