import { short } from "../core/format.ts";
import type { RenderableReply } from "../core/reply.ts";
import type { Outbound } from "../outbound/outbound.ts";
import type { VerifiedNotice, VerifiedNotifier, WalletMovedNotice } from "./types.ts";

/** What the chat where /verify was asked is told once the page has proved a wallet. */
export function verifiedReply(notice: VerifiedNotice): RenderableReply {
  const where =
    notice.kind === "contract"
      ? ` (a contract wallet: its proof holds on ${notice.chain} only)`
      : " (its key's signature: the proof holds on every chain the bot serves)";
  const lines = [
    `${notice.address}${where} is proved yours. Spam reports are now made for it; /wallets lists your wallets, /unlink forgets one.`,
  ];
  for (const d of notice.delegated ?? [])
    lines.push(
      `Also counted for you: ${short(d.cold)} on ${d.chain}, which delegated ${
        d.contract === "" ? "all its rights" : `its rights for ${short(d.contract)}`
      } to it (delegate.xyz).`,
    );
  return { title: "Wallet verified", text: lines.join("\n"), tone: "success", private: true };
}

const PLATFORM_WORDS: Record<string, string> = { discord: "Discord", telegram: "Telegram" };

/**
 * Told privately (a direct message, as gates' notices) to the account a wallet moved from: plain
 * text, since each platform's private path takes text.
 */
export function walletMovedText(notice: WalletMovedNotice): string {
  const platform = PLATFORM_WORDS[notice.platform] ?? notice.platform;
  return `${notice.address} on ${notice.chain} was just proved by another ${platform} account, which signed with its key: on ${platform} a wallet is one account's, so it is no longer yours here. What it gave you (gated roles or groups) ends after the usual grace period. If you still hold the key, prove it again with /verify; if that was not you, someone else has your wallet's key: move what it holds.`;
}

/**
 * Tells a proof where /verify was asked, through the outbound module, once (a link lasts 10
 * minutes, the interaction 15): a failure is thrown for the service to log, the page has said
 * Verified already.
 */
export function confirmThrough(outbound: () => Outbound, timeoutMs: number): VerifiedNotifier {
  return async (notice) => {
    const told = await outbound().tell({
      platform: notice.origin.platform,
      to: { userId: notice.origin.userId, origin: notice.origin },
      message: verifiedReply(notice),
      what: "proof's confirmation",
      timeoutMs,
      policy: { maxAttempts: 1, backoff: {} },
    });
    if (told.outcome !== "sent" && told.outcome !== "unserved")
      throw new Error(`the confirmation was not sent: ${told.reason}`);
  };
}
