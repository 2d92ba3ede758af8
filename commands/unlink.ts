import { defineCommand } from "../src/core/command.ts";
import { walletsOf } from "./shared/wallets.ts";

export default defineCommand({
  name: "unlink",
  description: "Forget the wallet you linked",
  options: {},
  examples: ["/unlink"],
  requiresPerson: true,
  async run(ctx) {
    const removed = walletsOf(ctx).unlink(ctx.invocation.platform, ctx.invocation.user.id);
    return {
      text: removed
        ? "Unlinked: the bot no longer keeps a wallet for you."
        : "You had no linked wallet.",
      private: true,
    };
  },
});
