/**
 * The fixed cast: well-known mainnet names and addresses (vitalik.eth, Bored Ape Yacht Club,
 * CryptoPunks…) living in the seeded world, so that the names people type, and the examples of
 * the README and /help, answer with data. Only names, symbols, contract types and addresses are
 * real. Holders come from the synthetic wallets, and tokens, ownership, owner counts and sales are
 * drawn by the same generators as the rest of the world, from the cast's own seeded streams, so
 * the synthetic part stays as it was and every endpoint's aggregates agree.
 */

import {
  assignOwners,
  buildOwnerSeries,
  buildTokens,
  drawSales,
  newContract,
  recordHoldings,
  saleRecorder,
  weiFromEther,
  YEAR,
} from "./generate.ts";
import { hashSeed, Rng } from "./random.ts";
import type { ContractRec, EnsRec, SaleRec, WalletRec } from "./records.ts";
import type { Behavior, Score, ScoreDimension } from "./types.ts";
import { SECONDS_PER_DAY } from "./units.ts";

export interface CastCollection {
  /** Mainnet address, checksummed as published. */
  address: string;
  name: string;
  symbol: string;
  type: string;
  supply: number;
  firstId: number;
  /** Day of deployment; capped at a year before the data set's "now". */
  deployed: string;
  /** Price level of an ordinary sale, in ETH. */
  priceEth: number;
  salesPerYear: number;
  /** How many wallets of the world hold it. */
  holders: number;
  /** Part of the holders that come from another cast collection's (MAYC owners hold BAYC). */
  heldWith?: { symbol: string; share: number };
  /** A rare piece sold in the last day for about this much (ETH): blue chips top every list. */
  grailEth: number;
}

export interface CastWallet {
  /** Mainnet address, checksummed as published. */
  address: string;
  /** ENS names, primary first, with the day each was registered; DNS names have no expiry. */
  names: readonly { name: string; since: string; dns?: boolean }[];
  behavior: Behavior;
  scores: Record<ScoreDimension, Score>;
  /** Day of the wallet's first transaction (its age is counted from it). */
  firstSeen: string;
  purchasesCount: number;
  purchasesVolumeEth: number;
  holdingSpanAvgDays: number;
  daysSinceLastPurchase: number;
  /** Token ids held, by collection symbol. */
  holds: Readonly<Record<string, readonly number[]>>;
}

export const CAST_COLLECTIONS: readonly CastCollection[] = [
  {
    address: "0xb47e3cd837dDF8e4c57F05d70Ab865de6e193BBB",
    name: "CryptoPunks",
    symbol: "PUNK",
    type: "TYPE_CRYPTOPUNKS",
    supply: 10_000,
    firstId: 0,
    deployed: "2017-06-22",
    priceEth: 45,
    salesPerYear: 1300,
    holders: 900,
    grailEth: 1800,
  },
  {
    address: "0xBC4CA0EdA7647A8aB7C2061c2E118A18a936f13D",
    name: "Bored Ape Yacht Club",
    symbol: "BAYC",
    type: "TYPE_ERC721",
    supply: 10_000,
    firstId: 1,
    deployed: "2021-04-22",
    priceEth: 14,
    salesPerYear: 2600,
    holders: 1300,
    grailEth: 420,
  },
  {
    address: "0x60E4d786628Fea6478F785A6d7e704777c86a7c6",
    name: "Mutant Ape Yacht Club",
    symbol: "MAYC",
    type: "TYPE_ERC721",
    supply: 19_423,
    firstId: 1,
    deployed: "2021-08-28",
    priceEth: 3,
    salesPerYear: 3600,
    holders: 1800,
    heldWith: { symbol: "BAYC", share: 0.65 },
    grailEth: 240,
  },
  {
    address: "0xED5AF388653567Af2F388E6224dC7C4b3241C544",
    name: "Azuki",
    symbol: "AZUKI",
    type: "TYPE_ERC721",
    supply: 10_000,
    firstId: 1,
    deployed: "2022-01-12",
    priceEth: 6,
    salesPerYear: 2200,
    holders: 1200,
    grailEth: 300,
  },
  {
    address: "0xBd3531dA5CF5857e7CfAA92426877b022e612cf8",
    name: "Pudgy Penguins",
    symbol: "PPG",
    type: "TYPE_ERC721",
    supply: 8_888,
    firstId: 1,
    deployed: "2021-07-22",
    priceEth: 11,
    salesPerYear: 3000,
    holders: 1400,
    grailEth: 260,
  },
  {
    address: "0x8a90CAb2b38dba80c64b7734e58Ee1dB38B8992e",
    name: "Doodles",
    symbol: "DOODLE",
    type: "TYPE_ERC721",
    supply: 10_000,
    firstId: 1,
    deployed: "2021-10-16",
    priceEth: 3,
    salesPerYear: 2000,
    holders: 1100,
    heldWith: { symbol: "AZUKI", share: 0.3 },
    grailEth: 160,
  },
];

