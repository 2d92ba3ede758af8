import { type Chain, chainList, parseChains } from "../../src/chains.ts";
import type { CommandContext } from "../../src/core/command.ts";
import { opt } from "../../src/core/options.ts";
import type { Reply } from "../../src/core/reply.ts";

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

/** The chain option of /subscribe and /unsubscribe: `chain:base` on text platforms. */
export const chainOption = () =>
  opt.string("Chain (default: this channel's)", { placeholder: "chain", maxLength: 40 });

const ETHEREUM_ONLY = parseChains(undefined, undefined);

/** The chains the bot serves, the default first. */
export function servedChains(ctx: Pick<CommandContext, "settings">): readonly Chain[] {
  const chains = ctx.settings.chains;
  return chains && chains.length > 0 ? chains : ETHEREUM_ONLY;
}

/**
 * The default chain of this chat, for commands given no chain. For now the first configured
 * chain; a per-chat setting (/settings chain) takes its place when there is one.
 */
export async function defaultChainOfChat(ctx: Pick<CommandContext, "settings">): Promise<Chain> {
  return servedChains(ctx)[0] as Chain;
}

/**
 * The chain a person named (by id or name, any case), or the chat's default when none: or the
 * reply saying which chains there are, when the bot serves no such chain.
 */
export async function chosenChain(
  ctx: Pick<CommandContext, "settings">,
  given: string | undefined,
): Promise<{ chain: Chain } | { reply: Reply }> {
  if (given === undefined || given.trim() === "") return { chain: await defaultChainOfChat(ctx) };
  const wanted = given.trim().toLowerCase();
  const chains = servedChains(ctx);
  const chain = chains.find((c) => c.id === wanted || c.name.toLowerCase() === wanted);
  if (chain) return { chain };
  return {
    reply: {
      text: `This bot serves no chain "${given.trim()}": use ${chainList(chains)}. Nothing was changed.`,
      tone: "warning",
    },
  };
}

/** Whether replies name chains: only when the bot serves more than one. */
export const namesChains = (ctx: Pick<CommandContext, "settings">) => servedChains(ctx).length > 1;
