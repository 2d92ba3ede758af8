import type { ChatAdapter } from "../adapters/types.ts";
import type { RenderableReply } from "../core/reply.ts";
import type { Logger } from "../log.ts";
import type { VerifiedNotice, VerifiedNotifier } from "./types.ts";

/** What the chat where /verify was asked is told once the page has proved a wallet. */
export function verifiedReply(notice: VerifiedNotice): RenderableReply {
  const kind = notice.kind === "contract" ? " (a contract wallet)" : "";
  return {
    title: "Wallet verified",
    text: `${notice.address}${kind} on ${notice.chain} is proved yours. Spam reports are now made for it; /wallets lists your wallets, /unlink forgets one.`,
    tone: "success",
    private: true,
  };
}

/**
 * The service's notifier for the bot's adapters: each notice goes to the adapter of its platform.
 * A confirmation that cannot be sent (the person blocked the bot, the Discord token expired) is
 * logged and dropped: the wallet is proved all the same, and the page said so.
 */
export function adaptersNotifier(
  adapters: readonly Pick<ChatAdapter, "platform" | "notifyVerified">[],
  logger: Logger,
): VerifiedNotifier {
  return async (notice) => {
    const adapter = adapters.find((each) => each.platform === notice.origin.platform);
    if (!adapter?.notifyVerified) {
      logger.info(
        { platform: notice.origin.platform },
        "wallet verified; no chat of that platform here to confirm in",
      );
      return;
    }
    try {
      await adapter.notifyVerified(notice);
    } catch (error) {
      logger.warn(
        { err: error, platform: notice.origin.platform, chat: notice.origin.chatId },
        "wallet verified; the confirmation could not be sent",
      );
    }
  };
}
