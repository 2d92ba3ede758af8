/** Collections, endpoints 15 to 17 (version segment v1beta2). */

import { badRequest } from "./errors.ts";
import { page, parseEnum, queryPaging, requireContract } from "./params.ts";
import type { ContractRec, SaleRec } from "./records.ts";
import { param, type RequestContext, type Route } from "./router.ts";
import {
  DURATION_DAYS,
  GROUP_BY_PERIOD_DAYS,
  METRICS,
  type Metric,
  SORT_DIRECTIONS,
} from "./types.ts";
import { compareText, formatUnits, isoSeconds, parseTimestamp, SECONDS_PER_DAY } from "./units.ts";
import { bumpedOwners } from "./watches.ts";

const MS_PER_DAY = SECONDS_PER_DAY * 1000;

export const collectionRoutes: Route[] = [
  { method: "GET", pattern: "/collections/v1beta2/top/:metric/:duration", handler: top },
  { method: "GET", pattern: "/collections/v1beta2/:contract/owners_list", handler: ownersList },
  {
    method: "GET",
    pattern: "/collections/v1beta2/:contract/owners_count/:duration/:period",
    handler: ownersCount,
  },
];

function requireEnum<T extends string>(value: string, allowed: readonly T[], name: string): T {
  const parsed = parseEnum(value, allowed, name);
  if (parsed === undefined) throw badRequest(`${name} is required`);
  return parsed;
}

interface SalesTally {
  contract: ContractRec;
  volume: bigint;
  count: number;
  max: bigint;
}

/**
 * A data set's sales in time order, and the tallies of the windows asked for lately, by the range
 * of that order they cover: a window holding the same sales has the same tallies, and as the
 * clock moves a window's ends pass a sale only now and then. Endpoint 15 otherwise adds up all
 * 26,000 sales on every request (the data set is never changed once built; tallies are only read).
 */
interface SalesIndex {
  bySec: SaleRec[];
  windows: Map<string, readonly SalesTally[]>;
}

const salesIndexes = new WeakMap<readonly SaleRec[], SalesIndex>();
const MAX_WINDOWS = 64;

/** The position of the first sale after `sec` in sales sorted by time. */
function firstAfter(bySec: readonly SaleRec[], sec: number): number {
  let low = 0;
  let high = bySec.length;
  while (low < high) {
    const middle = (low + high) >>> 1;
    if ((bySec[middle] as SaleRec).sec <= sec) low = middle + 1;
    else high = middle;
  }
  return low;
}

/** Per collection, the sales in (fromSec, toSec]. */
function tallyWindow(sales: readonly SaleRec[], fromSec: number, toSec: number) {
  let index = salesIndexes.get(sales);
  if (!index) {
    index = { bySec: [...sales].sort((a, b) => a.sec - b.sec), windows: new Map() };
    salesIndexes.set(sales, index);
  }
  const first = firstAfter(index.bySec, fromSec);
  const end = firstAfter(index.bySec, toSec);
  const key = `${first}:${end}`;
  const known = index.windows.get(key);
  if (known) return known;
  const tallies = new Map<ContractRec, SalesTally>();
  for (let i = first; i < end; i++) {
    const sale = index.bySec[i] as SaleRec;
    const contract = sale.token.contract;
    let tally = tallies.get(contract);
    if (!tally) {
      tally = { contract, volume: 0n, count: 0, max: 0n };
      tallies.set(contract, tally);
    }
    tally.volume += sale.totalWei;
    tally.count += 1;
    if (sale.totalWei > tally.max) tally.max = sale.totalWei;
  }
  const result = [...tallies.values()];
  if (index.windows.size >= MAX_WINDOWS) index.windows.clear();
  index.windows.set(key, result);
  return result;
}

function metricValue(tally: SalesTally, metric: Metric): bigint {
  if (metric === "METRIC_SALES_QUANTITY") return BigInt(tally.count);
  return metric === "METRIC_SALES_VOLUME" ? tally.volume : tally.max;
}

/**
 * Endpoint 15: collections with at least one sale in (now - duration, now], ranked by the metric
 * descending (then address). Each item carries only the requested metric's field.
 */
