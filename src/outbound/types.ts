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
}

/** Stores a reply's button actions for the chat it goes to and returns what renderers take. */
export type Materialize = (
  platform: Platform,
  chatId: string,
  reply: Reply,
) => Promise<RenderableReply>;
