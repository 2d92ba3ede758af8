/**
 * The simulator's synthetic data set, built once per server from the seed. Generation is
 * deterministic (seeded PRNG only) and anchored at the clock's "now" at start: sales, mint times
 * and ENS validity are offsets back from that anchor, so windows like DURATION_1_DAY always
 * contain data. Everything served is derived from these records, so aggregates agree. The fixed
 * cast of well-known names (cast.ts) joins last, drawn from its own streams.
 */

import { addCast, CAST_COLLECTIONS, DEMO_WALLET, NICK } from "./cast.ts";
import { buildEns } from "./ens.ts";
import {
  assignOwners,
  buildOwnerSeries,
  buildTokens,
  countCollectionsOwned,
  drawSales,
  newContract,
  recordHoldings,
  saleRecorder,
  type TokenPlan,
  weiFromEther,
} from "./generate.ts";
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
import type {
  ContractRec,
  Fixtures,
  GateFixtures,
  SaleRec,
  SpendFigures,
  TokenRec,
  TokenRef,
  WalletRec,
  World,
} from "./records.ts";
import {
  type Behavior,
  FUNGIBLE_CONTRACT_TYPE,
  SCORE_DIMENSIONS,
  type Score,
  type ScoreDimension,
  UNKNOWN_CONTRACT_TYPE,
} from "./types.ts";
import { compareText, formatUnits, SECONDS_PER_DAY } from "./units.ts";

const WALLET_COUNT = 3000;
const COLLECTION_COUNT = 200;

const FIXTURE_WALLET = 7;
const MULTI_NAME_WALLET = 11;
const DNS_WALLET = 12;
const SUBDOMAIN_WALLET = 13;
const EMOJI_WALLET = 14;

const MAIN = 0;
const ERC1155_FIXTURE = 1;
const EMPTY = 2;
const MARKUP = 3;
const HUGE_IDS = 4;
/** Pricey old collection (the CryptoPunks look-alike before the cast brought the real one). */
const GRAIL = 5;
const LEGACY = [6, 7, 8];
const UNKNOWN_TYPE = 9;
const SPAM_FIRST = 10;
const TRICKY_FIRST = SPAM_FIRST + SPAM_NAMES.length;

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

/**
 * Every contract of a built world was minted at least this long before its anchor (the youngest
 * synthetic and spam collections are 2 days old, the cast's a year): a list of contracts minted
 * after `anchor - BUILT_CONTRACTS_MIN_AGE_SEC` holds minted ones only.
 */
export const BUILT_CONTRACTS_MIN_AGE_SEC = SECONDS_PER_DAY;

/** The whole world, continued from its population when that was built already. */
export function buildWorld(
  seed: number,
  nowMs: number,
  population = buildPopulation(seed, nowMs),
): World {
  if (population.seed !== seed || population.anchorSec !== Math.floor(nowMs / 1000))
    throw new Error("a population continues into the world of its own seed and clock only");
  const { anchorSec, wallets, contracts, uniqueAddress } = population;
  const nfts = contracts.filter((contract) => contract.nftType !== undefined);
  buildOwnership(new Rng(hashSeed(seed, "ownership")), nfts, wallets);
  buildOwnerSeries(new Rng(hashSeed(seed, "series")), nfts, anchorSec);

  const { weth, usdc } = fungiblePair(contracts);
  const sales = buildSales(new Rng(hashSeed(seed, "sales")), nfts, anchorSec);

  const ens = buildEns(new Rng(hashSeed(seed, "ens")), wallets, anchorSec, {
    fixture: FIXTURE_WALLET,
    multiName: MULTI_NAME_WALLET,
    dns: DNS_WALLET,
    subdomain: SUBDOMAIN_WALLET,
    emoji: EMOJI_WALLET,
  });

  addCast(seed, anchorSec, { wallets, contracts, sales, ens }, uniqueAddress);
  countCollectionsOwned(wallets, contracts);
  contracts.sort(byMintTime);
  const world: World = {
    seed,
    anchorSec,
    anchorDay: Math.floor(anchorSec / SECONDS_PER_DAY),
    wallets,
    walletByAddress: new Map(wallets.map((wallet) => [wallet.address, wallet])),
    contracts,
    contractByAddress: new Map(contracts.map((contract) => [contract.address, contract])),
    ens,
    sales,
    weth,
    usdc,
    fixtures: undefined as unknown as Fixtures,
  };
  world.fixtures = pickFixtures(world, nfts, new Rng(hashSeed(seed, "fixtures")), uniqueAddress);
  return world;
}

