/** The text of a watch's posts: what moved, on which chain, against which threshold. */

import type { Chain } from "../chains.ts";
import { collectionName, explorer, formatNumber, short, shortTokenId } from "../core/format.ts";
import type { Reply } from "../core/reply.ts";
import type { Watch } from "./types.ts";

/** A round's replies for one watch as one post (the first one's title and link). */
export function mergeReplies(replies: Reply[]): Reply | undefined {
  if (replies.length <= 1) return replies[0];
  return {
    title: replies[0]?.title,
    url: replies[0]?.url,
    text: replies.map((reply) => reply.text).join("\n"),
    tone: "info",
  };
}

/** " on Base" where the bot serves several chains. */
const on = (chain: Pick<Chain, "name"> & { several?: boolean }) =>
  chain.several ? ` on ${chain.name}` : "";

function title(watch: Watch): string {
  return `Watch #${watch.id}: ${watch.kind === "collection" ? collectionName(watch.label) : watch.label}`;
}

export function ownersReply(
  watch: Watch,
  chain: Pick<Chain, "name" | "explorer"> & { several?: boolean },
  move: number,
  count: string,
): Reply {
  const up = move > 0;
  return {
    title: title(watch),
    url: explorer.address(chain.explorer, watch.target),
    text: `Owner count ${up ? "rose" : "fell"} ${formatNumber(Math.abs(move), 1)}% in a day${on(chain)}, to ${Number(count).toLocaleString("en-US")} (watching moves over ${formatNumber(watch.ownersPercent ?? 0, 1)}%).`,
    tone: "info",
  };
}

export function whalesReply(
  watch: Watch,
  chain: Pick<Chain, "name" | "explorer"> & { several?: boolean },
  whales: { share: number; move: number },
): Reply {
  const up = whales.move > 0;
  return {
    title: title(watch),
    url: explorer.address(chain.explorer, watch.target),
    text: `Whale share ${up ? "up" : "down"} ${formatNumber(Math.abs(whales.move), 1)} points over 30 days${on(chain)}, now ${formatNumber(whales.share, 1)}% of owners (watching moves over ${formatNumber(watch.whalesPoints ?? 0, 1)} points).`,
    tone: "info",
  };
}

const MAX_LISTED = 10;

export function walletReply(
  watch: Watch,
  chain: Pick<Chain, "name" | "explorer"> & { several?: boolean },
  fresh: readonly {
    nft: {
      contractAddress: string;
      tokenId: string;
      metadata?: { name: string } | undefined;
      collection?: { name: string } | undefined;
    };
  }[],
): Reply {
  const lines = fresh.slice(0, MAX_LISTED).map(({ nft }) => {
    const name = nft.metadata?.name || nft.collection?.name || short(nft.contractAddress);
    return `• ${name} (${short(nft.contractAddress)} #${shortTokenId(nft.tokenId, "text")})`;
  });
  if (fresh.length > MAX_LISTED) lines.push(`…and ${fresh.length - MAX_LISTED} more`);
  return {
    title: title(watch),
    url: explorer.address(chain.explorer, watch.target),
    text: `${fresh.length === 1 ? "A new NFT" : `${fresh.length} new NFTs`} in the wallet${on(chain)}:\n${lines.join("\n")}`,
    tone: "info",
  };
}
