/**
 * The first stage of the simulator's world (data.ts builds the rest on it): the synthetic wallets,
 * with their final behaviors, and the collections, with their tokens. The indexes of the wallets
 * and collections that fixtures are picked from are fixed here, as the rest of the world's
 * building (owners, sales, names, fixtures) relies on them.
 */

import { buildTokens, newContract, type TokenPlan, weiFromEther } from "./generate.ts";
import {
  collectionName,
  EMPTY_NAME,
  FUNGIBLE_TOKENS,
  MARKUP_NAME,
  SPAM_NAMES,
  symbolOf,
  TRICKY_NAMES,
} from "./names.ts";
import { hashSeed, Rng } from "./random.ts";
import type { ContractRec, WalletRec } from "./records.ts";
import {
  type Behavior,
  FUNGIBLE_CONTRACT_TYPE,
  SCORE_DIMENSIONS,
  type Score,
  type ScoreDimension,
  UNKNOWN_CONTRACT_TYPE,
} from "./types.ts";
import { SECONDS_PER_DAY } from "./units.ts";

const WALLET_COUNT = 3000;
const COLLECTION_COUNT = 200;

export const FIXTURE_WALLET = 7;
export const MULTI_NAME_WALLET = 11;
export const DNS_WALLET = 12;
export const SUBDOMAIN_WALLET = 13;
export const EMOJI_WALLET = 14;

export const MAIN = 0;
export const ERC1155_FIXTURE = 1;
export const EMPTY = 2;
export const MARKUP = 3;
export const HUGE_IDS = 4;
/** Pricey old collection (the CryptoPunks look-alike before the cast brought the real one). */
export const GRAIL = 5;
export const LEGACY = [6, 7, 8];
export const UNKNOWN_TYPE = 9;
export const SPAM_FIRST = 10;
const TRICKY_FIRST = SPAM_FIRST + SPAM_NAMES.length;
const TRICKY_END = TRICKY_FIRST + TRICKY_NAMES.length;

/**
 * Collections named with the simulator's test strings: the markup fixture, the tricky names and
 * the spam. They are kept for the tests of escaping, but off the first pages of the lists a
 * newcomer sees (issue "What a community sees"): they are the oldest collections, held by a few
 * wallets (TEST_STRING_HOLDERS) and sold once, long ago and for dust (data.ts).
 */
export function namedForTests(index: number): boolean {
  return index === MARKUP || (index >= SPAM_FIRST && index < TRICKY_END);
}

/** Older than any other synthetic collection (drawn at most 2,600 days and a day old). */
const TEST_STRING_MIN_AGE_DAYS = 2601;

const BEHAVIOR_WEIGHTS: readonly (readonly [Behavior, number])[] = [
  ["BEHAVIOR_WHALE", 3],
  ["BEHAVIOR_NEWBIE", 14],
  ["BEHAVIOR_CREATOR", 3],
  ["BEHAVIOR_PATRON", 6],
  ["BEHAVIOR_FLIPPER", 10],
  ["BEHAVIOR_PROGRAMMED_FLIPPER", 4],
  ["BEHAVIOR_ADVANCED", 6],
  ["BEHAVIOR_COLLECTOR", 14],
  ["BEHAVIOR_PROGRAMMED_COLLECTOR", 4],
  ["BEHAVIOR_EXPLORER", 18],
  ["BEHAVIOR_TASTEMAKER", 3],
  ["BEHAVIOR_INFLUENCER", 2],
  ["BEHAVIOR_INACTIVE", 8],
];

const SCORE_WEIGHTS: readonly (readonly [Score, number])[] = [
  ["SCORE_VERY_LOW", 2],
  ["SCORE_LOW", 3],
  ["SCORE_MED", 4],
  ["SCORE_HIGH", 2],
  ["SCORE_VERY_HIGH", 1],
];

/**
 * The first stage of a world: its synthetic wallets (with their final behaviors) and collections
 * (with their tokens, but no owners or sales yet). Cheap next to the rest, it is enough to mint on
 * and to label minters (endpoint 1), so a chain nobody asks about yet needs no more than this.
 */
