/**
 * Reading a watch: how often each part of it may be read, what its checker last saw, which watch
 * a round reads first, and what counts as a move (checker.ts reads and posts).
 */

import { chatKey } from "../outbound/outbound.ts";
import type { Watch } from "./types.ts";

/**
 * How often each kind of data may be asked for, from the service's freshness table: owner counts
 * and wallets' NFTs (ownership) every 5 minutes, behaviors (whale share) daily. Never more often.
 */
export const FRESHNESS_MS = {
  owners: 5 * 60_000,
  whales: 24 * 60 * 60_000,
  nfts: 5 * 60_000,
} as const;

/** What a watch's checker last saw (the row's `state`, as JSON). */
export interface WatchState {
  /** When each part was last read (epoch ms). */
  ownersAt?: number;
  whalesAt?: number;
  nftsAt?: number;
  /** Whether the owner count's daily move was over the threshold at the last read: -1, 0 or 1. */
  ownersOver?: number;
  /** Same for the whale share's 30-day move. */
  whalesOver?: number;
  /** The wallet's NFTs at the last read ("contract:tokenId"); undefined: never read. */
  nfts?: string[];
}

export const parseState = (text: string | null): WatchState => {
  if (!text) return {};
  try {
    return JSON.parse(text) as WatchState;
  } catch {
    return {};
  }
};

export const sign = (value: number, threshold: number) =>
  Math.abs(value) > threshold ? Math.sign(value) : 0;

/** Percent change of the last daily owner count against the one before; undefined without both. */
export function ownersDailyMove(points: readonly { count: string }[]): number | undefined {
  const last = points.at(-1);
  const previous = points.at(-2);
  if (!last || !previous) return undefined;
  const before = Number(previous.count);
  if (!(before > 0)) return undefined;
  return ((Number(last.count) - before) / before) * 100;
}

/**
 * The whale share's move over 30 days, in percentage points: today's share less the share the
 * whales 30 days ago would have had of today's owners (the spec gives the whales' 30-day change,
 * not the owners' of 30 days ago).
 */
export function whaleShareMove(
  behaviors: readonly {
    behavior: string;
    walletsCount: string;
    walletsPercentage: number;
    walletsCountChange30d?: string | undefined;
  }[],
): { share: number; move: number } {
  const whales = behaviors.find((b) => b.behavior === "BEHAVIOR_WHALE");
  if (!whales) return { share: 0, move: 0 };
  const count = Number(whales.walletsCount);
  const change = Number(whales.walletsCountChange30d ?? "0");
  if (!(count > 0)) return { share: whales.walletsPercentage, move: 0 };
  return { share: whales.walletsPercentage, move: (whales.walletsPercentage * change) / count };
}

/** When a watch's next read is due (its earliest part); never read: at once. */
function dueAt(watch: Watch): number {
  const state = parseState(watch.state);
  const due = (at: number | undefined, every: number) =>
    at === undefined ? Number.NEGATIVE_INFINITY : at + every;
  if (watch.kind === "wallet") return due(state.nftsAt, FRESHNESS_MS.nfts);
  return Math.min(
    watch.ownersPercent === null
      ? Number.POSITIVE_INFINITY
      : due(state.ownersAt, FRESHNESS_MS.owners),
    watch.whalesPoints === null
      ? Number.POSITIVE_INFINITY
      : due(state.whalesAt, FRESHNESS_MS.whales),
  );
}

/**
 * The order a round looks at the watches in, so the read budget is shared fairly: within a chat
 * the watch due longest (least recently read) first, and chats taking turns, one watch each, the
 * chat whose first watch is due longest leading. A chat with many watches gets no bigger share of
 * a scarce budget than one with a few, and a watch passed over in one round is earlier in the next.
 */
export function readOrder(watches: readonly Watch[]): Watch[] {
  const chats = new Map<string, { watch: Watch; due: number }[]>();
  for (const watch of watches) {
    const key = chatKey(watch);
    const list = chats.get(key) ?? [];
    list.push({ watch, due: dueAt(watch) });
    chats.set(key, list);
  }
  const byDue = (a: { watch: Watch; due: number }, b: { watch: Watch; due: number }) =>
    a.due - b.due || a.watch.id - b.watch.id;
  const queues = [...chats.values()].map((list) => list.sort(byDue));
  queues.sort((a, b) => byDue(a[0] as (typeof a)[0], b[0] as (typeof b)[0]));
  const out: Watch[] = [];
  for (let turn = 0; out.length < watches.length; turn++) {
    for (const queue of queues) {
      const next = queue[turn];
      if (next) out.push(next.watch);
    }
  }
  return out;
}
