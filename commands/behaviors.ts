import type { AggregatedBehavior } from "../src/api/schemas.ts";
import { defineCommand } from "../src/core/command.ts";
import {
  behaviorLabel,
  compareIntegerStrings,
  formatCount,
  formatPercent,
  fullAddress,
} from "../src/core/format.ts";
import { opt } from "../src/core/options.ts";
import type { Reply } from "../src/core/reply.ts";

function behaviorsReply(wallets: readonly string[], rows: AggregatedBehavior[]): Reply {
  // Largest category first.
  const sorted = [...rows].sort((a, b) => compareIntegerStrings(b.walletsCount, a.walletsCount));
  const subject =
    wallets.length === 1 && wallets[0] !== undefined
      ? fullAddress(wallets[0])
      : `${formatCount(String(wallets.length))} wallets`;
  if (sorted.length === 0) {
    return {
      title: `Behaviors of ${subject}`,
      text: "The data service has no behavior label for these wallets.",
      footer: "Behavior labels are recomputed daily",
    };
  }
  return {
    title: `Behaviors of ${subject}`,
    table: {
      columns: ["Behavior", "Wallets", "Share"],
      rows: sorted.map((row) => [
        behaviorLabel(row.behavior),
        formatCount(row.walletsCount),
        formatPercent(row.walletsPercentage),
      ]),
      align: ["left", "right", "right"],
    },
    footer: sorted.some((row) => row.behavior === "BEHAVIOR_UNSPECIFIED")
      ? "Behavior labels are recomputed daily · Unspecified: no label (the wallet never engaged with an NFT)"
      : "Behavior labels are recomputed daily",
  };
}

export default defineCommand({
  name: "behaviors",
  description: "Behavior breakdown of a list of wallets",
  help: "Give up to 500 wallet addresses or ENS names, separated by spaces, commas or new lines. Shows how many of them fall in each behavior category (whale, flipper, collector, …) and each category's share.",
  options: {
    wallets: opt.walletList("Wallet addresses or ENS names (up to 500)", { required: true }),
  },
  examples: [
    "/behaviors vitalik.eth nick.eth",
    "/behaviors 0xd8dA6BF26964aF9D7eEd9e03E53415D37aA96045, 0xb8c2C29ee19D8307cb7255e1Cd9CbDE883A267d5",
  ],
  async run(ctx, { wallets }) {
    const { aggregatedBehaviors } = await ctx.api.audiences.behaviorsByWallets(wallets, {
      signal: ctx.signal,
    });
    return behaviorsReply(wallets, aggregatedBehaviors);
  },
});
