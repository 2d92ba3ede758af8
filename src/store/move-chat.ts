import type { Platform } from "../core/command.ts";
import type { Store, Subscription } from "./types.ts";

/** Moves everything of a chat from one id to another. */
export type ChatMover = (
  platform: string,
  fromChatId: string,
  toChatId: string,
) => Promise<Subscription | undefined>;

/**
 * A chat got a new id (a Telegram group upgraded to a supergroup): everything of it follows,
 * whichever part learnt of the move (the service message, or a send refused by an alert, a digest
 * or a watch): its subscriptions with their queued alerts, buttons, reports and digests, its
 * settings (the default chain), its watches, its gates and its send waits. Returns the new chat's oldest subscription.
 */
export function chatMover(
  store: Pick<
    Store,
    "subscriptions" | "chatSettings" | "watches" | "gates" | "chatPauses" | "sendWaits"
  >,
): ChatMover {
  return async (platform, fromChatId, toChatId) => {
    const moved = await store.subscriptions.moveChat(platform, fromChatId, toChatId);
    await store.chatSettings.moveChat(platform, fromChatId, toChatId);
    await store.watches.moveChat(platform, fromChatId, toChatId);
    await store.gates.moveChat(platform as Platform, fromChatId, toChatId);
    // A wait after a failed post, with its count of tries, goes on under the new id.
    await store.sendWaits.moveChat(platform, fromChatId, toChatId);
    // The old id no longer answers, and the chat lives on under the new one: no pause follows.
    await store.chatPauses.resume(platform, fromChatId);
    return moved;
  };
}
