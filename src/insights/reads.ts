/**
 * The insights' upstream reads: the aggregates of a community's wallets in batches of 500
 * (endpoints 1, 2 and 5), and what one wallet is (endpoints 1, 5 and 18), read in the background.
 */
import type { ApiClient } from "../api/client.ts";
import type { WalletRead } from "./store.ts";
import { HELD_MAX } from "./store.ts";

/** Endpoints 1 and 5 take at most this many wallets a call. */
export const BATCH = 500;
/** The "bought within" ladder of endpoint 5's daysSinceLastPurchaseLte filter. */
export const LAST_PURCHASE_DAYS = [30, 90, 365] as const;
/** Batches read at once (each a call): a community's aggregates come in a few seconds. */
const PARALLEL = 4;

/** What the batch reads give, stored as a day's snapshot (JSON). */
export interface Aggregates {
  /** Wallets per behavior over the members' wallets (endpoint 1). */
  behaviors: Record<string, number>;
  /** Wallets endpoint 5 matched without a filter, and their average spend figures. */
  spend: { wallets: number; volumeAvg: number; priceAvg: number; collectionsAvg: number };
  /** Wallets that bought within each number of days (endpoint 5's filter). */
  lastPurchase: { withinDays: number; wallets: number }[];
  /** The collection they were compared with (even when its read failed), lower-case. */
  compared?: string | undefined;
  /** The community's collection's owners' behavior shares (endpoint 2), when it has one. */
  collection?: { address: string; shares: Record<string, number> } | undefined;
  /** Upstream calls the aggregates took. */
  calls: number;
}

function batches<T>(items: readonly T[], size: number): T[][] {
  const out: T[][] = [];
  for (let i = 0; i < items.length; i += size) out.push(items.slice(i, i + size));
  return out;
}

/** Runs `tasks` with at most `parallel` at once, in order of their results. */
async function inParallel<T>(tasks: (() => Promise<T>)[], parallel: number): Promise<T[]> {
  const results: T[] = new Array(tasks.length);
  let next = 0;
  await Promise.all(
    Array.from({ length: Math.min(parallel, tasks.length) }, async () => {
      while (next < tasks.length) {
        const i = next++;
        results[i] = await (tasks[i] as () => Promise<T>)();
      }
    }),
  );
  return results;
}

/** A community's aggregates over its wallets; throws what the client throws. */
export async function readAggregates(
  api: ApiClient,
  wallets: readonly string[],
  collection: string | undefined,
  signal: AbortSignal | undefined,
): Promise<Aggregates> {
  const groups = batches(wallets, BATCH);
  const options = { signal };
  const tasks: (() => Promise<void>)[] = [];
  const behaviors: Record<string, number> = {};
  const spend = { wallets: 0, volume: 0, price: 0, collections: 0 };
  const within = new Map<number, number>(LAST_PURCHASE_DAYS.map((days) => [days, 0]));
  for (const group of groups) {
    tasks.push(async () => {
      const answer = await api.audiences.behaviorsByWallets(group, options);
      for (const row of answer.aggregatedBehaviors)
        behaviors[row.behavior] = (behaviors[row.behavior] ?? 0) + Number(row.walletsCount);
    });
    tasks.push(async () => {
      const stats = await api.audiences.financialStatsByWallets(group, {}, options);
      const n = Number(stats.walletsCount);
      spend.wallets += n;
      spend.volume += stats.nftsPurchasesVolumeAvg * n;
      spend.price += stats.nftsPurchasesPriceAvg * n;
      spend.collections += stats.collectionsOwnedCountAvg * n;
    });
    for (const days of LAST_PURCHASE_DAYS)
      tasks.push(async () => {
        const stats = await api.audiences.financialStatsByWallets(
          group,
          { daysSinceLastPurchaseLte: String(days) },
          options,
        );
        within.set(days, (within.get(days) ?? 0) + Number(stats.walletsCount));
      });
  }
  let shares: Record<string, number> | undefined;
  if (collection)
    tasks.push(async () => {
      // The comparison is an extra: a collection the service does not know (or a failed read)
      // leaves it out instead of the members' own figures.
      const answer = await api.audiences
        .behaviorsByCollection(collection, options)
        .catch((error: unknown) => {
          if (signal?.aborted) throw error;
          return undefined;
        });
      if (answer)
        shares = Object.fromEntries(
          answer.aggregatedBehaviors.map((row) => [row.behavior, row.walletsPercentage]),
        );
    });
  await inParallel(tasks, PARALLEL);
  const n = spend.wallets;
  return {
    behaviors,
    spend: {
      wallets: n,
      volumeAvg: n === 0 ? 0 : spend.volume / n,
      priceAvg: n === 0 ? 0 : spend.price / n,
      collectionsAvg: n === 0 ? 0 : spend.collections / n,
    },
    lastPurchase: LAST_PURCHASE_DAYS.map((days) => ({
      withinDays: days,
      wallets: within.get(days) ?? 0,
    })),
    ...(collection ? { compared: collection.toLowerCase() } : {}),
    ...(collection && shares ? { collection: { address: collection, shares } } : {}),
    calls: tasks.length,
  };
}

/** Upstream calls one wallet's read takes (readWallet). */
export const CALLS_PER_WALLET = 3;

/**
 * One wallet: its behavior (endpoint 1 with it alone), its spend (endpoint 5 with it alone) and
 * the collections it holds, spam excluded (endpoint 18). A wallet the service does not know reads
 * as no behavior and no figures, which is what it is.
 */
export async function readWallet(
  api: ApiClient,
  address: string,
  at: number,
  signal: AbortSignal | undefined,
): Promise<WalletRead> {
  const options = { signal };
  const [behaviors, stats, nfts] = await Promise.all([
    api.audiences.behaviorsByWallets([address], options),
    api.audiences.financialStatsByWallets([address], {}, options),
    api.wallets.nfts(address, { spam: "SPAM_FILTER_EXCLUDE" }, options),
  ]);
  const known = Number(stats.walletsCount) > 0;
  const held = new Map<string, string>();
  for (const item of nfts.nfts) {
    if (item.spam) continue;
    const contract = item.nft.contractAddress.toLowerCase();
    if (!held.has(contract) && held.size < HELD_MAX)
      held.set(contract, item.nft.collection?.name ?? "");
  }
  const top = [...behaviors.aggregatedBehaviors].sort(
    (a, b) => Number(b.walletsCount) - Number(a.walletsCount),
  )[0];
  return {
    address: address.toLowerCase(),
    readAt: at,
    behavior:
      top && Number(top.walletsCount) > 0 && top.behavior !== "BEHAVIOR_UNSPECIFIED"
        ? top.behavior
        : undefined,
    volume: known ? stats.nftsPurchasesVolumeAvg : undefined,
    purchases: known ? Math.round(stats.nftsPurchasesCountAvg) : undefined,
    collections: known ? Math.round(stats.collectionsOwnedCountAvg) : undefined,
    held: [...held],
  };
}
