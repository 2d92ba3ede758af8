import { defineCommand } from "../src/core/command.ts";
import { subscriptionsOf } from "./shared/subscriptions.ts";

export default defineCommand({
  name: "unsubscribe",
  description: "Stop posting new collections in this channel",
  options: {},
  examples: ["/unsubscribe"],
  requiresManageChannel: true,
  async run(ctx) {
    const removed = subscriptionsOf(ctx).remove(ctx.invocation.platform, ctx.invocation.chat.id);
    return {
      text: removed
        ? "Unsubscribed: no more new-collection alerts here."
        : "This channel was not subscribed.",
      tone: removed ? "success" : "info",
    };
  },
});
