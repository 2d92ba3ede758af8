import type { FinancialStats } from "../../src/api/schemas.ts";
import { formatCount, formatNative, formatNumber } from "../../src/core/format.ts";
import type { ReplyField } from "../../src/core/reply.ts";

/**
 * A native amount the spec types as a JSON number (the averages). toFixed keeps it out of
 * exponent notation so formatNative can round it on the digits.
 */
export function formatNativeNumber(value: number, symbol = "ETH"): string {
  if (!Number.isFinite(value)) return "n/a";
  return formatNative(value.toFixed(18), symbol);
}

/** The fields of /stats and /walletstats: one per figure of the financial stats object. */
/** The fields of /stats and /walletstats, amounts in the chain's `symbol`. */
export function financialStatsFields(stats: FinancialStats, symbol = "ETH"): ReplyField[] {
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
      value: formatNativeNumber(stats.nftsPurchasesVolumeAvg, symbol),
      inline: true,
    },
    {
      name: "Avg purchase price",
      value: formatNativeNumber(stats.nftsPurchasesPriceAvg, symbol),
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
