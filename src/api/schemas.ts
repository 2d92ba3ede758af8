import { z } from "zod";
import { isPlaceholderText, stripControlCharacters } from "../strings.ts";

/**
 * Enum values named by the spec. Responses may carry values outside these lists (the spec itself
 * mentions BEHAVIOR_OTHER and an unnamed fungible contract type): they are kept as strings.
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
export const SCORES = [
  "SCORE_UNSPECIFIED",
  "SCORE_VERY_LOW",
  "SCORE_LOW",
  "SCORE_MED",
  "SCORE_HIGH",
  "SCORE_VERY_HIGH",
] as const;
export const NFT_CONTRACT_TYPES = [
  "TYPE_ERC721",
  "TYPE_ERC1155",
  "TYPE_ERC721_LEGACY",
  "TYPE_CRYPTOPUNKS",
] as const;
export const DURATIONS = [
  "DURATION_1_DAY",
  "DURATION_7_DAYS",
  "DURATION_30_DAYS",
  "DURATION_365_DAYS",
] as const;
export const TOP_METRICS = [
  "METRIC_SALES_VOLUME",
  "METRIC_SALES_QUANTITY",
  "METRIC_MAX_PRICE",
] as const;
export const GROUP_BY_PERIODS = ["GROUP_BY_PERIOD_1_DAY"] as const;
export const SORT_DIRECTIONS = ["SORT_DIRECTION_DESC"] as const;
export const SPAM_FILTERS = ["SPAM_FILTER_EXCLUDE", "SPAM_FILTER_ONLY"] as const;
export const COLLECTION_CONDITIONS = [
  "CONDITION_UNSPECIFIED",
  "CONDITION_ALL",
  "CONDITION_ANY",
] as const;
export const ATTRIBUTIONS = ["ATTRIBUTED_BY_SINGLE_TRANSFER"] as const;

/** A value of a known enum, or any other string the service sends. */
export type Open<T extends string> = T | (string & {});
export type Behavior = Open<(typeof BEHAVIORS)[number]>;
export type Score = Open<(typeof SCORES)[number]>;
export type Duration = (typeof DURATIONS)[number];
export type TopMetric = (typeof TOP_METRICS)[number];
export type GroupByPeriod = (typeof GROUP_BY_PERIODS)[number];
export type SortDirection = (typeof SORT_DIRECTIONS)[number];
export type SpamFilter = (typeof SPAM_FILTERS)[number];
export type CollectionCondition = (typeof COLLECTION_CONDITIONS)[number];

/** Told once per (enum, value) when a response carries a value the spec does not list. */
export type UnknownEnumListener = (enumName: string, value: string) => void;

/** Shapes the spec leaves open are cleaned this deep; nothing shows them deeper. */
const MAX_CLEAN_DEPTH = 32;

/** Every string (keys too) of a value whose shape the spec does not give. */
function cleanDeep(value: unknown, depth = 0): unknown {
  if (typeof value === "string") return stripControlCharacters(value);
  if (typeof value !== "object" || value === null || depth >= MAX_CLEAN_DEPTH) return value;
  if (Array.isArray(value)) return value.map((item) => cleanDeep(item, depth + 1));
  return Object.fromEntries(
    Object.entries(value).map(([key, item]) => [
      stripControlCharacters(key),
      cleanDeep(item, depth + 1),
    ]),
  );
}

/** Every string field of an answer: it enters the bot without control characters. */
const text = z.string().transform(stripControlCharacters);
/**
 * Names and descriptions, for people to read: a placeholder an indexer wrote for a missing value
 * ("None", "null", …) arrives as the empty string the spec uses for "none", so no reply shows it.
 */
const label = text.transform((value) => (isPlaceholderText(value) ? "" : value));

/** int64 fields: decimal strings, possibly signed (changes). Never converted to Number here. */
const int64 = z.string().regex(/^-?\d+$/, "expected an int64 decimal string");
/** decimal amounts: strings such as "1.234567890123456789". */
const decimal = z.string().regex(/^-?\d+(\.\d+)?([eE][-+]?\d+)?$/, "expected a decimal string");
const timestamp = z
  .string()
  .refine((value) => !Number.isNaN(Date.parse(value)), "expected an ISO 8601 timestamp");

/**
 * The response schemas, built around a listener for unknown enum values so that each client
 * reports them through its own logger. Field by field as in API-SPEC.md.
 */
