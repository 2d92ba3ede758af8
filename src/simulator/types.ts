/**
 * Enum value sets the simulator accepts and the plain TypeScript shapes of the JSON it serves.
 * The client keeps its own zod schemas; these types only keep the simulator honest.
 */

export const BEHAVIORS = [
  "BEHAVIOR_UNSPECIFIED",
  "BEHAVIOR_WHALE",
  "BEHAVIOR_NEWBIE",
  "BEHAVIOR_CREATOR",
  "BEHAVIOR_PATRON",
  "BEHAVIOR_FLIPPER",
  "BEHAVIOR_PROGRAMMED_FLIPPER",
  "BEHAVIOR_ADVANCED",
  "BEHAVIOR_COLLECTOR",
  "BEHAVIOR_PROGRAMMED_COLLECTOR",
  "BEHAVIOR_EXPLORER",
  "BEHAVIOR_TASTEMAKER",
  "BEHAVIOR_BADACTOR",
  "BEHAVIOR_INFLUENCER",
  "BEHAVIOR_INACTIVE",
] as const;
export type Behavior = (typeof BEHAVIORS)[number];

/** Served in some collection summaries although the spec's value set lacks it. */
export const BEHAVIOR_OTHER = "BEHAVIOR_OTHER";

export const SCORES = [
  "SCORE_UNSPECIFIED",
  "SCORE_VERY_LOW",
  "SCORE_LOW",
  "SCORE_MED",
  "SCORE_HIGH",
  "SCORE_VERY_HIGH",
] as const;
export type Score = (typeof SCORES)[number];

export const NFT_CONTRACT_TYPES = [
  "TYPE_ERC721",
  "TYPE_ERC1155",
  "TYPE_ERC721_LEGACY",
  "TYPE_CRYPTOPUNKS",
] as const;

/** The spec does not name the fungible type; the simulator uses this value (a documented gap). */
export const FUNGIBLE_CONTRACT_TYPE = "TYPE_ERC20";

/** Carried by one seeded contract so that clients meet a type outside the known set. */
export const UNKNOWN_CONTRACT_TYPE = "TYPE_ERC404";

/** Values accepted by `contractTypes` (endpoint 10) and `tokenTypes` (endpoint 13). */
export const QUERYABLE_CONTRACT_TYPES: readonly string[] = [
  "TYPE_UNSPECIFIED",
  ...NFT_CONTRACT_TYPES,
  FUNGIBLE_CONTRACT_TYPE,
];

export const DURATION_DAYS: Readonly<Record<string, number>> = {
  DURATION_1_DAY: 1,
  DURATION_7_DAYS: 7,
  DURATION_30_DAYS: 30,
  DURATION_365_DAYS: 365,
};

export const GROUP_BY_PERIOD_DAYS: Readonly<Record<string, number>> = {
  GROUP_BY_PERIOD_1_DAY: 1,
};

export const METRICS = [
  "METRIC_SALES_VOLUME",
  "METRIC_SALES_QUANTITY",
  "METRIC_MAX_PRICE",
] as const;
export type Metric = (typeof METRICS)[number];

/** The ascending name is not in the spec; ASC and UNSPECIFIED are both accepted. */
export const SORT_DIRECTIONS = [
  "SORT_DIRECTION_UNSPECIFIED",
  "SORT_DIRECTION_ASC",
  "SORT_DIRECTION_DESC",
] as const;

export const SPAM_FILTERS = [
  "SPAM_FILTER_UNSPECIFIED",
  "SPAM_FILTER_EXCLUDE",
  "SPAM_FILTER_ONLY",
] as const;

export const COLLECTIONS_CONDITIONS = [
  "CONDITION_UNSPECIFIED",
  "CONDITION_ALL",
  "CONDITION_ANY",
] as const;

export interface MintEventJson {
  blockTimestamp: string;
  txHash: string;
  minterAddress: string;
}

/** Endpoint 10 item. */
export interface Contract {
  address: string;
  name: string;
  symbol: string;
  decimals: number;
  types: string[];
  mintEvent: MintEventJson;
}

export interface AggregatedBehaviorJson {
  behavior: string;
  walletsCount: string;
  walletsPercentage: number;
  walletsCountChange30d?: string;
}

export type WalletBehaviorJson = {
  address: string;
  behavior: Behavior;
} & Record<ScoreDimension, Score>;

export const SCORE_DIMENSIONS = [
  "experience",
  "holding",
  "selling",
  "taste",
  "automation",
  "spendIntent",
  "influence",
] as const;
export type ScoreDimension = (typeof SCORE_DIMENSIONS)[number];

export interface FinancialStatsJson {
  walletsCount: string;
  collectionsOwnedCountAvg: number;
  nftsPurchasesCountAvg: number;
  nftsPurchasesVolumeAvg: number;
  nftsPurchasesPriceAvg: number;
  walletAgeMin: string;
  walletAgeMax: string;
  nftsFifoHoldingSpanAvg: number;
}

export interface ImageJson {
  uri?: string;
  uriOriginal?: string;
  mimeType: string;
}

export interface NftMetadataJson {
  metadataUri: { uri: string; mimeType: string };
  name: string;
  description: string;
  image: ImageJson;
}

export interface NftJson {
  contractAddress: string;
  tokenId: string;
  type: string;
  metadata: NftMetadataJson;
  mintEvent: { txHash: string; logIndex: string; blockTimestamp: string };
  collection: { name: string };
}

export interface SaleJson {
  blockchainEvent: {
    txHash: string;
    logIndex: string;
    seqIndex: string;
    blockNumber: string;
    blockTimestamp: string;
  };
  recipientPaid: {
    totalNative: string;
    totalUsd: string;
    nativeTransfersTotal: string;
    fungibleTransfersTotal: string;
    attributedBy: string;
    fungibleTotals: { contractAddress: string; totalNormalized: string }[];
  };
}

export interface EnsEntityJson {
  name: string;
  resolvedAddress: string;
  validFromTimestamp: string;
  validTillTimestamp: string | null;
  parentName?: string;
}

export interface ErrorJson {
  code: number;
  message: string;
}
