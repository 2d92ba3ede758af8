/** Audience insights, endpoints 1 to 9 (version segment v1beta1). */

import { badRequest, notFound } from "./errors.ts";
import {
  financialProfile,
  financialStatsByCollection,
  financialStatsByWallets,
  matchesFilters,
  ownerWallets,
  parseFilters,
} from "./financial.ts";
import {
  nonNegativeInt,
  page,
  parseAddress,
  parseEnsName,
  parseEnum,
  parsePaging,
  requireContract,
  requireObject,
  walletList,
} from "./params.ts";
import type { ContractRec, WalletRec, World } from "./records.ts";
import { param, type RequestContext, type Route } from "./router.ts";
import {
  type AggregatedBehaviorJson,
  BEHAVIOR_OTHER,
  type Behavior,
  COLLECTIONS_CONDITIONS,
  DURATION_DAYS,
  SCORE_DIMENSIONS,
  type WalletBehaviorJson,
} from "./types.ts";
import { apportion, compareText as compare, formatUnits, percentages } from "./units.ts";
import { extraWhales } from "./watches.ts";

const TOP_COLLECTIONS = 30;
/** Categories under this share of a collection's owners fold into BEHAVIOR_OTHER. */
const RARE_SHARE_PERCENT = 5;
const DAYS_IN_CHANGE_WINDOW = 30;

export const audienceRoutes: Route[] = [
  { method: "POST", pattern: "/audiences/v1beta1/behaviors/by_wallets", handler: byWallets },
  {
    method: "GET",
    pattern: "/audiences/v1beta1/behaviors/by_collection/:contract",
    handler: byCollection,
  },
  {
    method: "GET",
    pattern: "/audiences/v1beta1/behaviors/by_collection/:contract/details",
    handler: byCollectionDetails,
  },
  {
    method: "GET",
    pattern: "/audiences/v1beta1/financial_profiles/by_collection/:contract",
    handler: financialProfile,
  },
  {
    method: "POST",
    pattern: "/audiences/v1beta1/financial_stats/by_wallets",
    handler: financialStatsByWallets,
  },
  {
    method: "GET",
    pattern: "/audiences/v1beta1/financial_stats/by_collection/:contract",
    handler: financialStatsByCollection,
  },
  { method: "GET", pattern: "/audiences/v1beta1/common/collections/:contract", handler: common },
  {
    method: "GET",
    pattern: "/audiences/v1beta1/common/collections/:contract/trends",
    handler: commonTrends,
  },
  { method: "POST", pattern: "/audiences/v1beta1/segmented_audience", handler: segmentedAudience },
];

interface BehaviorGroup {
  behavior: string;
  count: number;
  change: number;
}

/** Sorted by wallet count, descending; percentages sum to 100 (two decimals). */
function toAggregated(groups: BehaviorGroup[], withChange: boolean): AggregatedBehaviorJson[] {
  const sorted = groups
    .filter((group) => group.count > 0 || group.change !== 0)
    .sort((a, b) => b.count - a.count || compare(a.behavior, b.behavior));
  const shares = percentages(sorted.map((group) => group.count));
  return sorted.map((group, index) => ({
    behavior: group.behavior,
    walletsCount: String(group.count),
    walletsPercentage: shares[index] ?? 0,
    ...(withChange ? { walletsCountChange30d: String(group.change) } : {}),
  }));
}

function countBehaviors(behaviors: readonly string[]): Map<string, number> {
  const counts = new Map<string, number>();
  for (const behavior of behaviors) counts.set(behavior, (counts.get(behavior) ?? 0) + 1);
  return counts;
}

function byWallets({ world, body }: RequestContext) {
  const wallets = walletList(world, requireObject(body).walletAddresses);
  const counts = countBehaviors(
    wallets.map(({ wallet }): Behavior => wallet?.behavior ?? "BEHAVIOR_UNSPECIFIED"),
  );
  const groups = [...counts].map(([behavior, count]) => ({ behavior, count, change: 0 }));
  return { aggregatedBehaviors: toAggregated(groups, false) };
}

