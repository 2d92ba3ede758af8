/**
 * The simulator's chains, each a world of its own, built no sooner than needed: its population
 * (wallets and collections) when first asked about (its timed mints' minters included), the whole
 * world when a request needs more than the population answers alike.
 */

import {
  BUILT_CONTRACTS_MIN_AGE_SEC,
  buildPopulation,
  buildWorld,
  type Population,
  populationWorld,
  syntheticWallets,
} from "./data.ts";
import { knowServed } from "./history.ts";
import type { Body } from "./http.ts";
import { hashSeed, Rng } from "./random.ts";
import type { TimedMints, WalletRec, World } from "./records.ts";
import { parseTimestamp } from "./units.ts";
import { withChanges } from "./watches.ts";

/** The simulator's chains with spam detection (the service has it on two chains). */
export const SPAM_CHAINS: ReadonlySet<string> = new Set(["ethereum", "polygon"]);

export interface ChainState {
  id: string;
  spam: boolean;
  mintRng: Rng;
  /** The timed mints' history (history.ts), listed in both its worlds; undefined without. */
  timed: TimedMints | undefined;
  /** Its world's seed. */
  seed: number;
  /** Where its world is anchored, whenever it is built: the simulator's start, for every chain. */
  anchorMs: number;
  /** A world given to share (the first chain's, SimulatorOptions.world): never changed. */
  given: World | undefined;
  /** Not the first chain: its world is this simulator's own (the first's may be shared). */
  own: boolean;
  /**
   * Its wallets and collections, built when first needed (a mint, or a request), and continued
   * into `full` when a request needs more (see worldFor).
   */
  population: Population | undefined;
  /** The population's world, until `full` is built. */
  light: World | undefined;
  full: World | undefined;
  /** Where the timed mints' random minters come from: the synthetic wallets. */
  minters: readonly WalletRec[] | undefined;
}

/** The chains served, by id, none built yet; the first is the one `given` (if any) is of. */
export function chainStates(
  seed: number,
  chainIds: readonly string[],
  given: World | undefined,
  anchorMs: number,
): Map<string, ChainState> {
  const states = new Map<string, ChainState>();
  for (const [index, id] of chainIds.entries()) {
    states.set(id, {
      id,
      spam: SPAM_CHAINS.has(id),
      mintRng: new Rng(hashSeed(seed, index === 0 ? "minting" : `minting:${id}`)),
      timed: undefined,
      seed: index === 0 ? seed : hashSeed(seed, `chain:${id}`),
      anchorMs,
      given: index === 0 ? given : undefined,
      own: index > 0,
      population: undefined,
      light: undefined,
      full: undefined,
      minters: undefined,
    });
  }
  return states;
}

/** The one path the new-contract poller reads: endpoint 10, and endpoint 1 for the minters. */
const CONTRACTS_PATTERN = "/foundational/v1beta2/contracts";
const BEHAVIORS_PATTERN = "/audiences/v1beta1/behaviors/by_wallets";

/** A chain's whole world, built (from its population, if that was) the first time it is asked for. */
export function fullWorld(state: ChainState): World {
  if (state.full) return state.full;
  const built =
    state.given ??
    buildWorld(state.seed, state.anchorMs, state.population, { spam: state.spam || !state.own });
  // Minting (and serving the timed mints) adds to the contract list and index, and changes no
  // record: with copies of those two, a data set shared with other simulators never sees this
  // one's mints.
  const world: World = withChanges({
    ...built,
    contracts: [...built.contracts],
    contractByAddress: new Map(built.contractByAddress),
  });
  // A world of this simulator's own (the first may be shared): no spam on a chain without it.
  if (!state.spam && state.own) for (const contract of world.contracts) contract.spam = false;
  world.timed = state.timed;
  knowServed(state.timed, world);
  state.full = world;
  state.light = undefined;
  return world;
}

/** The world built so far: the whole one once built, else the population's. */
export function currentWorld(state: ChainState): World {
  if (state.full || state.given) return fullWorld(state);
  state.population ??= buildPopulation(state.seed, state.anchorMs);
  if (!state.light) {
    state.light = populationWorld(state.population);
    state.light.timed = state.timed;
  }
  return state.light;
}

/**
 * The world that answers a request: the population's while it answers it as the whole world
 * would (so the pollers of chains nobody asked about yet need no more), else the whole one.
 */
export function worldFor(
  state: ChainState,
  pattern: string,
  query: URLSearchParams,
  body: Body,
): World {
  if (state.full || state.given) return fullWorld(state);
  const light = currentWorld(state);
  if (pattern === CONTRACTS_PATTERN) {
    // Every built contract is older than this: what was minted after it is all in `light`.
    const after = parseTimestamp(query.get("blockTimestampGt") ?? "");
    if (after !== undefined && after >= (light.anchorSec - BUILT_CONTRACTS_MIN_AGE_SEC) * 1000)
      return light;
  }
  if (pattern === BEHAVIORS_PATTERN && body.kind === "json") {
    // Synthetic wallets' behaviors are final in the population; the cast's and names are not.
    const wallets = (body.value as { walletAddresses?: unknown } | null)?.walletAddresses;
    if (
      Array.isArray(wallets) &&
      wallets.every(
        (wallet) => typeof wallet === "string" && light.walletByAddress.has(wallet.toLowerCase()),
      )
    )
      return light;
  }
  return fullWorld(state);
}

/** The timed mints' random minters of a chain: its synthetic wallets. */
export function mintersOf(state: ChainState): readonly WalletRec[] {
  state.minters ??= syntheticWallets(currentWorld(state).wallets);
  return state.minters;
}

/** How much of a chain's data set is built (Simulator.built). */
export function builtOf(state: ChainState): "nothing" | "population" | "world" {
  return state.full || state.given ? "world" : state.population ? "population" : "nothing";
}
