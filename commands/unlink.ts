import { isAddressLike, parseAddress } from "../src/api/validate.ts";
import { defineCommand } from "../src/core/command.ts";
import { fullAddress } from "../src/core/format.ts";
import { opt } from "../src/core/options.ts";
import { UserError } from "../src/errors.ts";

export default defineCommand({
  name: "unlink",
  description: "Forget one of your wallets, or all of them",
  help: "Give the wallet's address as /wallets shows it, or all. The bot then keeps nothing of it: neither the address nor its proof.",
  options: {
    wallet: opt.string("The wallet's address, or all", {
      required: true,
      placeholder: "wallet|all",
    }),
  },
  chainless: true,
  // The simulator's demo wallet (src/simulator/README.md), proved by /verify's example.
  examples: ["/unlink 0xEC3111Cb30983AC4545f576b2793cA163fE0294B", "/unlink all"],
  requiresPerson: true,
  async run(ctx, { wallet }) {
    const { platform, user } = ctx.invocation;
    const given = wallet.trim();
    const all = given.toLowerCase() === "all";
    if (!all && !isAddressLike(given)) {
      throw new UserError(
        "invalid_address",
        "Give the wallet's address (0x… as /wallets shows it), or all to forget every wallet.",
      );
    }
    const address = all ? "all" : parseAddress(given, "wallet address").toLowerCase();
    const removed = await ctx.store.wallets.remove(platform, user.id, address);
    // The person's gates are decided again without the wallet; the reply need not wait for it.
    if (removed > 0) void ctx.gates?.onUnlinked(platform, user.id);
    if (all) {
      return {
        text:
          removed > 0
            ? `Forgotten: your ${removed === 1 ? "wallet" : `${removed} wallets`} and ${removed === 1 ? "its proof" : "their proofs"}.`
            : "There was nothing to forget.",
        private: true,
      };
    }
    return {
      text:
        removed > 0
          ? `Forgotten: ${fullAddress(address)} and its proof.`
          : `${fullAddress(address)} is not one of your wallets; /wallets lists them.`,
      private: true,
    };
  },
});
