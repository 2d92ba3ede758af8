import { defineCommand } from "../src/core/command.ts";

export default defineCommand({
  name: "unsubscribe",
  description: "Stop posting new collections in this channel",
  options: {},
  examples: ["/unsubscribe"],
  requiresManageChannel: true,
  async run(ctx) {
    const removed = await ctx.store.subscriptions.remove(
      ctx.invocation.platform,
      ctx.invocation.chat.id,
    );
    return {
      text: removed
        ? "Unsubscribed: no more new-collection alerts here."
        : "This channel was not subscribed.",
      tone: removed ? "success" : "info",
    };
  },
});
