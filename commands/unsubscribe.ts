import { alertStoresOf } from "../src/alerts/store/index.ts";
import { defineCommand } from "../src/core/command.ts";
import { namesChains } from "./shared/subscriptions.ts";

export default defineCommand({
  name: "unsubscribe",
  description: "Stop posting new collections in this channel",
  help: "Without a chain, every chain's alerts stop here (those of chains no longer served too); chain:base stops only that chain's.",
  options: {},
  examples: ["/unsubscribe"],
  requiresManageChannel: true,
  async run(ctx) {
    const { platform, chat } = ctx.invocation;
    const { subscriptions } = alertStoresOf(ctx.store);
    if (ctx.chainGiven) {
      const { chain } = ctx;
      const removed = await subscriptions.remove(platform, chat.id, chain.id);
      const on = namesChains(ctx) ? ` ${chain.name}` : "";
      return {
        text: removed
          ? `Unsubscribed: no more${on} new-collection alerts here.`
          : `This channel was not subscribed${on ? ` to${on}` : ""}.`,
        tone: removed ? "success" : "info",
      };
    }
    const before = await subscriptions.forChat(platform, chat.id);
    const removed = await subscriptions.remove(platform, chat.id);
    const names = before.map((s) => ctx.chains.find((c) => c.id === s.chain)?.name ?? s.chain);
    const which = namesChains(ctx) ? names.join(", ") : "";
    return {
      text: removed
        ? `Unsubscribed: no more new-collection alerts here${which ? ` (${which})` : ""}.`
        : "This channel was not subscribed.",
      tone: removed ? "success" : "info",
    };
  },
});