export interface Population {
  seed: number;
  anchorSec: number;
  /** The synthetic wallets; building the world appends the cast's to this array. */
  wallets: WalletRec[];
  contracts: ContractRec[];
  uniqueAddress: (rng: Rng) => string;
}

export function buildPopulation(seed: number, nowMs: number): Population {
  const anchorSec = Math.floor(nowMs / 1000);
  const taken = new Set<string>();
  const uniqueAddress = (rng: Rng): string => {
    for (;;) {
      const address = rng.address();
      if (!taken.has(address)) {
        taken.add(address);
        return address;
      }
    }
  };
  const wallets = buildWallets(new Rng(hashSeed(seed, "wallets")), uniqueAddress);
  const contracts = buildContracts(
    new Rng(hashSeed(seed, "contracts")),
    anchorSec,
    wallets,
    uniqueAddress,
  );
  return { seed, anchorSec, wallets, contracts, uniqueAddress };
}

/** The wallets of the synthetic world (the cast's come after them): random minters' pool. */
export function syntheticWallets(wallets: readonly WalletRec[]): WalletRec[] {
  return wallets.filter((wallet) => wallet.index < WALLET_COUNT);
}

function buildWallets(rng: Rng, uniqueAddress: (rng: Rng) => string): WalletRec[] {
  const wallets: WalletRec[] = [];
  for (let index = 0; index < WALLET_COUNT; index++) {
    const behavior = rng.weighted(BEHAVIOR_WEIGHTS);
    const scores = {} as Record<ScoreDimension, Score>;
    for (const dimension of SCORE_DIMENSIONS) scores[dimension] = rng.weighted(SCORE_WEIGHTS);
    const quiet = behavior === "BEHAVIOR_INACTIVE" || behavior === "BEHAVIOR_NEWBIE";
    const purchasesCount =
      rng.chance(0.1) || (quiet && rng.chance(0.5))
        ? 0
        : Math.floor(rng.logFloat(1, quiet ? 6 : 400));
    const avgPriceEth = rng.logFloat(0.005, 5) * (behavior === "BEHAVIOR_WHALE" ? 10 : 1);
    const purchasesVolumeWei =
      purchasesCount === 0 ? 0n : weiFromEther(purchasesCount * avgPriceEth, rng);
    const walletAgeDays = rng.int(30, 3200);
    wallets.push({
      index,
      address: uniqueAddress(rng),
      behavior,
      scores,
      purchasesCount,
      purchasesVolumeWei,
      walletAgeDays,
      holdingSpanAvgDays: Math.round(rng.logFloat(0.5, 900) * 100) / 100,
      daysSinceLastPurchase:
        purchasesCount === 0 ? null : rng.int(0, Math.min(walletAgeDays, 1500)),
      holdings: [],
      collectionsOwned: 0,
      names: [],
    });
  }
  return wallets;
}

interface CollectionPlan extends TokenPlan {
  name: string;
  types: string[];
  spam: boolean;
  recent: boolean;
}