/** ownerSeries value k days back, 0 for contracts without a series. */
function ownersDaysAgo(contract: ContractRec, days: number): number {
  const series = contract.ownerSeries;
  if (series.length === 0) return 0;
  return series[Math.min(days, series.length - 1)] ?? 0;
}

/**
 * Behavior summary of a collection's owners. The 30-day change of the whole audience (from the
 * owner-count series) is apportioned over the categories, so the changes sum to it.
 */
export function collectionBehaviors(
  contract: ContractRec,
  /** Whales who joined within the window (moveWhales): counted as owners and as change. */
  newWhales = 0,
): AggregatedBehaviorJson[] {
  const counts = [...countBehaviors(ownerWallets(contract).map((wallet) => wallet.behavior))];
  const total = contract.owners.size + newWhales;
  const delta = contract.owners.size - ownersDaysAgo(contract, DAYS_IN_CHANGE_WINDOW);
  const changes = apportion(
    delta,
    counts.map(([, count]) => count),
  );
  let groups: BehaviorGroup[] = counts.map(([behavior, count], index) => ({
    behavior,
    count,
    change: changes[index] ?? 0,
  }));
  if (newWhales > 0) {
    const whales = groups.find((group) => group.behavior === "BEHAVIOR_WHALE");
    if (whales) {
      whales.count += newWhales;
      whales.change += newWhales;
    } else groups.push({ behavior: "BEHAVIOR_WHALE", count: newWhales, change: newWhales });
  }
  if (contract.groupsRareBehaviors) {
    const isRare = (group: BehaviorGroup) => group.count * 100 < total * RARE_SHARE_PERCENT;
    const rare = groups.filter(isRare);
    if (rare.length > 0) {
      groups = groups.filter((group) => !isRare(group));
      groups.push({
        behavior: BEHAVIOR_OTHER,
        count: rare.reduce((sum, group) => sum + group.count, 0),
        change: rare.reduce((sum, group) => sum + group.change, 0),
      });
    }
  }
  return toAggregated(groups, true);
}

function byCollection(context: RequestContext) {
  const contract = requireContract(context.world, param(context, 0));
  return {
    aggregatedBehaviors: collectionBehaviors(contract, extraWhales(context.world, contract)),
  };
}

function walletBehaviorJson(wallet: WalletRec): WalletBehaviorJson {
  const json = { address: wallet.address, behavior: wallet.behavior } as WalletBehaviorJson;
  for (const dimension of SCORE_DIMENSIONS) json[dimension] = wallet.scores[dimension];
  return json;
}

function byCollectionDetails(context: RequestContext) {
  const contract = requireContract(context.world, param(context, 0));
  const wallets = ownerWallets(contract).sort((a, b) => compare(a.address, b.address));
  return { walletBehaviors: wallets.map(walletBehaviorJson) };
}

interface CommonEntry {
  contract: ContractRec;
  common: number;
}

/** Top 30 non-spam collections sharing owners with `contract`, by shared owners descending. */
export function commonCollections(contract: ContractRec): CommonEntry[] {
  const common = new Map<ContractRec, number>();
  for (const { wallet } of contract.owners.values()) {
    const seen = new Set<ContractRec>();
    for (const { token } of wallet.holdings) {
      const other = token.contract;
      if (other === contract || other.spam || seen.has(other)) continue;
      seen.add(other);
      common.set(other, (common.get(other) ?? 0) + 1);
    }
  }
  return [...common]
    .map(([other, count]) => ({ contract: other, common: count }))
    .sort(
      (a, b) =>
        b.common - a.common ||
        b.contract.owners.size - a.contract.owners.size ||
        compare(a.contract.address, b.contract.address),
    )
    .slice(0, TOP_COLLECTIONS);
}

