/**
 * The simulator's synthetic data set, built once per server from the seed. Generation is
 * deterministic (seeded PRNG only) and anchored at the clock's "now" at start: sales, mint times
 * and ENS validity are offsets back from that anchor, so windows like DURATION_1_DAY always
 * contain data. Everything served is derived from these records, so aggregates agree. The fixed
 * cast of well-known names (cast.ts) joins last, drawn from its own streams. Its first stage, the
 * population of wallets and collections, is population.ts's.
 */

import { addCast, CAST_COLLECTIONS, DEMO_WALLET, NICK } from "./cast.ts";
import { buildEns } from "./ens.ts";
import {
  type AddSale,
  assignOwners,
  buildOwnerSeries,
  countCollectionsOwned,
  drawSales,
  nativePart,
  recordHoldings,
  saleRecorder,
  weiFromEther,
} from "./generate.ts";
import {
  buildPopulation,
  DNS_WALLET,
  EMOJI_WALLET,
  EMPTY,
  ERC1155_FIXTURE,
  FIXTURE_WALLET,
  GRAIL,
  HUGE_IDS,
  LEGACY,
  MAIN,
  MARKUP,
  MULTI_NAME_WALLET,
  namedForTests,
  type Population,
  SPAM_FIRST,
  SUBDOMAIN_WALLET,
  UNKNOWN_TYPE,
} from "./population.ts";
import { hashSeed, Rng } from "./random.ts";
import type {
  ContractRec,
  Fixtures,
  GateFixtures,
  Ownership,
  SaleRec,
  SpendFigures,
  TokenRec,
  TokenRef,
  WalletRec,
  World,
} from "./records.ts";
import { compareText, formatUnits, SECONDS_PER_DAY } from "./units.ts";

export { buildPopulation, type Population, syntheticWallets } from "./population.ts";

/**
 * Every contract of a built world was minted at least this long before its anchor (the youngest
 * synthetic collections and the cast's airdrop are 2 days old): a list of contracts minted
 * after `anchor - BUILT_CONTRACTS_MIN_AGE_SEC` holds minted ones only.
 */
export const BUILT_CONTRACTS_MIN_AGE_SEC = SECONDS_PER_DAY;

/**
 * The whole world, continued from its population when that was built already. `spam: false` is
 * for a chain without spam detection, where the spam collections are ordinary ones (their spam
 * flag is cleared when served, see chains.ts): their test-string names are then held by a few
 * wallets too, as the other collections so named are.
 */
export function buildWorld(
  seed: number,
  nowMs: number,
  population = buildPopulation(seed, nowMs),
  { spam = true }: { spam?: boolean } = {},
): World {
  if (population.seed !== seed || population.anchorSec !== Math.floor(nowMs / 1000))
    throw new Error("a population continues into the world of its own seed and clock only");
  const { anchorSec, wallets, contracts, uniqueAddress } = population;
  const nfts = contracts.filter((contract) => contract.nftType !== undefined);
  buildOwnership(new Rng(hashSeed(seed, "ownership")), nfts, wallets, spam);
  buildOwnerSeries(new Rng(hashSeed(seed, "series")), nfts, anchorSec);

  const { weth, usdc } = fungiblePair(contracts);
  const sales = buildSales(
    { main: new Rng(hashSeed(seed, "sales")), dust: new Rng(hashSeed(seed, "dust-sales")) },
    nfts,
    anchorSec,
  );

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

function buildOwnership(rng: Rng, nfts: ContractRec[], wallets: WalletRec[], spam: boolean) {
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
    // Spam stays airdropped to many where it is detected (and never in the lists held in common).
    if (namedForTests(index) && !(spam && contract.spam)) holdByFew(contract, wallets);
    // The fixture wallet also received an airdrop from the first ERC721 spam collection.
    if (contract.spam && !multi && contract.tokens[0]) {
      const first = contract.tokens[0].owners[0];
      if (first) first.wallet = fixtureWallet;
    }
  }
  recordHoldings(nfts);
}

/** The few wallets that hold the collections named with test strings (but spam). */
const TEST_STRING_HOLDERS = { first: 2880, count: 8 };

/**
 * A collection named with a test string passes to a few wallets of the synthetic tail what its
 * owners were drawn (the draws stay the same), so it shares few owners with any other and ranks
 * low among the collections held in common (endpoints 7 and 8).
 */
function holdByFew(contract: ContractRec, wallets: readonly WalletRec[]) {
  const holder = (wallet: WalletRec) =>
    wallets[TEST_STRING_HOLDERS.first + (wallet.index % TEST_STRING_HOLDERS.count)] ?? wallet;
  for (const token of contract.tokens) {
    const merged = new Map<WalletRec, Ownership>();
    for (const owner of token.owners) {
      const wallet = holder(owner.wallet);
      const known = merged.get(wallet);
      if (known) known.quantity += owner.quantity;
      else merged.set(wallet, { ...owner, wallet });
    }
    token.owners = [...merged.values()];
  }
}

/** The dust a collection named with a test string sold its one token for (in ether). */
const DUST_ETH: readonly [number, number] = [0.00001, 0.0001];

/**
 * Sales of a collection named with a test string: drawn as any collection's (so the draws after
 * them stay the same), but only the first is kept, moved to 1 to 10 months ago at a price of dust:
 * in no top list of a month or less, and last in the year's (under every collection that sold
 * anything more, or for more than dust).
 */
function dustSales(addSale: AddSale, rng: Rngs, anchorSec: number): AddSale {
  let sold = false;
  return (token, sec, totalWei, payment) => {
    if (sold) {
      nativePart(rng.main, totalWei, payment);
      return;
    }
    sold = true;
    const latest = anchorSec - 31 * SECONDS_PER_DAY;
    const earliest = Math.max(token.mintSec + 1, anchorSec - 300 * SECONDS_PER_DAY);
    const at = earliest < latest ? rng.dust.int(earliest, latest) : sec;
    addSale(token, at, weiFromEther(rng.dust.float(...DUST_ETH), rng.dust), payment);
  };
}

interface Rngs {
  main: Rng;
  /** Test-string collections' one sale: its time and price. */
  dust: Rng;
}

function buildSales(rngs: Rngs, nfts: ContractRec[], anchorSec: number): SaleRec[] {
  const rng = rngs.main;
  const sales: SaleRec[] = [];
  const addSale = saleRecorder(rng, sales);
  for (const [index, contract] of nfts.entries()) {
    if (contract.spam || contract.tokens.length === 0) continue;
    const basePriceEth = index === GRAIL ? rng.float(30, 80) : rng.logFloat(0.002, 20);
    const count = Math.min(1000, Math.round(contract.tokens.length * rng.float(0.3, 2)));
    // Keep one token of the main collection unsold for the tokenWithoutSale fixture.
    const sellable = index === MAIN ? contract.tokens.slice(0, -1) : contract.tokens;
    const record = namedForTests(index) ? dustSales(addSale, rngs, anchorSec) : addSale;
    drawSales(rng, record, { basePriceEth, count, sellable }, anchorSec);
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
