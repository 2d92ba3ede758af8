import { defineCommand } from "../src/core/command.ts";

export default defineCommand({
  name: "unlink",
  description: "Forget the wallet you linked",
  options: {},
  chainless: true,
  examples: ["/unlink"],
  requiresPerson: true,
  async run(ctx) {
    const removed = await ctx.store.wallets.unlink(ctx.invocation.platform, ctx.invocation.user.id);
    return {
      text: removed
        ? "Unlinked: the bot no longer keeps a wallet for you."
        : "You had no linked wallet.",
      private: true,
    };
  },
});
