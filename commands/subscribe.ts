import { alertStoresOf } from "../src/alerts/store/index.ts";
import type { BadActorRule, SubscriptionTypes } from "../src/alerts/store/types.ts";
import { defineCommand, personKey } from "../src/core/command.ts";
import { opt } from "../src/core/options.ts";
import { BAD_ACTOR_CHOICES, namesChains, TYPE_CHOICES } from "./shared/subscriptions.ts";

export default defineCommand({
  name: "subscribe",
  description: "Post newly minted NFT collections in this channel",
  help: "Alerts are posted as new collections are minted (checked every 30 s or so); a burst becomes one digest. Each alert says who minted it: the minter's behavior label. Collections minted by bad actors (wallets with a history of minting spam collections) are not posted unless the channel chooses badactors:show, which posts them marked as likely spam; a collection that members of the channel reported as spam is not posted there either. Subscribing again changes the types (and the bad-actor rule, when given). Where the bot serves several chains, a channel subscribes to each chain it wants (chain:base; default: the channel's chain). Only people who can manage the channel may subscribe.",
  options: {
    types: opt.choice("Which collections", TYPE_CHOICES, {
      fallback: "all",
      placeholder: "all|erc721|erc1155",
    }),
    badactors: opt.choice("Mints by bad actors", BAD_ACTOR_CHOICES, {
      placeholder: "hide|show",
    }),
  },
  examples: [
    "/subscribe",
    "/subscribe erc721",
    "/subscribe base erc721",
    "/subscribe badactors:show",
  ],
  requiresManageChannel: true,
  // The chain is the runtime's option (a Discord choice; chain:base or a leading chain word),
  // defaulting to the channel's (/settings chain).
  async run(ctx, { types, badactors }) {
    const { chain } = ctx;
    const { platform, chat } = ctx.invocation;
    const { subscription, created } = await alertStoresOf(ctx.store).subscriptions.upsert({
      platform,
      chatId: chat.id,
      chain: chain.id,
      types: types as SubscriptionTypes,
      badActors: badactors as BadActorRule | undefined,
      createdBy: personKey(ctx.invocation),
      now: ctx.now().getTime(),
    });
    const what =
      TYPE_CHOICES.find((choice) => choice.value === subscription.types)?.name ??
      subscription.types;
    const on = namesChains(ctx) ? ` on ${chain.name}` : "";
    const badActors =
      subscription.badActors === "show"
        ? "Collections minted by bad actors are posted, marked as likely spam."
        : "Collections minted by bad actors are not posted (badactors:show posts them, marked).";
    return {
      text: `${
        created
          ? `Subscribed: new collections${on} (${what}) will be posted here as they are minted.`
          : `This channel was already subscribed${on ? ` to ${chain.name}` : ""}; it now gets ${what}, and any pause is lifted.`
      } ${badActors}`,
      tone: "success",
    };
  },
});