/** The order of a world's contract list: by mint time, then address. */
function byMintTime(a: ContractRec, b: ContractRec): number {
  return a.mintSec - b.mintSec || compareText(a.address, b.address);
}

/** The WETH and USDC look-alikes: the first two fungible contracts, in the order made. */
function fungiblePair(contracts: readonly ContractRec[]): { weth: ContractRec; usdc: ContractRec } {
  const [weth, usdc] = contracts.filter((contract) => contract.nftType === undefined);
  if (!weth || !usdc) throw new Error("fungible contracts missing");
  return { weth, usdc };
}

/** The wallets of the synthetic world (the cast's come after them): random minters' pool. */
export function syntheticWallets(wallets: readonly WalletRec[]): WalletRec[] {
  return wallets.filter((wallet) => wallet.index < WALLET_COUNT);
}

/**
 * A world of the population alone: no owners, sales, names or cast yet. It answers alike the
 * requests that need no more (see startSimulator), and is minted on until the world is built.
 */
export function populationWorld(population: Population): World {
  const { weth, usdc } = fungiblePair(population.contracts);
  const contracts = [...population.contracts].sort(byMintTime);
  return {
    seed: population.seed,
    anchorSec: population.anchorSec,
    anchorDay: Math.floor(population.anchorSec / SECONDS_PER_DAY),
    wallets: [...population.wallets],
    walletByAddress: new Map(population.wallets.map((wallet) => [wallet.address, wallet])),
    contracts,
    contractByAddress: new Map(contracts.map((contract) => [contract.address, contract])),
    ens: new Map(),
    sales: [],
    weth,
    usdc,
    fixtures: undefined as unknown as Fixtures,
  };
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
    const ageDays = plan.spam ? rng.int(2, 60) : plan.recent ? rng.int(2, 360) : rng.int(366, 2600);
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

function buildOwnership(rng: Rng, nfts: ContractRec[], wallets: WalletRec[]) {
  const fixtureWallet = wallets[FIXTURE_WALLET];
  if (!fixtureWallet) throw new Error("fixture wallet missing");
  for (const [index, contract] of nfts.entries()) {
    const multi = contract.nftType === "TYPE_ERC1155";
    const forced = (position: number) =>
      (index === MAIN && position < 3) ||
      (multi && position === 0 && (index === ERC1155_FIXTURE || contract.spam))
        ? fixtureWallet
        : undefined;
    assignOwners(rng, contract, wallets, forced);
    // The fixture wallet also received an airdrop from the first ERC721 spam collection.
    if (contract.spam && !multi && contract.tokens[0]) {
      const first = contract.tokens[0].owners[0];
      if (first) first.wallet = fixtureWallet;
    }
  }
  recordHoldings(nfts);
}

function buildSales(rng: Rng, nfts: ContractRec[], anchorSec: number): SaleRec[] {
  const sales: SaleRec[] = [];
  const addSale = saleRecorder(rng, sales);
  for (const [index, contract] of nfts.entries()) {
    if (contract.spam || contract.tokens.length === 0) continue;
    const basePriceEth = index === GRAIL ? rng.float(30, 80) : rng.logFloat(0.002, 20);
    const count = Math.min(1000, Math.round(contract.tokens.length * rng.float(0.3, 2)));
    // Keep one token of the main collection unsold for the tokenWithoutSale fixture.
    const sellable = index === MAIN ? contract.tokens.slice(0, -1) : contract.tokens;
    drawSales(rng, addSale, { basePriceEth, count, sellable }, anchorSec);
  }
  // The `token` fixture: the main collection's token #… with a fresh sale paid in ETH + WETH.
  const fixtureToken = nfts[MAIN]?.tokens[3];
  if (fixtureToken) {
    const totalWei = 1_234_567_890_123_456_789n;
    addSale(fixtureToken, anchorSec - 3600, totalWei, "mixed");
  }
  return sales;
}

function pickFixtures(
  world: World,
  nfts: ContractRec[],
  rng: Rng,
  uniqueAddress: (rng: Rng) => string,
): Fixtures {
  const at = (index: number): ContractRec => {
    const contract = nfts[index];
    if (!contract) throw new Error(`collection ${index} missing`);
    return contract;
  };
  const wallet = (index: number): WalletRec => {
    const found = world.wallets[index];
    if (!found) throw new Error(`wallet ${index} missing`);
    return found;
  };
  const ref = (token: TokenRec | undefined): TokenRef => {
    if (!token) throw new Error("fixture token missing");
    return { contract: token.contract.address, tokenId: token.id };
  };
  const main = at(MAIN);
  const spam = at(SPAM_FIRST);
  const huge = at(HUGE_IDS).tokens.find((token) => token.id.length === 78);
  const textToken = main.tokens[5];
  if (textToken) textToken.textMetadata = true;
  const noneToken = main.tokens[0];
  if (noneToken) noneToken.noneDescription = true;
  const multiOwner = at(ERC1155_FIXTURE).tokens.find((token) => token.owners.length >= 3);
  const other = nfts.find((contract) => contract.groupsRareBehaviors && contract.owners.size > 30);
  if (!other) throw new Error("no collection groups rare behaviors");
  const subdomain = wallet(SUBDOMAIN_WALLET).names.find((name) => name.split(".").length > 2);
  const subdomainRecord = subdomain ? world.ens.get(subdomain) : undefined;
  const dnsName = wallet(DNS_WALLET).names[0];
  const walletEns = wallet(FIXTURE_WALLET).names[0];
  const emoji = wallet(EMOJI_WALLET).names[0];
  if (!subdomain || !subdomainRecord?.parentName || !dnsName || !walletEns || !emoji) {
    throw new Error("ENS fixtures missing");
  }
  return {
    collection: main.address,
    erc1155Collection: at(ERC1155_FIXTURE).address,
    spamCollection: spam.address,
    spamMinter: spam.minter,
    emptyNameCollection: at(EMPTY).address,
    markupCollection: at(MARKUP).address,
    otherBehaviorCollection: other.address,
    unknownTypeContract: at(UNKNOWN_TYPE).address,
    cryptopunksCollection: castAddress("TYPE_CRYPTOPUNKS"),
    legacyCollection: at(LEGACY[0] ?? 6).address,
    fungibleContract: world.weth.address,
    hugeTokenId: ref(huge),
    token: ref(main.tokens[3]),
    tokenWithTextMetadata: ref(textToken),
    tokenWithNoneDescription: ref(noneToken),
    tokenWithoutSale: ref(main.tokens[main.tokens.length - 1]),
    multiOwnerToken: ref(multiOwner),
    wallet: wallet(FIXTURE_WALLET).address,
    walletEns,
    multiNameWallet: wallet(MULTI_NAME_WALLET).address,
    multiNameWalletNames: [...wallet(MULTI_NAME_WALLET).names],
    dnsName,
    subdomain,
    subdomainParent: subdomainRecord.parentName,
    emojiEnsName: emoji,
    unknownAddress: uniqueAddress(rng),
    gates: gateFixtures(world),
  };
}

/** What a wallet's record says endpoint 5's filters compare. */
function spendFigures(wallet: WalletRec): SpendFigures {
  const priceAvgWei =
    wallet.purchasesCount === 0 ? 0n : wallet.purchasesVolumeWei / BigInt(wallet.purchasesCount);
  return {
    wallet: wallet.address,
    volume: formatUnits(wallet.purchasesVolumeWei, 18),
    priceAvg: formatUnits(priceAvgWei, 18),
    collections: wallet.collectionsOwned,
    daysSinceLastPurchase: wallet.daysSinceLastPurchase,
  };
}

/** Picked from the finished world, drawing nothing: the rest of the fixtures stay as they were. */
function gateFixtures(world: World): GateFixtures {
  const behaviorWallets: Record<string, string> = {};
  for (const wallet of world.wallets) behaviorWallets[wallet.behavior] ??= wallet.address;
  const walletAt = (address: string): WalletRec => {
    const found = world.walletByAddress.get(address.toLowerCase());
    if (!found) throw new Error(`cast wallet ${address} missing`);
    return found;
  };
  const demo = walletAt(DEMO_WALLET.address);
  const holds: Record<string, number> = {};
  for (const { token, quantity } of demo.holdings)
    holds[token.contract.address] = (holds[token.contract.address] ?? 0) + quantity;
  const neverBought = world.wallets.find((wallet) => wallet.purchasesCount === 0);
  if (!neverBought) throw new Error("no wallet that never bought");
  return {
    behaviorWallets,
    demo: { ...spendFigures(demo), holds },
    bigSpender: spendFigures(walletAt(NICK)),
    neverBought: neverBought.address,
  };
}

function castAddress(type: string): string {
  const found = CAST_COLLECTIONS.find((collection) => collection.type === type);
  if (!found) throw new Error(`no ${type} in the cast`);
  return found.address.toLowerCase();
}
