import type { Store } from "./types.ts";

/** Moves everything of a chat from one id to another. */
export type ChatMover = (platform: string, fromChatId: string, toChatId: string) => Promise<void>;

/**
 * A chat got a new id (a Telegram group upgraded to a supergroup): everything of it follows,
 * whichever part learnt of the move (the service message, or a send refused by an alert, a digest
 * or a watch): what each feature keeps of it (`features`: the alerts' subscriptions with their
 * queued alerts, the digests, the watches, the gates), in the features' order, then its buttons
 * and reports, its settings (the default chain) and its send waits. Each part moves in its own
 * transaction: a crash between two leaves the rest under the old id until a send there meets the
 * move again (every step finds nothing left to move once it is done).
 */
export function chatMover(
  store: Pick<Store, "chatRows" | "chatSettings" | "chatPauses" | "sendWaits">,
  features: readonly ChatMover[] = [],
): ChatMover {
  return async (platform, fromChatId, toChatId) => {
    for (const move of features) await move(platform, fromChatId, toChatId);
    await store.chatRows.moveChat(platform, fromChatId, toChatId);
    await store.chatSettings.moveChat(platform, fromChatId, toChatId);
    // A wait after a failed post, with its count of tries, goes on under the new id.
    await store.sendWaits.moveChat(platform, fromChatId, toChatId);
    // The old id no longer answers, and the chat lives on under the new one: no pause follows.
    await store.chatPauses.resume(platform, fromChatId);
  };
}
