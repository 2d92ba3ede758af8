import {
  type Call,
  type CallOptions,
  oneOf,
  type Page,
  pageQuery,
  seg,
  type TtlGroup,
} from "./call.ts";
import type { ApiResource } from "./errors.ts";
import {
  COLLECTION_CONDITIONS,
  type CollectionCondition,
  DURATIONS,
  type Duration,
  type Schemas,
} from "./schemas.ts";
import {
  InvalidInputError,
  parseAddress,
  parseCount,
  parseDecimal,
  parseWallet,
  parseWalletList,
} from "./validate.ts";

export interface FinancialFilters {
  nftsPurchasesVolumeGte?: string;
  nftsPurchasesPriceAvgGte?: string;
  collectionsOwnedCountGte?: string;
  daysSinceLastPurchaseLte?: string;
}

export interface SegmentRequest extends FinancialFilters, Page {
  collections: { contractAddress: string; nftsOwnedCountGte?: string }[];
  collectionsCondition?: CollectionCondition;
}

const WALLETS: ApiResource = { kind: "wallets" };

function checkFilters(filters: FinancialFilters): FinancialFilters {
  const out: FinancialFilters = {};
  if (filters.nftsPurchasesVolumeGte !== undefined)
    out.nftsPurchasesVolumeGte = parseDecimal(
      filters.nftsPurchasesVolumeGte,
      "minimum purchase volume",
    );
  if (filters.nftsPurchasesPriceAvgGte !== undefined)
    out.nftsPurchasesPriceAvgGte = parseDecimal(
      filters.nftsPurchasesPriceAvgGte,
      "minimum average price",
    );
  if (filters.collectionsOwnedCountGte !== undefined)
    out.collectionsOwnedCountGte = parseCount(
      filters.collectionsOwnedCountGte,
      "minimum collection count",
    );
  if (filters.daysSinceLastPurchaseLte !== undefined)
    out.daysSinceLastPurchaseLte = parseCount(filters.daysSinceLastPurchaseLte, "number of days");
  return out;
}

/** Audience insights (audiences/v1beta1): endpoints 1 to 9 of the spec. */
export class AudiencesApi {
  constructor(private readonly call: Call) {}

  /** The GETs whose only input is a collection address in the path. */
  private byCollection<K extends keyof Schemas>(
    schema: K,
    contract: string,
    path: (address: string) => string,
    ttl: TtlGroup,
    options: CallOptions | undefined,
  ) {
    const address = parseAddress(contract, "collection address");
    return this.call(
      schema,
      { method: "GET", path: path(address), ttl, resource: { kind: "collection", address } },
      options,
    );
  }

  /** 1. Behavior breakdown of up to 500 wallets (addresses and/or ENS names). */
  async behaviorsByWallets(wallets: readonly string[], options?: CallOptions) {
    const walletAddresses = parseWalletList(wallets);
    return this.call(
      "behaviorsByWallets",
      {
        method: "POST",
        path: "/audiences/v1beta1/behaviors/by_wallets",
        body: { walletAddresses },
        ttl: "behaviors",
        resource: WALLETS,
      },
      options,
    );
  }

  /** 2. Behavior breakdown of a collection's owners, with the 30-day change. */
  async behaviorsByCollection(contract: string, options?: CallOptions) {
    return this.byCollection(
      "behaviorsByCollection",
      contract,
      (address) => `/audiences/v1beta1/behaviors/by_collection/${seg(address)}`,
      "behaviors",
      options,
    );
  }

  /** 3. Behavior and seven scores of each owner of a collection. */
  async behaviorDetailsByCollection(contract: string, options?: CallOptions) {
    return this.byCollection(
      "behaviorDetails",
      contract,
      (address) => `/audiences/v1beta1/behaviors/by_collection/${seg(address)}/details`,
      "behaviors",
      options,
    );
  }

  /** 4. Financial profile of a collection: its shape is not in the spec. */
  async financialProfileByCollection(contract: string, options?: CallOptions) {
    return this.byCollection(
      "financialProfile",
      contract,
      (address) => `/audiences/v1beta1/financial_profiles/by_collection/${seg(address)}`,
      "audience",
      options,
    );
  }

  /** 5. Financial stats of up to 500 wallets; the filters go in the body (placement unverified). */
  async financialStatsByWallets(
    wallets: readonly string[],
    filters: FinancialFilters = {},
    options?: CallOptions,
  ) {
    const walletAddresses = parseWalletList(wallets);
    return this.call(
      "financialStats",
      {
        method: "POST",
        path: "/audiences/v1beta1/financial_stats/by_wallets",
        body: { walletAddresses, ...checkFilters(filters) },
        ttl: "audience",
        resource: WALLETS,
      },
      options,
    );
  }

  /** 6. Financial stats of all owners of a collection. */
  async financialStatsByCollection(contract: string, options?: CallOptions) {
    return this.byCollection(
      "financialStats",
      contract,
      (address) => `/audiences/v1beta1/financial_stats/by_collection/${seg(address)}`,
      "audience",
      options,
    );
  }

  /** 7. Up to 30 collections most held by this collection's owners. */
  async commonCollections(contract: string, options?: CallOptions) {
    return this.byCollection(
      "commonCollections",
      contract,
      (address) => `/audiences/v1beta1/common/collections/${seg(address)}`,
      "ownership",
      options,
    );
  }

  /** 8. Ownership trends of the collections in common over a duration. */
  async commonCollectionTrends(contract: string, duration: Duration, options?: CallOptions) {
    const address = parseAddress(contract, "collection address");
    return this.call(
      "commonCollectionTrends",
      {
        method: "GET",
        path: `/audiences/v1beta1/common/collections/${seg(address)}/trends`,
        query: { duration: oneOf(duration, DURATIONS, "duration") },
        ttl: "ownership",
        resource: { kind: "collection", address },
      },
      options,
    );
  }

  /** 9. Wallets matching holdings in one or two collections and financial criteria. */
  async segmentedAudience(request: SegmentRequest, options?: CallOptions) {
    if (request.collections.length < 1 || request.collections.length > 2) {
      throw new InvalidInputError("invalid_argument", "A segment takes one or two collections.");
    }
    const collections = request.collections.map((collection) => ({
      contractAddress: parseWallet(collection.contractAddress),
      ...(collection.nftsOwnedCountGte !== undefined
        ? { nftsOwnedCountGte: parseCount(collection.nftsOwnedCountGte, "minimum owned count") }
        : {}),
    }));
    const page = pageQuery(request);
    // This body types the count filters as int64 numbers (endpoint 5 takes them as strings).
    const { collectionsOwnedCountGte, daysSinceLastPurchaseLte, ...amounts } =
      checkFilters(request);
    const asNumber = (value: string | undefined) =>
      value === undefined ? undefined : Number(value);
    const body = {
      collections,
      collectionsCondition:
        request.collectionsCondition === undefined
          ? undefined
          : oneOf(request.collectionsCondition, COLLECTION_CONDITIONS, "condition"),
      ...amounts,
      collectionsOwnedCountGte: asNumber(collectionsOwnedCountGte),
      daysSinceLastPurchaseLte: asNumber(daysSinceLastPurchaseLte),
      limit: asNumber(page.limit),
      offset: asNumber(page.offset),
    };
    return this.call(
      "segmentedAudience",
      {
        method: "POST",
        path: "/audiences/v1beta1/segmented_audience",
        body,
        ttl: "audience",
        resource: { kind: "segment" },
      },
      options,
    );
  }
}