export const VITALIK = "0xd8dA6BF26964aF9D7eEd9e03E53415D37aA96045";
export const NICK = "0xb8c2C29ee19D8307cb7255e1Cd9CbDE883A267d5";

export const CAST_WALLETS: readonly CastWallet[] = [
  {
    address: VITALIK,
    names: [
      { name: "vitalik.eth", since: "2019-05-04" },
      { name: "vbuterin.eth", since: "2019-05-04" },
      { name: "vitalik.ca", since: "2021-09-14", dns: true },
    ],
    behavior: "BEHAVIOR_INFLUENCER",
    scores: {
      experience: "SCORE_VERY_HIGH",
      holding: "SCORE_HIGH",
      selling: "SCORE_VERY_LOW",
      taste: "SCORE_HIGH",
      automation: "SCORE_VERY_LOW",
      spendIntent: "SCORE_LOW",
      influence: "SCORE_VERY_HIGH",
    },
    firstSeen: "2015-08-07",
    purchasesCount: 37,
    purchasesVolumeEth: 214.6,
    holdingSpanAvgDays: 812.4,
    daysSinceLastPurchase: 12,
    holds: { BAYC: [1, 4040], MAYC: [2], PPG: [3] },
  },
  {
    address: NICK,
    names: [{ name: "nick.eth", since: "2017-05-09" }],
    behavior: "BEHAVIOR_COLLECTOR",
    scores: {
      experience: "SCORE_VERY_HIGH",
      holding: "SCORE_VERY_HIGH",
      selling: "SCORE_LOW",
      taste: "SCORE_HIGH",
      automation: "SCORE_LOW",
      spendIntent: "SCORE_MED",
      influence: "SCORE_HIGH",
    },
    firstSeen: "2016-03-01",
    purchasesCount: 128,
    purchasesVolumeEth: 356.2,
    holdingSpanAvgDays: 640.2,
    daysSinceLastPurchase: 4,
    holds: { PUNK: [2140], DOODLE: [7, 8], AZUKI: [42] },
  },
];

/**
 * The simulator's demo wallet (issue 27): a fixed private key, published here and in the README,
 * whose address holds a few of the cast's NFTs in every simulated chain, so a newcomer can import
 * it into a browser wallet and try /verify end to end. FOR THE SIMULATOR ONLY: NEVER SEND REAL
 * FUNDS TO IT (anyone can read this key, and bots sweep known keys at once). The key is
 * keccak256 of "nft-bot simulator demo wallet: never send real funds to it".
 */
export const DEMO_WALLET = {
  privateKey: "0xe333386643ec8b08882bc421a0065fcf9653f6d7cbb189f0e7033a02fce152f7",
  address: "0xEC3111Cb30983AC4545f576b2793cA163fE0294B",
} as const;

/** The demo wallet as the world shows it (no names: it is nobody's). */
export const DEMO_CAST: CastWallet = {
  address: DEMO_WALLET.address,
  names: [],
  behavior: "BEHAVIOR_COLLECTOR",
  scores: {
    experience: "SCORE_MED",
    holding: "SCORE_HIGH",
    selling: "SCORE_LOW",
    taste: "SCORE_HIGH",
    automation: "SCORE_VERY_LOW",
    spendIntent: "SCORE_MED",
    influence: "SCORE_LOW",
  },
  firstSeen: "2022-03-14",
  purchasesCount: 9,
  purchasesVolumeEth: 41.5,
  holdingSpanAvgDays: 210.5,
  daysSinceLastPurchase: 20,
  holds: { BAYC: [7495], AZUKI: [9605], PPG: [6873] },
};

