/**
 * The records the simulator's data set is made of. Handlers read them; only data.ts and
 * population.ts (at start), minting.ts (appending contracts) and history.ts (the timed mints)
 * write them.
 */

import type { Behavior, Score, ScoreDimension } from "./types.ts";

export interface WalletRec {
  index: number;
  address: string;
  behavior: Behavior;
  scores: Record<ScoreDimension, Score>;
  purchasesCount: number;
  purchasesVolumeWei: bigint;
  walletAgeDays: number;
  holdingSpanAvgDays: number;
  /** null when the wallet never bought an NFT. */
  daysSinceLastPurchase: number | null;
  holdings: Holding[];
  /** Distinct non-spam collections currently owned. */
  collectionsOwned: number;
  /** ENS names resolving to this wallet, primary first. */
  names: string[];
}

export interface Holding {
  token: TokenRec;
  quantity: number;
}

/**
 * One wallet's part of a token: in the token's owners and, the same object, in the wallet's
 * holdings (one object for both saves some 3 MB a world).
 */
export interface Ownership extends Holding {
  wallet: WalletRec;
}

export interface OwnerStat {
  wallet: WalletRec;
  /** Sum of quantities over the collection's tokens. */
  quantity: number;
  /** Distinct tokens of the collection held. */
  distinct: number;
}

export interface ContractRec {
  address: string;
  name: string;
  symbol: string;
  decimals: number;
  types: string[];
  /** The type its NFTs carry; undefined for fungible contracts. */
  nftType: string | undefined;
  mintSec: number;
  mintTx: string;
  minter: string;
  spam: boolean;
  /** Its behavior summary folds rare categories into BEHAVIOR_OTHER. */
  groupsRareBehaviors: boolean;
  tokens: TokenRec[];
  /**
   * Tokens by id where ids do not follow each other (78-digit ones); the others are found by
   * their position (tokenOf): a map of 10,000 ids was some 1 MB a collection.
   */
  tokenById: Map<string, TokenRec> | undefined;
  /** Keyed by WalletRec.index (number keys keep start-up fast). */
  owners: Map<number, OwnerStat>;
  /** ownerSeries[k] = owners k days before the anchor day; [0] equals owners.size. */
  ownerSeries: number[];
  sales: SaleRec[];
}

export interface TokenRec {
  contract: ContractRec;
  id: string;
  owners: Ownership[];
  mintSec: number;
  /** Raw metadata is plain text instead of JSON. */
  textMetadata: boolean;
  /** Its metadata says "None" for the description, as indexers that stringify a null do. */
  noneDescription?: boolean;
  lastSale: SaleRec | undefined;
}

export type Payment = "native" | "weth" | "mixed" | "usdc";

export interface SaleRec {
  /** Position in World.sales; seeds the sale's transaction details (see json.ts). */
  id: number;
  token: TokenRec;
  sec: number;
  totalWei: bigint;
  /** Part paid in native transfers; the rest (totalWei - nativeWei) came as fungible tokens. */
  nativeWei: bigint;
  payment: Payment;
}

export interface EnsRec {
  name: string;
  wallet: WalletRec;
  validFromSec: number;
  /** null for DNS names imported into ENS (no expiry). */
  validTillSec: number | null;
  parentName: string | undefined;
}

export interface TokenRef {
  contract: string;
  tokenId: string;
}

