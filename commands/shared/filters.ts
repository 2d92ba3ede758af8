import type { FinancialFilters } from "../../src/api/audiences.ts";
import { formatCount, formatDecimal } from "../../src/core/format.ts";
import { opt } from "../../src/core/options.ts";

/** The four financial filters of endpoints 5 and 9, as options (/walletstats and /segment). */
export function financialFilterOptions() {
  return {
    min_volume: opt.decimal("Minimum purchase volume", { placeholder: "min_volume" }),
    min_avg_price: opt.decimal("Minimum average purchase price", {
      placeholder: "min_avg_price",
    }),
    min_collections: opt.count("Minimum number of collections owned", {
      placeholder: "min_collections",
    }),
    max_days_since_purchase: opt.count("Maximum days since the last purchase", {
      placeholder: "max_days_since_purchase",
    }),
  };
}

export interface FilterArgs {
  min_volume?: string | undefined;
  min_avg_price?: string | undefined;
  min_collections?: string | undefined;
  max_days_since_purchase?: string | undefined;
}

export function filtersOf(args: FilterArgs): FinancialFilters {
  const filters: FinancialFilters = {};
  if (args.min_volume !== undefined) filters.nftsPurchasesVolumeGte = args.min_volume;
  if (args.min_avg_price !== undefined) filters.nftsPurchasesPriceAvgGte = args.min_avg_price;
  if (args.min_collections !== undefined) filters.collectionsOwnedCountGte = args.min_collections;
  if (args.max_days_since_purchase !== undefined)
    filters.daysSinceLastPurchaseLte = args.max_days_since_purchase;
  return filters;
}

/**
 * "purchase volume ≥ 1.5 ETH, last purchase ≤ 30 days ago" (amounts in the chain's `symbol`),
 * or undefined without filters.
 */
export function describeFilters(filters: FinancialFilters, symbol = "ETH"): string | undefined {
  const parts = [
    filters.nftsPurchasesVolumeGte !== undefined
      ? `purchase volume ≥ ${formatDecimal(filters.nftsPurchasesVolumeGte)} ${symbol}`
      : undefined,
    filters.nftsPurchasesPriceAvgGte !== undefined
      ? `average price ≥ ${formatDecimal(filters.nftsPurchasesPriceAvgGte)} ${symbol}`
      : undefined,
    filters.collectionsOwnedCountGte !== undefined
      ? `collections owned ≥ ${formatCount(filters.collectionsOwnedCountGte)}`
      : undefined,
    filters.daysSinceLastPurchaseLte !== undefined
      ? `last purchase ≤ ${formatCount(filters.daysSinceLastPurchaseLte)} days ago`
      : undefined,
  ].filter((part) => part !== undefined);
  return parts.length > 0 ? parts.join(", ") : undefined;
}