function top(context: RequestContext) {
  const metric = requireEnum(param(context, 0), METRICS, "metric");
  const duration = requireEnum(param(context, 1), Object.keys(DURATION_DAYS), "duration");
  const paging = queryPaging(context.query);
  const nowSec = context.now() / 1000;
  const fromSec = nowSec - (DURATION_DAYS[duration] ?? 0) * SECONDS_PER_DAY;
  const ranked = [...tallyWindow(context.world.sales, fromSec, nowSec)].sort((a, b) => {
    const left = metricValue(a, metric);
    const right = metricValue(b, metric);
    return (
      (left < right ? 1 : left > right ? -1 : 0) ||
      compareText(a.contract.address, b.contract.address)
    );
  });
  return {
    collections: page(ranked, paging).map((tally) => ({
      contractAddress: tally.contract.address,
      contractName: tally.contract.name,
      ...(metric === "METRIC_SALES_VOLUME" ? { salesVolume: formatUnits(tally.volume, 18) } : {}),
      ...(metric === "METRIC_SALES_QUANTITY" ? { salesCount: String(tally.count) } : {}),
      ...(metric === "METRIC_MAX_PRICE" ? { maxPrice: formatUnits(tally.max, 18) } : {}),
    })),
  };
}

/** Endpoint 16: by owned quantity, descending unless SORT_DIRECTION_ASC; ties by address. */
function ownersList(context: RequestContext) {
  const contract = requireContract(context.world, param(context, 0));
  const paging = queryPaging(context.query);
  const direction = parseEnum(context.query.get("sortDirection"), SORT_DIRECTIONS, "sortDirection");
  const sign = direction === "SORT_DIRECTION_ASC" ? 1 : -1;
  const sorted = [...contract.owners.values()].sort(
    (a, b) => sign * (a.quantity - b.quantity) || compareText(a.wallet.address, b.wallet.address),
  );
  return {
    owner: page(sorted, paging).map((stat) => ({
      address: stat.wallet.address,
      ownedCount: String(stat.quantity),
    })),
  };
}

/** Owners on a given UTC day: today's count after the data set's anchor day, 0 before minting. */
function ownersOnDay(contract: ContractRec, day: number, anchorDay: number): number {
  const series = contract.ownerSeries;
  if (series.length === 0) return 0;
  const daysAgo = anchorDay - day;
  if (daysAgo <= 0) return series[0] ?? 0;
  if (day < Math.floor(contract.mintSec / SECONDS_PER_DAY)) return 0;
  return series[Math.min(daysAgo, series.length - 1)] ?? 0;
}

/**
 * Endpoint 17: one point per period in the `duration` that ends at timestampLt (exclusive;
 * default now), each stamped with the start of its UTC day, oldest first.
 */
function ownersCount(context: RequestContext) {
  const contract = requireContract(context.world, param(context, 0));
  const duration = requireEnum(param(context, 1), Object.keys(DURATION_DAYS), "duration");
  const period = requireEnum(param(context, 2), Object.keys(GROUP_BY_PERIOD_DAYS), "groupByPeriod");
  const endText = context.query.get("timestampLt");
  let endMs = context.now();
  if (endText !== null && endText !== "") {
    const parsed = parseTimestamp(endText);
    if (parsed === undefined) throw badRequest("timestampLt must be an RFC 3339 timestamp");
    endMs = parsed;
  }
  const days = DURATION_DAYS[duration] ?? 1;
  const periodDays = GROUP_BY_PERIOD_DAYS[period] ?? 1;
  const lastDay = Math.floor((endMs - 1) / MS_PER_DAY);
  const points = Math.floor(days / periodDays);
  const dataPoints = [];
  for (let i = points - 1; i >= 0; i--) {
    const day = lastDay - i * periodDays;
    const count = ownersOnDay(contract, day, context.world.anchorDay);
    // Today's point (no timestampLt) carries the owner jumps made on demand (bumpOwners).
    const latest = i === 0 && (endText === null || endText === "");
    dataPoints.push({
      timestamp: isoSeconds(day * SECONDS_PER_DAY),
      count: String(latest ? bumpedOwners(context.world, contract, count) : count),
    });
  }
  return { dataPoints };
}
