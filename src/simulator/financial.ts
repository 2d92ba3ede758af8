/** The audience endpoints' financial part: stats of wallets and of owners, and owner profiles. */

import {
  decimalWei,
  nonNegativeInt,
  requireContract,
  requireObject,
  walletList,
} from "./params.ts";
import type { ContractRec, WalletRec } from "./records.ts";
import { param, type RequestContext } from "./router.ts";
import type { FinancialStatsJson } from "./types.ts";
import { formatUnits, percentages, roundTo, weiToNumber } from "./units.ts";

function average(values: readonly number[]): number {
  return values.length === 0 ? 0 : values.reduce((sum, value) => sum + value, 0) / values.length;
}

export function financialStats(wallets: readonly WalletRec[]): FinancialStatsJson {
  const totalPurchases = wallets.reduce((sum, wallet) => sum + wallet.purchasesCount, 0);
  const totalVolume = wallets.reduce((sum, wallet) => sum + wallet.purchasesVolumeWei, 0n);
  const ages = wallets.map((wallet) => wallet.walletAgeDays);
  return {
    walletsCount: String(wallets.length),
    collectionsOwnedCountAvg: roundTo(average(wallets.map((w) => w.collectionsOwned)), 4),
    nftsPurchasesCountAvg: roundTo(average(wallets.map((w) => w.purchasesCount)), 4),
    nftsPurchasesVolumeAvg: roundTo(
      average(wallets.map((w) => weiToNumber(w.purchasesVolumeWei))),
      6,
    ),
    nftsPurchasesPriceAvg:
      totalPurchases === 0 ? 0 : roundTo(weiToNumber(totalVolume) / totalPurchases, 6),
    walletAgeMin: String(ages.length === 0 ? 0 : Math.min(...ages)),
    walletAgeMax: String(ages.length === 0 ? 0 : Math.max(...ages)),
    nftsFifoHoldingSpanAvg: roundTo(average(wallets.map((w) => w.holdingSpanAvgDays)), 2),
  };
}

export interface FinancialFilters {
  volumeGte: bigint | undefined;
  priceAvgGte: bigint | undefined;
  collectionsGte: number | undefined;
  daysSinceLastPurchaseLte: number | undefined;
}

export function parseFilters(body: Record<string, unknown>): FinancialFilters {
  return {
    volumeGte: decimalWei(body.nftsPurchasesVolumeGte, "nftsPurchasesVolumeGte"),
    priceAvgGte: decimalWei(body.nftsPurchasesPriceAvgGte, "nftsPurchasesPriceAvgGte"),
    collectionsGte: nonNegativeInt(body.collectionsOwnedCountGte, "collectionsOwnedCountGte"),
    daysSinceLastPurchaseLte: nonNegativeInt(
      body.daysSinceLastPurchaseLte,
      "daysSinceLastPurchaseLte",
    ),
  };
}

/** All filters combined with AND; a wallet that never bought fails daysSinceLastPurchaseLte. */
export function matchesFilters(wallet: WalletRec, filters: FinancialFilters): boolean {
  const priceAvg =
    wallet.purchasesCount === 0 ? 0n : wallet.purchasesVolumeWei / BigInt(wallet.purchasesCount);
  if (filters.volumeGte !== undefined && wallet.purchasesVolumeWei < filters.volumeGte) {
    return false;
  }
  if (filters.priceAvgGte !== undefined && priceAvg < filters.priceAvgGte) return false;
  if (filters.collectionsGte !== undefined && wallet.collectionsOwned < filters.collectionsGte) {
    return false;
  }
  if (filters.daysSinceLastPurchaseLte !== undefined) {
    const days = wallet.daysSinceLastPurchase;
    if (days === null || days > filters.daysSinceLastPurchaseLte) return false;
  }
  return true;
}

/** Filters travel in the JSON body beside walletAddresses (the spec leaves this open). */
export function financialStatsByWallets({ world, body }: RequestContext) {
  const request = requireObject(body);
  const resolved = walletList(world, request.walletAddresses);
  const filters = parseFilters(request);
  const known = resolved.flatMap(({ wallet }) => (wallet ? [wallet] : []));
  return financialStats(known.filter((wallet) => matchesFilters(wallet, filters)));
}

export function financialStatsByCollection(context: RequestContext) {
  const contract = requireContract(context.world, param(context, 0));
  return financialStats(ownerWallets(contract));
}

const SPEND_BUCKETS: readonly { id: string; min: bigint; max: bigint | undefined }[] = [
  { id: "SPEND_BUCKET_NONE", min: 0n, max: 1n },
  { id: "SPEND_BUCKET_UNDER_1", min: 1n, max: 10n ** 18n },
  { id: "SPEND_BUCKET_1_TO_10", min: 10n ** 18n, max: 10n ** 19n },
  { id: "SPEND_BUCKET_10_TO_100", min: 10n ** 19n, max: 10n ** 20n },
  { id: "SPEND_BUCKET_OVER_100", min: 10n ** 20n, max: undefined },
];

/**
 * Endpoint 4. The spec gives no shape for financial profiles: this nested object is invented by
 * the simulator (documented as such) and consistent with endpoint 6 over the same owners.
 */
export function financialProfile(context: RequestContext) {
  const contract = requireContract(context.world, param(context, 0));
  const wallets = ownerWallets(contract);
  const stats = financialStats(wallets);
  const totalSpend = wallets.reduce((sum, wallet) => sum + wallet.purchasesVolumeWei, 0n);
  const bucketCounts = SPEND_BUCKETS.map(
    (bucket) =>
      wallets.filter(
        (wallet) =>
          wallet.purchasesVolumeWei >= bucket.min &&
          (bucket.max === undefined || wallet.purchasesVolumeWei < bucket.max),
      ).length,
  );
  const shares = percentages(bucketCounts);
  const nftsOwned = wallets.map((wallet) => contract.owners.get(wallet.index)?.quantity ?? 0);
  return {
    financialProfile: {
      contractAddress: contract.address,
      walletsCount: stats.walletsCount,
      totalSpendNative: formatUnits(totalSpend, 18),
      spendDistribution: SPEND_BUCKETS.map((bucket, index) => ({
        bucket: bucket.id,
        minNative: formatUnits(bucket.min, 18),
        ...(bucket.max === undefined ? {} : { maxNative: formatUnits(bucket.max, 18) }),
        walletsCount: String(bucketCounts[index] ?? 0),
        walletsPercentage: shares[index] ?? 0,
      })),
      purchases: {
        countAvg: stats.nftsPurchasesCountAvg,
        volumeAvg: stats.nftsPurchasesVolumeAvg,
        priceAvg: stats.nftsPurchasesPriceAvg,
      },
      holdings: {
        collectionsOwnedCountAvg: stats.collectionsOwnedCountAvg,
        nftsOwnedInCollectionAvg: roundTo(average(nftsOwned), 4),
        fifoHoldingSpanDaysAvg: stats.nftsFifoHoldingSpanAvg,
      },
      walletAgeDays: {
        min: stats.walletAgeMin,
        max: stats.walletAgeMax,
        avg: roundTo(average(wallets.map((wallet) => wallet.walletAgeDays)), 2),
      },
    },
  };
}

/** The wallets holding a collection now. */
export function ownerWallets(contract: ContractRec): WalletRec[] {
  return [...contract.owners.values()].map((stat) => stat.wallet);
}
