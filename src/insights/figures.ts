/**
 * The insights' arithmetic, apart from any I/O: people from their wallets' reads, quartiles, the
 * collections held counted per person, and the 5-person floor applied to every aggregate.
 */
import type { CommandServices } from "../core/command.ts";
import type { WalletRead } from "./store.ts";
import {
  type BehaviorShare,
  type HeldCollection,
  MIN_PEOPLE,
  type SpendFigure,
  type TrendPoint,
} from "./types.ts";

/** A member with their proved wallets (lower-case addresses for reads, as proved for display). */
export interface Person {
  userId: string;
  name: string | undefined;
  since: number;
  /** As proved (checksummed). */
  wallets: string[];
  private: boolean;
  /** Simulated people of the console's community (never stored). */
  simulated?: boolean;
}

/** What is known of a person from their wallets' reads. */
export interface PersonFigures {
  /** Wallets read / wallets. */
  read: number;
  behaviors: string[];
  volume: number | undefined;
  purchases: number | undefined;
  avgPrice: number | undefined;
  collections: number | undefined;
  held: Set<string>;
}

/**
 * The wallets with a behavior: the service's "unspecified" is a wallet it knows nothing of (made
 * up, or never active), not a kind of member.
 */
export function labelled(behaviors: Readonly<Record<string, number>>): [string, number][] {
  return Object.entries(behaviors).filter(([behavior]) => behavior !== "BEHAVIOR_UNSPECIFIED");
}

/** A person's figures over their wallets' reads (those read; undefined before any is). */
export function personFigures(
  wallets: readonly string[],
  reads: ReadonlyMap<string, WalletRead>,
): PersonFigures {
  const behaviors = new Set<string>();
  const held = new Set<string>();
  let read = 0;
  let volume: number | undefined;
  let purchases: number | undefined;
  let collections: number | undefined;
  for (const wallet of wallets) {
    const r = reads.get(wallet.toLowerCase());
    if (!r) continue;
    read++;
    if (r.behavior) behaviors.add(r.behavior);
    if (r.volume !== undefined) volume = (volume ?? 0) + r.volume;
    if (r.purchases !== undefined) purchases = (purchases ?? 0) + r.purchases;
    if (r.collections !== undefined) collections = Math.max(collections ?? 0, r.collections);
    for (const [address] of r.held) held.add(address);
  }
  // Distinct collections over the wallets: the union of what they hold, at least the most any one
  // wallet holds (a wallet's list is kept to its first HELD_MAX).
  if (read > 0) collections = Math.max(collections ?? 0, held.size);
  return {
    read,
    behaviors: [...behaviors],
    volume,
    purchases,
    avgPrice:
      volume !== undefined && purchases !== undefined && purchases > 0
        ? volume / purchases
        : undefined,
    collections,
    held,
  };
}

/** Quartiles by linear interpolation between closest ranks (as spreadsheets' QUARTILE.INC). */
export function quartiles(values: readonly number[]): [number, number, number] | undefined {
  if (values.length === 0) return undefined;
  const sorted = [...values].sort((a, b) => a - b);
  const at = (p: number) => {
    const rank = p * (sorted.length - 1);
    const low = Math.floor(rank);
    const high = Math.ceil(rank);
    const lo = sorted[low] as number;
    const hi = sorted[high] as number;
    return lo + (hi - lo) * (rank - low);
  };
  return [at(0.25), at(0.5), at(0.75)];
}

/** A spend figure's quartiles over the people who have it, withheld below the floor. */
export function spendFigure(
  figure: SpendFigure["figure"],
  values: readonly (number | undefined)[],
): SpendFigure {
  const known = values.filter((value): value is number => value !== undefined);
  const q = known.length >= MIN_PEOPLE ? quartiles(known) : undefined;
  return { figure, people: known.length, q1: q?.[0], median: q?.[1], q3: q?.[2] };
}

/** A count shown only from the floor up. */
export function floored(count: number): number | undefined {
  return count >= MIN_PEOPLE ? count : undefined;
}

/**
 * The collections most held among people, each person counted once however many of their
 * wallets hold it; those held by fewer than the floor are left out.
 */
