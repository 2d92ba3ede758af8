import type { FinancialFilters } from "../src/api/audiences.ts";
import type { FinancialStats } from "../src/api/schemas.ts";
import { defineCommand } from "../src/core/command.ts";
import { formatCount, fullAddress } from "../src/core/format.ts";
import { opt } from "../src/core/options.ts";
import type { Reply } from "../src/core/reply.ts";
import { describeFilters, filtersOf, financialFilterOptions } from "./shared/filters.ts";
import { financialStatsFields } from "./shared/stats.ts";

function walletStatsReply(
  wallets: readonly string[],
  filters: FinancialFilters,
  stats: FinancialStats,
  symbol: string,
): Reply {
  const subject =
    wallets.length === 1 && wallets[0] !== undefined
      ? fullAddress(wallets[0])
      : `${formatCount(String(wallets.length))} wallets`;
  const filterText = describeFilters(filters, symbol);
  const reply: Reply = {
    title: `Financial stats of ${subject}`,
    footer: [filterText ? `Filters: ${filterText}` : "No filters", `amounts in ${symbol}`].join(
      " · ",
    ),
  };
  if (BigInt(stats.walletsCount) === 0n) {
    reply.text = filterText
      ? "No wallet of the list matches these filters."
      : "The data service has no financial data for these wallets.";
  } else {
    reply.fields = financialStatsFields(stats, symbol);
  }
  return reply;
}

export default defineCommand({
  name: "walletstats",
  description: "Financial stats of a list of wallets, with optional filters",
  help: "Give up to 500 wallet addresses or ENS names, separated by spaces, commas or new lines. Filters go by name anywhere on the line: min_volume:1.5 and min_avg_price:0.2 (in the chain's currency, e.g. ETH), min_collections:3, max_days_since_purchase:30. Only wallets that pass every filter are counted.",
  options: {
    wallets: opt.walletList("Wallet addresses or ENS names (up to 500)", { required: true }),
    ...financialFilterOptions(),
  },
  examples: [
    "/walletstats vitalik.eth nick.eth",
    "/walletstats min_volume:1.5 max_days_since_purchase:30 vitalik.eth, 0xb8c2C29ee19D8307cb7255e1Cd9CbDE883A267d5",
  ],
  async run(ctx, args) {
    const filters = filtersOf(args);
    const stats = await ctx.api.audiences.financialStatsByWallets(args.wallets, filters, {
      signal: ctx.signal,
    });
    return walletStatsReply(args.wallets, filters, stats, ctx.chain.symbol);
  },
});
