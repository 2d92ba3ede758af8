/**
 * The timed mints (mintIntervalMs): a history that follows the clock, not a memory of what the
 * simulator minted since it started. Each slot of the interval (the clock's time divided by it)
 * has one contract per chain (mintSlot), minted at the slot's start, from HISTORY_MS before the
 * simulator started until now. A simulator started again on the same seed answers the same past
 * (the same contracts, so the same counts for the last hour or day) as one that ran through, and
 * each new slot brings a contract no run listed before. The slots are not kept in the contract
 * list: endpoint 10 reads them in the page it answers (listContracts), and a contract served once
 * is kept, so it is found by address afterwards.
 */

import { mintSlot, slotType } from "./minting.ts";
import type { ContractRec, TimedMints, WalletRec, World } from "./records.ts";
import { FUNGIBLE_CONTRACT_TYPE } from "./types.ts";
import { SECONDS_PER_DAY } from "./units.ts";

/** How far before the simulator's start the history reaches: a week (a digest counts a day). */
export const HISTORY_MS = 7 * SECONDS_PER_DAY * 1000;
/** At most this many slots of history (a very short interval reaches back less far). */
const MAX_HISTORY_SLOTS = 250_000;
/** The only types a slot's contract has (see minting.ts). */
const SLOT_TYPES: ReadonlySet<string> = new Set([
  "TYPE_ERC721",
  "TYPE_ERC1155",
  FUNGIBLE_CONTRACT_TYPE,
]);

export function timedMints(options: {
  seed: number;
  chain: string;
  intervalMs: number;
  badActorEvery: number;
  startMs: number;
  minters: () => readonly WalletRec[];
  badActor: () => string;
}): TimedMints {
  const { intervalMs, startMs } = options;
  const reach = Math.min(HISTORY_MS, MAX_HISTORY_SLOTS * intervalMs);
  return {
    ...options,
    firstSlot: Math.ceil((startMs - reach) / intervalMs),
    made: new Map(),
  };
}

/** A slot's contract (made once), known to `world` by address from now on. */
export function slotContract(timed: TimedMints, world: World, slot: number): ContractRec {
  let contract = timed.made.get(slot);
  if (!contract) {
    const { seed, chain, intervalMs, badActorEvery } = timed;
    const bad = badActorEvery > 0 && slot % badActorEvery === 0;
    const slotMint = { seed, chain, slotMs: slot * intervalMs };
    contract = mintSlot(slotMint, timed.minters(), bad ? timed.badActor() : undefined);
    timed.made.set(slot, contract);
  }
  world.contractByAddress.set(contract.address, contract);
  return contract;
}

/** Makes the slots' contracts served so far known to a world built since. */
export function knowServed(timed: TimedMints | undefined, world: World): void {
  for (const contract of timed?.made.values() ?? []) {
    if (!world.contractByAddress.has(contract.address))
      world.contractByAddress.set(contract.address, contract);
  }
}

export interface ContractsQuery {
  /** Only contracts minted after this (ms, exclusive). */
  afterMs: number | undefined;
  /** Any of these types; empty: every type. */
  types: ReadonlySet<string>;
  descending: boolean;
  offset: number;
  limit: number;
  nowMs: number;
}

const matches = (contract: ContractRec, query: ContractsQuery) =>
  (query.afterMs === undefined || contract.mintSec * 1000 > query.afterMs) &&
  (query.types.size === 0 || contract.types.some((type) => query.types.has(type)));

/**
 * Endpoint 10's page: the world's contracts and the history's slots up to now, in one order (by
 * mint time; at the same second the listed ones first), ascending or descending.
 */
export function listContracts(world: World, query: ContractsQuery): ContractRec[] {
  const listed = world.contracts.filter((contract) => matches(contract, query));
  const timed = world.timed;
  const slots = timed ? slotRange(timed, query) : undefined;
  if (!timed || !slots) {
    if (query.descending) listed.reverse();
    return listed.slice(query.offset, query.offset + query.limit);
  }
  const { intervalMs, seed, chain } = timed;
  const slotSec = (slot: number) => Math.floor((slot * intervalMs) / 1000);
  const wanted = (slot: number) =>
    query.types.size === 0 || query.types.has(slotType(seed, chain, slot * intervalMs));
  if (query.offset >= listed.length + (slots.last - slots.first + 1)) return [];
  const page: ContractRec[] = [];
  let skip = query.offset;
  const take = (item: ContractRec | number) => {
    if (skip > 0) skip--;
    else page.push(typeof item === "number" ? slotContract(timed, world, item) : item);
  };
  const step = query.descending ? -1 : 1;
  let at = query.descending ? listed.length - 1 : 0;
  let slot = query.descending ? slots.last : slots.first;
  const inRange = (s: number) => s >= slots.first && s <= slots.last;
  while (page.length < query.limit) {
    while (inRange(slot) && !wanted(slot)) slot += step;
    const contract = listed[at];
    const slotNext = inRange(slot);
    if (!contract && !slotNext) break;
    const contractFirst =
      contract !== undefined &&
      (!slotNext ||
        (query.descending ? contract.mintSec > slotSec(slot) : contract.mintSec <= slotSec(slot)));
    if (contractFirst) {
      take(contract);
      at += step;
    } else {
      take(slot);
      slot += step;
    }
  }
  return page;
}

/** The history's slots a query reaches (up to the clock's), or undefined for none. */
function slotRange(
  timed: TimedMints,
  query: ContractsQuery,
): { first: number; last: number } | undefined {
  if (query.types.size > 0 && ![...query.types].some((type) => SLOT_TYPES.has(type)))
    return undefined;
  const { intervalMs } = timed;
  let first = timed.firstSlot;
  if (query.afterMs !== undefined) {
    // Minted after afterMs: in a whole second after its second.
    const minSec = Math.floor(query.afterMs / 1000) + 1;
    first = Math.max(first, Math.ceil((minSec * 1000) / intervalMs));
  }
  const last = Math.floor(query.nowMs / intervalMs);
  return first <= last ? { first, last } : undefined;
}