function planCollection(index: number, rng: Rng): CollectionPlan {
  const plan = (
    name: string,
    type: string,
    tokenCount: number,
    extra: Partial<CollectionPlan> = {},
  ): CollectionPlan => ({
    name,
    types: [type],
    tokenCount,
    spam: false,
    hugeIds: false,
    recent: rng.chance(0.2),
    ...extra,
  });
  if (index === MAIN) return plan(collectionName(rng), "TYPE_ERC721", 500, { recent: false });
  if (index === ERC1155_FIXTURE) return plan(collectionName(rng), "TYPE_ERC1155", 14);
  if (index === EMPTY) return plan(EMPTY_NAME, "TYPE_ERC721", 40);
  if (index === MARKUP) return plan(MARKUP_NAME, "TYPE_ERC721", 60);
  if (index === HUGE_IDS) return plan("Hashed Names", "TYPE_ERC721", 80, { hugeIds: true });
  if (index === GRAIL) return plan("Gilded Relics", "TYPE_ERC721", 300, { recent: false });
  if (LEGACY.includes(index)) {
    return plan(`${collectionName(rng)} (legacy)`, "TYPE_ERC721_LEGACY", rng.int(20, 120), {
      recent: false,
    });
  }
  if (index === UNKNOWN_TYPE) return plan("Hybrid 404s", UNKNOWN_CONTRACT_TYPE, 50);
  if (index >= SPAM_FIRST && index < TRICKY_FIRST) {
    const name = SPAM_NAMES[index - SPAM_FIRST] ?? "Spam";
    const type = index % 2 === 0 ? "TYPE_ERC721" : "TYPE_ERC1155";
    return plan(name, type, type === "TYPE_ERC721" ? rng.int(80, 160) : rng.int(1, 3), {
      spam: true,
      recent: true,
    });
  }
  const tricky = TRICKY_NAMES[index - TRICKY_FIRST];
  const type = rng.chance(0.25) ? "TYPE_ERC1155" : "TYPE_ERC721";
  const tokenCount = type === "TYPE_ERC1155" ? rng.int(3, 25) : Math.floor(rng.logFloat(5, 250));
  return plan(tricky ?? collectionName(rng), type, tokenCount);
}

function buildContracts(
  rng: Rng,
  anchorSec: number,
  wallets: WalletRec[],
  uniqueAddress: (rng: Rng) => string,
): ContractRec[] {
  const contracts: ContractRec[] = [];
  const base = (
    name: string,
    symbol: string,
    decimals: number,
    types: string[],
    mintSec: number,
    minter: string,
  ): ContractRec =>
    newContract({
      address: uniqueAddress(rng),
      name,
      symbol,
      decimals,
      types,
      mintSec,
      mintTx: rng.txHash(),
      minter,
    });
  const randomWallet = () => rng.pick(wallets);

  for (const token of FUNGIBLE_TOKENS) {
    const mintSec = anchorSec - rng.int(400, 2500) * SECONDS_PER_DAY - rng.int(0, 86_399);
    contracts.push(
      base(
        token.name,
        token.symbol,
        token.decimals,
        [FUNGIBLE_CONTRACT_TYPE],
        mintSec,
        randomWallet().address,
      ),
    );
  }

  // Bad actors come from the tail of the wallet list, away from the fixture wallets.
  const badActors = [wallets[2900], wallets[2901], wallets[2902]].filter(
    (wallet): wallet is WalletRec => wallet !== undefined,
  );
  for (const wallet of badActors) wallet.behavior = "BEHAVIOR_BADACTOR";

  for (let index = 0; index < COLLECTION_COUNT; index++) {
    const plan = planCollection(index, rng);
    const drawnAge = plan.spam
      ? rng.int(2, 60)
      : plan.recent
        ? rng.int(2, 360)
        : rng.int(366, 2600);
    // The age is drawn as for any collection, so the draws after it stay the same.
    const ageDays = namedForTests(index) ? TEST_STRING_MIN_AGE_DAYS + (drawnAge % 100) : drawnAge;
    const mintSec = anchorSec - ageDays * SECONDS_PER_DAY - rng.int(0, 86_399);
    let minter: WalletRec;
    if (plan.spam) {
      minter = badActors[index % badActors.length] ?? randomWallet();
    } else {
      minter = wallets[rng.int(100, 2899)] ?? randomWallet();
      if (minter.behavior !== "BEHAVIOR_BADACTOR" && rng.chance(0.5)) {
        minter.behavior = "BEHAVIOR_CREATOR";
      }
    }
    const contract = base(
      plan.name,
      plan.name === "" ? "" : symbolOf(plan.name),
      0,
      plan.types,
      mintSec,
      minter.address,
    );
    contract.nftType = plan.types[0];
    contract.spam = plan.spam;
    contract.groupsRareBehaviors = index >= TRICKY_FIRST && index % 9 === 4;
    buildTokens(rng, contract, plan, anchorSec);
    contracts.push(contract);
  }
  return contracts;
}
