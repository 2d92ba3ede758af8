import type { CommandContext } from "../../src/core/command.ts";
import { UserError } from "../../src/errors.ts";
import type { SubscriptionRepository } from "../../src/store/repositories.ts";

export const TYPE_CHOICES = [
  { value: "all", name: "All NFT collections" },
  { value: "erc721", name: "ERC-721 (with legacy and CryptoPunks)", aliases: ["721"] },
  { value: "erc1155", name: "ERC-1155", aliases: ["1155"] },
] as const;

/** The subscriptions repository, or a plain refusal where the bot runs without a store. */
export function subscriptionsOf(ctx: CommandContext): SubscriptionRepository {
  if (!ctx.store) throw new UserError("Alerts are not available on this bot.");
  return ctx.store.subscriptions;
}
