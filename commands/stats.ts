import type { FinancialStats } from "../src/api/schemas.ts";
import type { Chain } from "../src/chains.ts";
import { defineCommand } from "../src/core/command.ts";
import { collectionName, explorer, fullAddress, marketplaceLinks } from "../src/core/format.ts";
import { opt } from "../src/core/options.ts";
import type { Reply } from "../src/core/reply.ts";
import { financialStatsFields } from "./shared/stats.ts";

function collectionStatsReply(
  collection: string,
  name: string | undefined,
  stats: FinancialStats,
  chain: Pick<Chain, "explorer" | "symbol" | "marketplace">,
): Reply {
  const reply: Reply = {
    title: `Financial stats of the owners of ${name ? collectionName(name) : fullAddress(collection)}`,
    url: explorer.address(chain.explorer, collection),
    links: marketplaceLinks(chain, collection),
    footer: `${fullAddress(collection)} · amounts in ${chain.symbol}`,
  };
  if (BigInt(stats.walletsCount) === 0n) {
    reply.text = "This collection has no owners on record, so there are no statistics.";
  } else {
    reply.fields = financialStatsFields(stats, chain.symbol);
  }
  return reply;
}

export default defineCommand({
  name: "stats",
  description: "Financial stats of a collection's owners",
  help: "Averages over all current owners of a collection: collections owned, purchases, purchase volume and price, wallet age and holding time. For a list of wallets, use /walletstats.",
  options: {
    collection: opt.collection("Collection: name, symbol, address or link", { required: true }),
  },
  examples: ["/stats bayc", "/stats 0xBC4CA0EdA7647A8aB7C2061c2E118A18a936f13D"],
  async run(ctx, { collection }) {
    const stats = await ctx.api.audiences.financialStatsByCollection(collection, {
      signal: ctx.signal,
    });
    return collectionStatsReply(collection, ctx.collections.name(collection), stats, ctx.chain);
  },
});
