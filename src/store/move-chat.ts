import type { Store, Subscription } from "./types.ts";

/** Moves everything of a chat from one id to another. */
export type ChatMover = (
  platform: string,
  fromChatId: string,
  toChatId: string,
) => Promise<Subscription | undefined>;

/** What a feature moves of a chat that got a new id (its FeatureSetup.moveChat). */
export type FeatureChatMover = (
  platform: string,
  fromChatId: string,
  toChatId: string,
) => Promise<void>;

/**
 * A chat got a new id (a Telegram group upgraded to a supergroup): everything of it follows,
 * whichever part learnt of the move (the service message, or a send refused by an alert, a digest
 * or a watch): its subscriptions with their queued alerts, buttons, reports and digests, its
 * settings (the default chain) and its send waits, then what each feature keeps of it (`features`:
 * the watches, the gates), in the features' order. Returns the new chat's oldest subscription.
 */
export function chatMover(
  store: Pick<Store, "subscriptions" | "chatSettings" | "chatPauses" | "sendWaits">,
  features: readonly FeatureChatMover[] = [],
): ChatMover {
  return async (platform, fromChatId, toChatId) => {
    const moved = await store.subscriptions.moveChat(platform, fromChatId, toChatId);
    await store.chatSettings.moveChat(platform, fromChatId, toChatId);
    for (const move of features) await move(platform, fromChatId, toChatId);
    // A wait after a failed post, with its count of tries, goes on under the new id.
    await store.sendWaits.moveChat(platform, fromChatId, toChatId);
    // The old id no longer answers, and the chat lives on under the new one: no pause follows.
    await store.chatPauses.resume(platform, fromChatId);
    return moved;
  };
}