export function createSchemas(onUnknownEnum: UnknownEnumListener) {
  const openEnum = <T extends string>(enumName: string, values: readonly T[]) => {
    const known = new Set<string>(values);
    return text.transform((value): Open<T> => {
      if (!known.has(value)) onUnknownEnum(enumName, value);
      return value;
    });
  };
  const behavior = openEnum("Behavior", BEHAVIORS);
  const score = openEnum("Score", SCORES);
  const contractType = openEnum("ContractType", NFT_CONTRACT_TYPES);

  const aggregatedBehavior = z.object({
    behavior,
    walletsCount: int64,
    walletsPercentage: z.number(),
    walletsCountChange30d: int64.optional(),
  });
  const walletBehavior = z.object({
    address: text,
    behavior,
    experience: score,
    holding: score,
    selling: score,
    taste: score,
    automation: score,
    spendIntent: score,
    influence: score,
  });
  const financialStats = z.object({
    walletsCount: int64,
    collectionsOwnedCountAvg: z.number(),
    nftsPurchasesCountAvg: z.number(),
    nftsPurchasesVolumeAvg: z.number(),
    nftsPurchasesPriceAvg: z.number(),
    walletAgeMin: int64,
    walletAgeMax: int64,
    nftsFifoHoldingSpanAvg: z.number(),
  });
  const mintEvent = z.object({
    blockTimestamp: timestamp,
    txHash: text,
    minterAddress: text,
  });
  const contract = z.object({
    address: text,
    name: label.default(""),
    symbol: text.default(""),
    decimals: z.number().int().default(0),
    types: z.array(contractType).default([]),
    mintEvent: mintEvent.optional(),
  });
  const metadataUri = z.object({ uri: text, mimeType: text.default("") });
  const image = z.object({
    uri: text.optional(),
    uriOriginal: text.optional(),
    mimeType: text.optional(),
  });
  /** Normalized metadata, shared by NFT details and the tokens-by-owner list. */
  const nftMetadata = z.object({
    metadataUri: metadataUri.optional(),
    name: label.default(""),
    description: label.default(""),
    image: image.optional(),
  });
  const nft = z.object({
    contractAddress: text,
    tokenId: int64,
    type: contractType.optional(),
    metadata: nftMetadata.optional(),
    mintEvent: z
      .object({
        txHash: text,
        logIndex: int64.optional(),
        blockTimestamp: timestamp.optional(),
      })
      .optional(),
    collection: z.object({ name: label.default("") }).optional(),
  });
  const lastSale = z.object({
    blockchainEvent: z.object({
      txHash: text,
      logIndex: int64.optional(),
      seqIndex: int64.optional(),
      blockNumber: int64.optional(),
      blockTimestamp: timestamp.optional(),
    }),
    recipientPaid: z.object({
      totalNative: decimal.optional(),
      totalUsd: decimal.optional(),
      nativeTransfersTotal: decimal.optional(),
      fungibleTransfersTotal: decimal.optional(),
      attributedBy: openEnum("AttributedBy", ATTRIBUTIONS).optional(),
      fungibleTotals: z
        .array(z.object({ contractAddress: text, totalNormalized: decimal }))
        .default([]),
    }),
  });
  const ensEntity = z.object({
    name: text,
    resolvedAddress: text,
    validFromTimestamp: timestamp.optional(),
    validTillTimestamp: timestamp.nullable().optional(),
    parentName: text.optional(),
  });

  return {
    behaviorsByWallets: z.object({ aggregatedBehaviors: z.array(aggregatedBehavior) }),
    behaviorsByCollection: z.object({ aggregatedBehaviors: z.array(aggregatedBehavior) }),
    behaviorDetails: z.object({ walletBehaviors: z.array(walletBehavior) }),
    /** Endpoint 4: the spec gives no shape, so any JSON object is accepted and shown as it comes. */
    financialProfile: z
      .record(z.string(), z.unknown())
      .transform((profile) => cleanDeep(profile) as Record<string, unknown>),
    financialStats,
    commonCollections: z.object({
      collections: z.array(
        z.object({
          contractAddress: text,
          name: label.default(""),
          minterAddress: text.default(""),
          commonOwnersCount: int64,
          ownersCount: int64,
        }),
      ),
    }),
    commonCollectionTrends: z.object({
      collections: z.array(
        z.object({
          contractAddress: text,
          name: label.default(""),
          ownersCountChange: int64,
          commonOwnersCount: int64,
        }),
      ),
    }),
    segmentedAudience: z.object({
      wallets: z.array(z.object({ walletAddress: text, totalSpend: decimal })),
    }),
    contracts: z.object({ contracts: z.array(contract) }),
    nftDetails: z.object({
      nft,
      metrics: z.object({ quantity: int64.optional(), ownerCount: int64.optional() }).optional(),
      lastSale: lastSale.nullable().optional(),
    }),
    rawMetadata: z.object({
      metadata: z.object({ raw: text, indexedAt: timestamp.optional() }),
    }),
    nftsByOwner: z.object({
      tokens: z.array(
        z.object({
          contractAddress: text,
          tokenId: int64,
          type: contractType.optional(),
          metadata: nftMetadata.optional(),
          quantity: int64.optional(),
        }),
      ),
    }),
    tokenOwners: z.object({ owners: z.array(z.object({ address: text, quantity: int64 })) }),
    topCollections: z.object({
      collections: z.array(
        z.object({
          contractAddress: text,
          contractName: label.default(""),
          salesVolume: decimal.optional(),
          salesCount: int64.optional(),
          maxPrice: decimal.optional(),
        }),
      ),
    }),
    ownersList: z.object({ owner: z.array(z.object({ address: text, ownedCount: int64 })) }),
    ownersCount: z.object({ dataPoints: z.array(z.object({ timestamp, count: int64 })) }),
    walletNfts: z.object({
      nfts: z.array(
        z.object({ nft, quantity: int64.optional(), spam: z.boolean().default(false) }),
      ),
    }),
    /** Endpoints 19 and 20: the spec gives no shape; whatever JSON comes back is kept. */
    report: z.unknown().transform((answer) => cleanDeep(answer)),
    ensByName: z.object({ entity: ensEntity }),
    ensByAddress: z.object({ entities: z.array(ensEntity) }),
  };
}

export type Schemas = ReturnType<typeof createSchemas>;
export type Out<K extends keyof Schemas> = z.output<Schemas[K]>;

export type AggregatedBehavior = Out<"behaviorsByCollection">["aggregatedBehaviors"][number];
export type WalletBehavior = Out<"behaviorDetails">["walletBehaviors"][number];
export type FinancialStats = Out<"financialStats">;
export type Contract = Out<"contracts">["contracts"][number];
export type NftDetails = Out<"nftDetails">;
export type TopCollection = Out<"topCollections">["collections"][number];
export type EnsEntity = Out<"ensByName">["entity"];
export type CommonCollection = Out<"commonCollections">["collections"][number];
export type CommonCollectionTrend = Out<"commonCollectionTrends">["collections"][number];
