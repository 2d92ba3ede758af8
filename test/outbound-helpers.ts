import { alertStoresOf } from "../src/alerts/store/index.ts";
import type { Platform } from "../src/core/command.ts";
import type { RenderableReply } from "../src/core/reply.ts";
import { digestStoreOf } from "../src/digests/store.ts";
import { gateStoreOf } from "../src/gates/store.ts";
import { Outbound } from "../src/outbound/outbound.ts";
import type { ChatSender, Materialize } from "../src/outbound/types.ts";
import { type ChatMover, chatMover } from "../src/store/move-chat.ts";
import type { Store } from "../src/store/types.ts";
import { watchStoreOf } from "../src/watches/store.ts";

/**
 * The outbound module on a test's store, as the bot builds it: the senders given, the chat mover
 * of the whole store with its features' parts (unless the test gives its own), and the replies sent as they are unless a
 * `materialize` is given.
 */
export function outboundOf(
  store: Pick<Store, "chatRows" | "chatSettings" | "sql" | "chatPauses" | "sendWaits">,
  senders: Partial<Record<Platform, ChatSender>>,
  options: { materialize?: Materialize; moveChat?: ChatMover; now?: () => number } = {},
): Outbound {
  return new Outbound({
    senders,
    materialize:
      options.materialize ?? (async (_platform, _chat, reply) => reply as RenderableReply),
    moveChat:
      options.moveChat ??
      // What the alerts, digests, watches and gates features move of a chat (their FeatureSetup.moveChat).
      chatMover(store, [
        (platform, from, to) => alertStoresOf(store).subscriptions.moveChat(platform, from, to),
        (platform, from, to) => digestStoreOf(store).moveChat(platform, from, to),
        (platform, from, to) => watchStoreOf(store).moveChat(platform, from, to),
        (platform, from, to) => gateStoreOf(store).moveChat(platform as Platform, from, to),
      ]),
    chatPauses: store.chatPauses,
    waits: store.sendWaits,
    ...(options.now ? { now: options.now } : {}),
  });
}

/** The outbound module with one platform's sender and nothing kept (a private message's tests). */
export function outboundWith(sender: ChatSender, platform: Platform): Outbound {
  return new Outbound({
    senders: { [platform]: sender },
    materialize: async (_platform, _chat, reply) => reply as RenderableReply,
    moveChat: async () => undefined,
    chatPauses: { pause: async () => true },
    waits: {
      all: async () => [],
      get: async () => undefined,
      set: async () => {},
      clear: async () => {},
      moveChat: async () => {},
    },
  });
}

/**
 * A private message through the outbound module to one platform's sender, once, as a gate's
 * notice goes: true when delivered, "closed" when the person does not take the bot's messages,
 * else the outcome.
 */
export async function tellOnce(
  sender: ChatSender,
  platform: Platform,
  userId: string,
  text: string,
  userChatId?: string,
): Promise<true | "closed" | string> {
  const told = await outboundWith(sender, platform).tell({
    platform,
    to: { userId, userChatId },
    message: text,
    what: "notice",
    timeoutMs: 5_000,
    policy: { maxAttempts: 1, backoff: {} },
  });
  return told.outcome === "sent" ? true : told.outcome === "closed" ? "closed" : told.outcome;
}
