import type { RenderableReply } from "../core/reply.ts";
import type { VerifiedNotice } from "./types.ts";

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