export function topHeld(
  people: Iterable<Set<string>>,
  nameOf: (address: string) => string,
  limit = 10,
): HeldCollection[] {
  const counts = new Map<string, number>();
  for (const held of people)
    for (const address of held) counts.set(address, (counts.get(address) ?? 0) + 1);
  return [...counts]
    .filter(([, people]) => people >= MIN_PEOPLE)
    .sort((a, b) => b[1] - a[1] || a[0].localeCompare(b[0]))
    .slice(0, limit)
    .map(([address, people]) => ({ address, name: nameOf(address), people }));
}

/** "2026-11-28" for an epoch ms (UTC): a snapshot's day. */
export function dayOf(at: number): string {
  return new Date(at).toISOString().slice(0, 10);
}

/** The daily snapshots as the trend's points: behavior shares from the floor up. */
export function trendOf(
  rows: readonly { day: string; members: number; wallets: number; data: string }[],
): TrendPoint[] {
  return rows.map((row) => {
    const data = JSON.parse(row.data) as { behaviors: Record<string, number> };
    const rows = labelled(data.behaviors);
    const total = rows.reduce((sum, [, wallets]) => sum + wallets, 0);
    const shares: Record<string, number> = {};
    for (const [behavior, wallets] of rows)
      if (wallets >= MIN_PEOPLE && total > 0) shares[behavior] = (100 * wallets) / total;
    return { day: row.day, members: row.members, wallets: row.wallets, shares };
  });
}

/** The behavior breakdown of the members' wallets, largest first, beside the collection's. */
export function behaviorShares(
  aggregates:
    | {
        behaviors: Record<string, number>;
        collection?: { shares: Record<string, number> } | undefined;
      }
    | undefined,
): BehaviorShare[] {
  const rows = labelled(aggregates?.behaviors ?? {});
  const total = rows.reduce((sum, [, wallets]) => sum + wallets, 0);
  return rows
    .sort((a, b) => b[1] - a[1])
    .map(([behavior, wallets]) => {
      const shown = floored(wallets);
      return {
        behavior,
        wallets: shown,
        share: shown === undefined || total === 0 ? undefined : (100 * wallets) / total,
        collectionShare: aggregates?.collection?.shares[behavior],
      };
    });
}

/** Each spend figure's quartiles over the members read so far. */
export function spendFigures(figures: readonly PersonFigures[]): SpendFigure[] {
  return (["volume", "avgPrice", "purchases", "collections"] as const).map((figure) =>
    spendFigure(
      figure,
      figures.map((f) => f[figure]),
    ),
  );
}

/**
 * Each behavior's share of a group of people (a person counts in each behavior one of their
 * wallets has) beside its share of everyone: those held by fewer than the floor left out.
 */
export function peopleShares(
  group: readonly Person[],
  everyone: readonly Person[],
  figures: ReadonlyMap<string, PersonFigures>,
): { behavior: string; share: number; overall: number }[] {
  const count = (people: readonly Person[]) => {
    const counts = new Map<string, number>();
    for (const person of people)
      for (const behavior of figures.get(person.userId)?.behaviors ?? [])
        counts.set(behavior, (counts.get(behavior) ?? 0) + 1);
    return counts;
  };
  const inGroup = count(group);
  const overall = count(everyone);
  return [...inGroup]
    .filter(([, n]) => n >= MIN_PEOPLE)
    .sort((a, b) => b[1] - a[1])
    .map(([behavior, n]) => ({
      behavior,
      share: (100 * n) / group.length,
      overall: (100 * (overall.get(behavior) ?? 0)) / Math.max(1, everyone.length),
    }));
}

/** Each gate of a community with the people it admits now. */
export type Admitted = Awaited<ReturnType<NonNullable<CommandServices["gates"]>["admitted"]>>;

/** A community's people and what is read of them, kept a minute for the page's many reads. */
export interface Known {
  at: number;
  people: Person[];
  figures: Map<string, PersonFigures>;
  wallets: string[];
  read: number;
  admitted: Admitted;
  /** Collections' names as the wallets' NFTs gave them, by lower-case address. */
  names: Map<string, string>;
}
