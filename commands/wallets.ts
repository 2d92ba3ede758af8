import { defineCommand } from "../src/core/command.ts";
import { formatTimestamp, fullAddress } from "../src/core/format.ts";

export default defineCommand({
  name: "wallets",
  description: "Your wallets: which are proved, on which chain and when",
  help: "Lists the wallets you proved with /verify (with the chain and when), and those linked before proofs existed, shown as not proved. Spam reports are made for the most recently proved one. Only you see the list.",
  options: {},
  chainless: true,
  examples: ["/wallets"],
  requiresPerson: true,
  async run(ctx) {
    const { platform, user } = ctx.invocation;
    const wallets = await ctx.store.wallets.list(platform, user.id);
    if (wallets.length === 0) {
      return {
        text: "You have no wallets here yet: /verify proves one (you sign a message on the bot's page; free, moves nothing).",
        private: true,
      };
    }
    const now = ctx.now();
    const lines = wallets.map((wallet) => {
      const address = fullAddress(wallet.address);
      return wallet.provedAt === undefined
        ? `${address}: not proved (linked before proofs; /verify proves it)`
        : `${address} on ${wallet.chain}: proved ${formatTimestamp(new Date(wallet.provedAt).toISOString(), now)}`;
    });
    const reporting = wallets.find((wallet) => wallet.provedAt !== undefined);
    return {
      title: `Your wallets (${wallets.length})`,
      text: lines.join("\n"),
      footer: reporting
        ? `Spam reports are made for ${fullAddress(reporting.address)}, the latest proved. /unlink <wallet|all> forgets.`
        : "None is proved, so no spam report can be made for you: /verify proves one. /unlink <wallet|all> forgets.",
      confidential: { what: "your wallets" },
    };
  },
});