/** Stable handles into the seeded data for tests. Addresses are lowercase hex. */
export interface Fixtures {
  /** Normal ERC721 collection: hundreds of owners, many sales, a year of owner counts. */
  collection: string;
  /** ERC1155 collection whose tokens have several owners each. */
  erc1155Collection: string;
  /** A spam collection (airdropped to many wallets, including `wallet`). */
  spamCollection: string;
  /** Minter of `spamCollection`, labelled BEHAVIOR_BADACTOR. */
  spamMinter: string;
  /** ERC721 collection whose name and symbol are "". */
  emptyNameCollection: string;
  /** Collection whose name contains `@everyone <b>x</b> **bold** [link](https://evil.example)`. */
  markupCollection: string;
  /** Collection whose behavior summary (endpoint 2) contains BEHAVIOR_OTHER. */
  otherBehaviorCollection: string;
  /** NFT contract whose `types` is ["TYPE_ERC404"], a value outside the spec's set. */
  unknownTypeContract: string;
  /** TYPE_CRYPTOPUNKS collection: the cast's CryptoPunks, at its real address. */
  cryptopunksCollection: string;
  /** TYPE_ERC721_LEGACY collection. */
  legacyCollection: string;
  /** Fungible WETH-like contract (type TYPE_ERC20) used in sales' fungibleTotals. */
  fungibleContract: string;
  /** A token whose id has exactly 78 digits. */
  hugeTokenId: TokenRef;
  /** ERC721 token of `collection` with a last sale paid in native and WETH (fungibleTotals). */
  token: TokenRef;
  /** Token whose raw metadata is plain text (metadataUri.mimeType "text/plain"). */
  tokenWithTextMetadata: TokenRef;
  /** Named "<collection> #<id>", its description "None", with attributes: what real indexers send. */
  tokenWithNoneDescription: TokenRef;
  /** Token of `collection` that never sold: its details have no lastSale. */
  tokenWithoutSale: TokenRef;
  /** ERC1155 token of `erc1155Collection` with several owners. */
  multiOwnerToken: TokenRef;
  /** Wallet holding NFTs of `collection` and `erc1155Collection`, and every spam collection. */
  wallet: string;
  /** Primary ENS name of `wallet` (a .eth name). */
  walletEns: string;
  /** Wallet with several ENS names (one of them a DNS name). */
  multiNameWallet: string;
  /** All names of `multiNameWallet`, primary first. */
  multiNameWalletNames: string[];
  /** DNS name with an ENS record: validTillTimestamp is null. */
  dnsName: string;
  /** Subdomain such as "pay.something.eth", served with parentName. */
  subdomain: string;
  /** parentName of `subdomain`. */
  subdomainParent: string;
  /** Name made of emoji, e.g. "🦊🦊🦊.eth". */
  emojiEnsName: string;
  /** Valid address that is no wallet, contract or name target in the data set. */
  unknownAddress: string;
  /** Wallets and figures gate tests (issue 29) decide on: behaviors, spend, the demo wallet. */
  gates: GateFixtures;
}

/** A wallet's figures as endpoint 5's filters read them (amounts in the native currency). */
export interface SpendFigures {
  wallet: string;
  /** NFT purchase volume, exact ("41.5"). */
  volume: string;
  /** Volume over purchases, in whole wei as the filter compares it ("4.611111111111111111"). */
  priceAvg: string;
  /** Distinct non-spam collections owned. */
  collections: number;
  /** null when the wallet never bought. */
  daysSinceLastPurchase: number | null;
}

export interface GateFixtures {
  /** A wallet of each behavior label the world has, by BEHAVIOR_* (the first such wallet). */
  behaviorWallets: Record<string, string>;
  /** The demo wallet (DEMO_WALLET, a collector): its figures, and its tokens per collection. */
  demo: SpendFigures & { holds: Record<string, number> };
  /** nick.eth (a collector): more volume and a more recent purchase than the demo wallet. */
  bigSpender: SpendFigures;
  /** A wallet that never bought an NFT (fails every spend filter). */
  neverBought: string;
}

export interface World {
  seed: number;
  anchorSec: number;
  anchorDay: number;
  wallets: WalletRec[];
  walletByAddress: Map<string, WalletRec>;
  /** Every contract, ordered by mint time (minted ones are appended in order). */
  contracts: ContractRec[];
  contractByAddress: Map<string, ContractRec>;
  ens: Map<string, EnsRec>;
  sales: SaleRec[];
  weth: ContractRec;
  usdc: ContractRec;
  fixtures: Fixtures;
  /** The timed mints' history (history.ts), listed beside `contracts`; absent without. */
  timed?: TimedMints | undefined;
}

/** The timed mints' history of one chain (history.ts). */
export interface TimedMints {
  seed: number;
  chain: string;
  intervalMs: number;
  /** Every Nth slot (slot number divisible by N) is minted by a bad actor; 0: none. */
  badActorEvery: number;
  /** The first slot of the history. */
  firstSlot: number;
  /** The random minters (the chain's synthetic wallets) and the bad actor, once needed. */
  minters: () => readonly WalletRec[];
  badActor: () => string;
  /** The slots' contracts served so far, by slot. */
  made: Map<number, ContractRec>;
}