/** The spam airdrop vitalik.eth received (and about a hundred other wallets). */
export const CAST_AIRDROP = {
  name: "🎁 ETH Airdrop Pass: claim at eth-drop.example",
  symbol: "GIFT",
  recipient: VITALIK,
};

/** How long the cast's .eth names stay registered past the data set's "now" (over 5 years). */
const ENS_RENEWED_DAYS = 5 * YEAR + 60;

/** Odds of a wallet behavior among blue-chip holders, relative to its share of the world. */
const BLUE_CHIP_AFFINITY: Partial<Record<Behavior, number>> = {
  BEHAVIOR_WHALE: 6,
  BEHAVIOR_COLLECTOR: 3,
  BEHAVIOR_TASTEMAKER: 3,
  BEHAVIOR_INFLUENCER: 3,
  BEHAVIOR_PATRON: 2,
  BEHAVIOR_ADVANCED: 2,
  BEHAVIOR_FLIPPER: 2,
  BEHAVIOR_NEWBIE: 0.4,
  BEHAVIOR_INACTIVE: 0.6,
  BEHAVIOR_BADACTOR: 0,
};

/** Wallets below this index are the synthetic world's fixtures: the cast leaves them as they are. */
const FIRST_HOLDER_INDEX = 21;

function daySec(day: string): number {
  return Math.floor(Date.parse(`${day}T00:00:00Z`) / 1000);
}

function etherToWei(ether: number): bigint {
  return BigInt(Math.round(ether * 1e9)) * 1_000_000_000n;
}

/** Weighted sampling without replacement (Efraimidis–Spirakis): likelier wallets come first. */
function weightedOrder(rng: Rng, wallets: readonly WalletRec[]): WalletRec[] {
  return wallets
    .map((wallet) => {
      const weight = BLUE_CHIP_AFFINITY[wallet.behavior] ?? 1;
      return { wallet, key: weight > 0 ? Math.log(rng.next()) / weight : -Infinity };
    })
    .sort((a, b) => b.key - a.key)
    .map((entry) => entry.wallet);
}

export interface CastWorld {
  wallets: WalletRec[];
  contracts: ContractRec[];
  sales: SaleRec[];
  ens: Map<string, EnsRec>;
}

/**
 * Adds the cast to a built synthetic world: its wallets and ENS names, its collections (with
 * holders among the synthetic wallets), the spam airdrop, their owner counts and sales.
 */
