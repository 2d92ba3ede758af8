import { defineCommand, personKey } from "../src/core/command.ts";
import { opt } from "../src/core/options.ts";
import type { SubscriptionTypes } from "../src/store/types.ts";
import { namesChains, TYPE_CHOICES } from "./shared/subscriptions.ts";

export default defineCommand({
  name: "subscribe",
  description: "Post newly minted NFT collections in this channel",
  help: "Alerts are posted as new collections are minted (checked every 30 s or so); a burst becomes one digest. Subscribing again changes the types. Where the bot serves several chains, a channel subscribes to each chain it wants (chain:base; default: the channel's chain). Only people who can manage the channel may subscribe.",
  options: {
    types: opt.choice("Which collections", TYPE_CHOICES, {
      fallback: "all",
      placeholder: "all|erc721|erc1155",
    }),
  },
  examples: ["/subscribe", "/subscribe erc721", "/subscribe base erc721"],
  requiresManageChannel: true,
  // The chain is the runtime's option (a Discord choice; chain:base or a leading chain word),
  // defaulting to the channel's (/settings chain).
  async run(ctx, { types }) {
    const { chain } = ctx;
    const { platform, chat } = ctx.invocation;
    const { subscription, created } = await ctx.store.subscriptions.upsert({
      platform,
      chatId: chat.id,
      chain: chain.id,
      types: types as SubscriptionTypes,
      createdBy: personKey(ctx.invocation),
      now: ctx.now().getTime(),
    });
    const what =
      TYPE_CHOICES.find((choice) => choice.value === subscription.types)?.name ??
      subscription.types;
    const on = namesChains(ctx) ? ` on ${chain.name}` : "";
    return {
      text: created
        ? `Subscribed: new collections${on} (${what}) will be posted here as they are minted.`
        : `This channel was already subscribed${on ? ` to ${chain.name}` : ""}; it now gets ${what}, and any pause is lifted.`,
      tone: "success",
    };
  },
});
