import type { Chain } from "../../src/chains.ts";
import type { CommandContext } from "../../src/core/command.ts";

/** The alert subscription types a channel can choose, shared by /subscribe and /subscriptions. */
export const TYPE_CHOICES = [
  { value: "all", name: "All NFT collections" },
  { value: "erc721", name: "ERC-721 (with legacy and CryptoPunks)", aliases: ["721"] },
  { value: "erc1155", name: "ERC-1155", aliases: ["1155"] },
] as const;

/** What a channel does with mints by bad actors (BEHAVIOR_BADACTOR), for /subscribe and /subscriptions. */
export const BAD_ACTOR_CHOICES = [
  { value: "hide", name: "Not posted (default)" },
  { value: "show", name: "Posted, marked as likely spam" },
] as const;

/** A chain's name by its id, or "<id> (no longer served)" for one CHAINS no longer lists. */
export function chainNameOf(ctx: Pick<CommandContext, "chains">, id: string): string {
  return ctx.chains.find((chain: Chain) => chain.id === id)?.name ?? `${id} (no longer served)`;
}

/** Whether replies name chains: only when the bot serves more than one. */
export const namesChains = (ctx: Pick<CommandContext, "chains">) => ctx.chains.length > 1;