function common(context: RequestContext) {
  const contract = requireContract(context.world, param(context, 0));
  return {
    collections: commonCollections(contract).map((entry) => ({
      contractAddress: entry.contract.address,
      name: entry.contract.name,
      minterAddress: entry.contract.minter,
      commonOwnersCount: String(entry.common),
      ownersCount: String(entry.contract.owners.size),
    })),
  };
}

function commonTrends(context: RequestContext) {
  const contract = requireContract(context.world, param(context, 0));
  const duration = parseEnum(context.query.get("duration"), Object.keys(DURATION_DAYS), "duration");
  if (duration === undefined) throw badRequest("duration is required");
  const days = DURATION_DAYS[duration] ?? 0;
  return {
    collections: commonCollections(contract).map((entry) => ({
      contractAddress: entry.contract.address,
      name: entry.contract.name,
      ownersCountChange: String(entry.contract.owners.size - ownersDaysAgo(entry.contract, days)),
      commonOwnersCount: String(entry.common),
    })),
  };
}

interface SegmentCollection {
  contract: ContractRec;
  minDistinct: number;
}

function parseSegmentCollections(world: World, value: unknown): SegmentCollection[] {
  if (!Array.isArray(value) || value.length === 0 || value.length > 2) {
    throw badRequest("collections must hold 1 or 2 entries");
  }
  return value.map((item: unknown) => {
    const entry = requireObject(item);
    const reference = entry.contractAddress;
    if (typeof reference !== "string") throw badRequest("collections[].contractAddress missing");
    let address: string;
    if (reference.startsWith("0x") && !reference.includes(".")) {
      address = parseAddress(reference, "collections[].contractAddress");
    } else {
      const record = world.ens.get(parseEnsName(reference));
      if (!record) throw badRequest(`ENS name ${reference} is not registered`);
      address = record.wallet.address;
    }
    const contract = world.contractByAddress.get(address);
    if (!contract) throw notFound(`contract ${address} not found`);
    const minimum = nonNegativeInt(entry.nftsOwnedCountGte, "collections[].nftsOwnedCountGte");
    // A wallet is in a collection's audience only if it holds at least one of its NFTs.
    return { contract, minDistinct: Math.max(1, minimum ?? 1) };
  });
}

/**
 * Endpoint 9. CONDITION_UNSPECIFIED behaves as CONDITION_ALL. Sorted by total spend
 * (purchase volume) descending, then address.
 */
function segmentedAudience({ world, body }: RequestContext) {
  const request = requireObject(body);
  const collections = parseSegmentCollections(world, request.collections);
  const rawCondition = request.collectionsCondition ?? undefined;
  if (rawCondition !== undefined && typeof rawCondition !== "string") {
    throw badRequest("collectionsCondition must be a string");
  }
  const condition = parseEnum(rawCondition, COLLECTIONS_CONDITIONS, "collectionsCondition");
  const filters = parseFilters(request);
  const paging = parsePaging(request.limit, request.offset);
  const audiences = collections.map(({ contract, minDistinct }) => {
    const members = new Set<WalletRec>();
    for (const stat of contract.owners.values()) {
      if (stat.distinct >= minDistinct) members.add(stat.wallet);
    }
    return members;
  });
  const [first = new Set<WalletRec>(), second] = audiences;
  let matched = [...first];
  if (second) {
    matched =
      condition === "CONDITION_ANY"
        ? [...new Set([...first, ...second])]
        : matched.filter((wallet) => second.has(wallet));
  }
  const wallets = matched
    .filter((wallet) => matchesFilters(wallet, filters))
    .sort(
      (a, b) =>
        (a.purchasesVolumeWei < b.purchasesVolumeWei
          ? 1
          : a.purchasesVolumeWei > b.purchasesVolumeWei
            ? -1
            : 0) || compare(a.address, b.address),
    );
  return {
    wallets: page(wallets, paging).map((wallet) => ({
      walletAddress: wallet.address,
      totalSpend: formatUnits(wallet.purchasesVolumeWei, 18),
    })),
  };
}
