import type { FinancialStats } from "../src/api/schemas.ts";
import { defineCommand } from "../src/core/command.ts";
import {
  collectionName,
  explorer,
  formatCount,
  formatNative,
  formatNumber,
  fullAddress,
} from "../src/core/format.ts";
import { opt } from "../src/core/options.ts";
import type { Reply, ReplyField } from "../src/core/reply.ts";

/**
 * A native amount the spec types as a JSON number (the averages). toFixed keeps it out of
 * exponent notation so formatNative can round it on the digits.
 */
export function formatNativeNumber(value: number): string {
  if (!Number.isFinite(value)) return "n/a";
  return formatNative(value.toFixed(18));
}

/** The fields of /stats and /walletstats: one per figure of the financial stats object. */
export function financialStatsFields(stats: FinancialStats): ReplyField[] {
  return [
    { name: "Wallets", value: formatCount(stats.walletsCount), inline: true },
    {
      name: "Avg collections owned",
      value: formatNumber(stats.collectionsOwnedCountAvg),
      inline: true,
    },
    { name: "Avg purchases", value: formatNumber(stats.nftsPurchasesCountAvg), inline: true },
    {
      name: "Avg purchase volume",
      value: formatNativeNumber(stats.nftsPurchasesVolumeAvg),
      inline: true,
    },
    {
      name: "Avg purchase price",
      value: formatNativeNumber(stats.nftsPurchasesPriceAvg),
      inline: true,
    },
    {
      name: "Wallet age",
      value:
        stats.walletAgeMin === stats.walletAgeMax
          ? `${formatCount(stats.walletAgeMin)} days`
          : `${formatCount(stats.walletAgeMin)} to ${formatCount(stats.walletAgeMax)} days`,
      inline: true,
    },
    {
      name: "Avg holding time",
      value: `${formatNumber(stats.nftsFifoHoldingSpanAvg, 1)} days (first in, first out)`,
      inline: true,
    },
  ];
}

export function collectionStatsReply(
  collection: string,
  name: string | undefined,
  stats: FinancialStats,
  explorerUrl: string,
): Reply {
  const reply: Reply = {
    title: `Financial stats of the owners of ${name ? collectionName(name) : fullAddress(collection)}`,
    url: explorer.address(explorerUrl, collection),
    footer: `${fullAddress(collection)} · amounts in ETH`,
  };
  if (BigInt(stats.walletsCount) === 0n) {
    reply.text = "This collection has no owners on record, so there are no statistics.";
  } else {
    reply.fields = financialStatsFields(stats);
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
    return collectionStatsReply(
      collection,
      ctx.collections.name(collection),
      stats,
      ctx.settings.explorerUrl,
    );
  },
});
