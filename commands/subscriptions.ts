import { hasRules } from "../src/alerts/rules.ts";
import { alertStoresOf } from "../src/alerts/store/index.ts";
import type { Subscription } from "../src/alerts/store/types.ts";
import { defineCommand } from "../src/core/command.ts";
import { formatTimestamp } from "../src/core/format.ts";
import { pausedNote } from "./shared/paused.ts";
import {
  BAD_ACTOR_CHOICES,
  chainNameOf,
  namesChains,
  TYPE_CHOICES,
} from "./shared/subscriptions.ts";

export default defineCommand({
  name: "subscriptions",
  description: "This channel's alert subscriptions, and any pause with its reason",
  options: {},
  examples: ["/subscriptions"],
  // Lists every chain's subscription of the channel.
  chainless: true,
  async run(ctx) {
    const { platform, chat } = ctx.invocation;
    const subscriptions = await alertStoresOf(ctx.store).subscriptions.forChat(platform, chat.id);
    if (subscriptions.length === 0)
      return { text: "This channel has no alert subscription. /subscribe starts one." };
    const now = ctx.now();
    const what = (subscription: Subscription) =>
      TYPE_CHOICES.find((choice) => choice.value === subscription.types)?.name ??
      subscription.types;
    const badActors = (subscription: Subscription) =>
      BAD_ACTOR_CHOICES.find((choice) => choice.value === subscription.badActors)?.name ??
      subscription.badActors;
    const since = (subscription: Subscription) =>
      formatTimestamp(new Date(subscription.createdAt).toISOString(), now);
    const status = (subscription: Subscription) => pausedNote(subscription, now) ?? "active";
    const chainName = (subscription: Subscription) => chainNameOf(ctx, subscription.chain);
    const [only] = subscriptions;
    if (only && subscriptions.length === 1) {
      return {
        title: "New-collection alerts",
        fields: [
          ...(namesChains(ctx) ? [{ name: "Chain", value: chainName(only), inline: true }] : []),
          { name: "Collections", value: what(only), inline: true },
          { name: "Bad actors' mints", value: badActors(only), inline: true },
          { name: "Since", value: since(only), inline: true },
          { name: "Status", value: status(only) },
          ...(hasRules(only.rules)
            ? [{ name: "Rules", value: "This channel has alert rules: /alerts show lists them." }]
            : []),
        ],
      };
    }
    // Several chains: one field each, with its collections, since when, and its status.
    return {
      title: "New-collection alerts",
      fields: subscriptions.map((subscription) => ({
        name: chainName(subscription),
        value: `${what(subscription)}; bad actors' mints: ${badActors(subscription).toLowerCase()}; since ${since(subscription)}; ${status(subscription)}${hasRules(subscription.rules) ? "; with alert rules (/alerts show)" : ""}`,
      })),
    };
  },
});