export function addCast(
  seed: number,
  anchorSec: number,
  world: CastWorld,
  uniqueAddress: (rng: Rng) => string,
) {
  const stream = (label: string) => new Rng(hashSeed(seed, `cast:${label}`));
  const eligible = world.wallets.filter(
    (wallet) => wallet.index >= FIRST_HOLDER_INDEX && wallet.behavior !== "BEHAVIOR_BADACTOR",
  );
  const firstIndex = world.wallets.length;
  const people = CAST_WALLETS.map((spec, i) => ({
    spec,
    wallet: castWallet(spec, firstIndex + i, anchorSec),
  }));
  for (const { spec, wallet } of people) {
    world.wallets.push(wallet);
    addNames(world.ens, wallet, spec, anchorSec);
  }

  const made = stream("contracts");
  const creators = eligible.filter((wallet) => wallet.behavior === "BEHAVIOR_CREATOR");
  const latestDeploy = anchorSec - (YEAR + 1) * SECONDS_PER_DAY;
  const collections = CAST_COLLECTIONS.map((spec) => {
    const contract = newContract({
      address: spec.address.toLowerCase(),
      name: spec.name,
      symbol: spec.symbol,
      decimals: 0,
      types: [spec.type],
      mintSec: Math.min(daySec(spec.deployed) + made.int(0, 86_399), latestDeploy),
      mintTx: made.txHash(),
      minter: made.pick(creators.length > 0 ? creators : eligible).address,
    });
    contract.nftType = spec.type;
    const plan = { tokenCount: spec.supply, hugeIds: false, firstId: spec.firstId };
    buildTokens(made, contract, plan, anchorSec);
    return { spec, contract };
  });

  const airdrop = newContract({
    address: uniqueAddress(made),
    name: CAST_AIRDROP.name,
    symbol: CAST_AIRDROP.symbol,
    decimals: 0,
    types: ["TYPE_ERC1155"],
    mintSec: anchorSec - made.int(2, 30) * SECONDS_PER_DAY - made.int(0, 86_399),
    mintTx: made.txHash(),
    minter: made.pick(world.wallets.filter((w) => w.behavior === "BEHAVIOR_BADACTOR")).address,
  });
  airdrop.nftType = "TYPE_ERC1155";
  airdrop.spam = true;
  buildTokens(made, airdrop, { tokenCount: 2, hugeIds: false, firstId: 1 }, anchorSec);

  const owning = stream("ownership");
  const pools = new Map<string, WalletRec[]>();
  for (const { spec, contract } of collections) {
    let order = weightedOrder(owning, eligible);
    const fellows = spec.heldWith && pools.get(spec.heldWith.symbol);
    if (spec.heldWith && fellows) {
      const share = spec.heldWith.share;
      const shared = fellows.filter(() => owning.chance(share));
      const chosen = new Set(shared);
      order = [...shared, ...order.filter((wallet) => !chosen.has(wallet))];
    }
    const pool = order.slice(0, spec.holders);
    pools.set(spec.symbol, pool);
    const forced = new Map<number, WalletRec>();
    for (const { spec: person, wallet } of people) {
      for (const id of person.holds[spec.symbol] ?? []) forced.set(id - spec.firstId, wallet);
    }
    assignOwners(owning, contract, pool, (position) => forced.get(position));
  }
  // The demo wallet's tokens are given after the draws (not as forced owners, which skip one):
  // the rest of the world is the same as without it.
  const demo = castWallet(DEMO_CAST, firstIndex + people.length, anchorSec);
  world.wallets.push(demo);
  for (const { spec, contract } of collections)
    for (const id of DEMO_CAST.holds[spec.symbol] ?? []) {
      const token = contract.tokens[id - spec.firstId];
      if (token) token.owners = [{ wallet: demo, token, quantity: 1 }];
    }
  const recipient = people.find(({ spec }) => spec.address === CAST_AIRDROP.recipient)?.wallet;
  assignOwners(owning, airdrop, eligible, (position) => (position === 0 ? recipient : undefined));

  const nfts = [...collections.map(({ contract }) => contract), airdrop];
  recordHoldings(nfts);
  buildOwnerSeries(stream("series"), nfts, anchorSec);

  const selling = stream("sales");
  const addSale = saleRecorder(selling, world.sales);
  for (const { spec, contract } of collections) {
    const plan = {
      basePriceEth: spec.priceEth,
      count: spec.salesPerYear,
      sellable: contract.tokens,
      spread: [0.85, 3] as const,
    };
    drawSales(selling, addSale, plan, anchorSec);
    const grail = selling.pick(contract.tokens);
    const sec = anchorSec - selling.int(3600, 20 * 3600);
    addSale(grail, sec, weiFromEther(spec.grailEth * selling.float(0.9, 1.2), selling), "native");
  }
  world.contracts.push(...nfts);
}

function castWallet(spec: CastWallet, index: number, anchorSec: number): WalletRec {
  const ageDays = Math.floor((anchorSec - daySec(spec.firstSeen)) / SECONDS_PER_DAY);
  return {
    index,
    address: spec.address.toLowerCase(),
    behavior: spec.behavior,
    scores: { ...spec.scores },
    purchasesCount: spec.purchasesCount,
    purchasesVolumeWei: etherToWei(spec.purchasesVolumeEth),
    walletAgeDays: Math.max(30, ageDays),
    holdingSpanAvgDays: spec.holdingSpanAvgDays,
    daysSinceLastPurchase: spec.daysSinceLastPurchase,
    holdings: [],
    collectionsOwned: 0,
    names: [],
  };
}

function addNames(
  ens: Map<string, EnsRec>,
  wallet: WalletRec,
  spec: CastWallet,
  anchorSec: number,
) {
  for (const { name, since, dns } of spec.names) {
    ens.set(name, {
      name,
      wallet,
      validFromSec: Math.min(daySec(since), anchorSec - 30 * SECONDS_PER_DAY),
      validTillSec: dns ? null : anchorSec + ENS_RENEWED_DAYS * SECONDS_PER_DAY,
      parentName: undefined,
    });
    wallet.names.push(name);
  }
}
