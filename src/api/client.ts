import type { z } from "zod";
import type { Config } from "../config.ts";
import type { Logger } from "../log.ts";
import { UpstreamBudget } from "./budget.ts";
import { ResponseCache } from "./cache.ts";
import { ApiError } from "./errors.ts";
import {
  COLLECTION_CONDITIONS,
  type CollectionCondition,
  createSchemas,
  DURATIONS,
  type Duration,
  GROUP_BY_PERIODS,
  type GroupByPeriod,
  NFT_CONTRACT_TYPES,
  type Out,
  type Schemas,
  SORT_DIRECTIONS,
  type SortDirection,
  SPAM_FILTERS,
  type SpamFilter,
  TOP_METRICS,
  type TopMetric,
} from "./schemas.ts";
import { type RequestObserver, Transport } from "./transport.ts";
import {
  InvalidInputError,
  parseAddress,
  parseCount,
  parseDecimal,
  parseEnsName,
  parseTokenId,
  parseWallet,
  parseWalletList,
} from "./validate.ts";

export type TtlGroup = keyof Config["cache"]["ttlSeconds"];

export interface CallOptions {
  signal?: AbortSignal | undefined;
  /** Skip the cache (the alert poller must see the service's newest answer). */
  fresh?: boolean;
  /** Background work (the alert poller): first in line for the upstream budget, never refused. */
  background?: boolean;
}

export interface Page {
  limit?: number;
  offset?: number;
}

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

export interface ReportInput {
  wallet: string;
  contract: string;
  tokenId?: string | undefined;
  feedback?: string | undefined;
}

export interface ApiClientOptions {
  transport: Transport;
  cache: ResponseCache;
  ttlSeconds: Config["cache"]["ttlSeconds"];
  reportNotSpamPath: string;
  logger: Logger;
}

const seg = (value: string) => encodeURIComponent(value);

/**
 * Unknown enum values are logged once each. The bot remembers this many; past them it says so
 * once and stops logging them, so a hostile answer cannot flood the log or grow memory.
 */
const MAX_REMEMBERED_UNKNOWN = 1000;
/** An unknown value is logged (and remembered) cut to this length. */
const MAX_LOGGED_ENUM_VALUE = 100;

function oneOf<T extends string>(value: string, allowed: readonly T[], what: string): T {
  if ((allowed as readonly string[]).includes(value)) return value as T;
  throw new InvalidInputError(
    `"${value}" is not a valid ${what}; use one of ${allowed.join(", ")}.`,
  );
}

function pageQuery(page: Page | undefined, maxLimit = 500): Record<string, string | undefined> {
  const check = (value: number | undefined, what: string, min: number, max: number) => {
    if (value === undefined) return undefined;
    if (!Number.isInteger(value) || value < min || value > max) {
      throw new InvalidInputError(`${what} must be a whole number from ${min} to ${max}.`);
    }
    return String(value);
  };
  return {
    limit: check(page?.limit, "limit", 1, maxLimit),
    offset: check(page?.offset, "offset", 0, 1_000_000),
  };
}

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

/**
 * The data-service client: one method per endpoint of API-SPEC.md, grouped by area. Every input is
 * checked before a request leaves; every output is parsed with the spec's schema.
 */
export class ApiClient {
  readonly audiences: AudiencesApi;
  readonly foundational: FoundationalApi;
  readonly collections: CollectionsApi;
  readonly wallets: WalletsApi;
  private readonly schemas: Schemas;
  private readonly reportedUnknown = new Set<string>();
  private unknownOverflow = false;

  constructor(private readonly options: ApiClientOptions) {
    this.schemas = createSchemas((enumName, value) => {
      if (this.unknownOverflow) return;
      const shown =
        value.length > MAX_LOGGED_ENUM_VALUE ? `${value.slice(0, MAX_LOGGED_ENUM_VALUE)}…` : value;
      const key = `${enumName}:${shown}`;
      if (this.reportedUnknown.has(key)) return;
      if (this.reportedUnknown.size >= MAX_REMEMBERED_UNKNOWN) {
        this.unknownOverflow = true;
        this.reportedUnknown.clear();
        options.logger.warn(
          { enum: enumName, remembered: MAX_REMEMBERED_UNKNOWN },
          "the data service sent more unknown enum values than the bot remembers: further ones are not logged one by one",
        );
        return;
      }
      this.reportedUnknown.add(key);
      options.logger.warn(
        { enum: enumName, value: shown },
        "data service sent an enum value the spec does not list",
      );
    });
    const call = this.call.bind(this);
    this.audiences = new AudiencesApi(call);
    this.foundational = new FoundationalApi(call);
    this.collections = new CollectionsApi(call);
    this.wallets = new WalletsApi(call, options.reportNotSpamPath);
  }

  get cacheStats() {
    return this.options.cache.stats;
  }

  /** What the cached answers weigh, in bytes as received. */
  get cacheBytes(): number {
    return this.options.cache.stats.bytes;
  }

  get baseUrl(): string {
    return this.options.transport.baseUrl;
  }

  /** Told of every HTTP attempt (metrics). */
  observeRequests(observer: RequestObserver): void {
    this.options.transport.observer = observer;
  }

  async close(): Promise<void> {
    await this.options.transport.close();
  }

  /** One request: through the cache for reads with a TTL group, then parsed with its schema. */
  private async call<K extends keyof Schemas>(
    schema: K,
    spec: {
      method: "GET" | "POST";
      path: string;
      query?: Record<string, string | readonly string[] | undefined>;
      body?: unknown;
      ttl?: TtlGroup;
      retry?: boolean;
    },
    options: CallOptions | undefined,
  ): Promise<Out<K>> {
    const { transport, cache, ttlSeconds } = this.options;
    const load = async () => {
      const { json, bytes } = await transport.request({
        method: spec.method,
        path: spec.path,
        query: spec.query ?? {},
        body: spec.body,
        retry: spec.retry ?? true,
        signal: spec.ttl && !options?.fresh ? undefined : options?.signal,
        background: options?.background,
      });
      return { value: this.parse(schema, json, spec.method, spec.path), bytes };
    };
    if (!spec.ttl || options?.fresh) return (await load()).value;
    const key = JSON.stringify([
      transport.baseUrl,
      spec.method,
      spec.path,
      spec.query ?? {},
      spec.body ?? null,
    ]);
    return cache.getOrLoad(key, ttlSeconds[spec.ttl], load, options?.signal);
  }

  private parse<K extends keyof Schemas>(
    schema: K,
    json: unknown,
    method: string,
    path: string,
  ): Out<K> {
    const result = (this.schemas[schema] as z.ZodType).safeParse(json);
    if (result.success) return result.data as Out<K>;
    const issue = result.error.issues[0];
    const field = issue?.path.map(String).join(".") || "(root)";
    throw new ApiError({
      kind: "invalid_response",
      status: 200,
      method,
      path,
      field,
      message: `The data service's answer did not match the spec at ${field}: ${issue?.message ?? "invalid"}.`,
    });
  }
}

type Call = ApiClient["call"];

class AudiencesApi {
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
    return this.call(schema, { method: "GET", path: path(address), ttl }, options);
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
      },
      options,
    );
  }

  /** 9. Wallets matching holdings in one or two collections and financial criteria. */
  async segmentedAudience(request: SegmentRequest, options?: CallOptions) {
    if (request.collections.length < 1 || request.collections.length > 2) {
      throw new InvalidInputError("A segment takes one or two collections.");
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
      { method: "POST", path: "/audiences/v1beta1/segmented_audience", body, ttl: "audience" },
      options,
    );
  }
}

export interface ContractsQuery extends Page {
  sortDirection?: SortDirection;
  contractTypes?: readonly string[];
  /** ISO 8601; exclusive lower bound on mint time. */
  blockTimestampGt?: string;
}

class FoundationalApi {
  constructor(private readonly call: Call) {}

  /** 10. Contracts by mint time; without contractTypes, fungible ones too. */
  async contracts(query: ContractsQuery = {}, options?: CallOptions) {
    const contractTypes = query.contractTypes?.map((type) =>
      oneOf(type, NFT_CONTRACT_TYPES, "contract type"),
    );
    if (query.blockTimestampGt !== undefined && Number.isNaN(Date.parse(query.blockTimestampGt))) {
      throw new InvalidInputError("blockTimestampGt must be an ISO 8601 timestamp.");
    }
    return this.call(
      "contracts",
      {
        method: "GET",
        path: "/foundational/v1beta2/contracts",
        query: {
          ...pageQuery(query),
          sortDirection:
            query.sortDirection !== undefined
              ? oneOf(query.sortDirection, SORT_DIRECTIONS, "sort direction")
              : undefined,
          contractTypes,
          blockTimestampGt: query.blockTimestampGt,
        },
        ttl: "contracts",
      },
      options,
    );
  }

  /** 11. One NFT: metadata, metrics and last sale. */
  async nftDetails(contract: string, tokenId: string, options?: CallOptions) {
    const address = parseAddress(contract, "contract address");
    const id = parseTokenId(tokenId);
    return this.call(
      "nftDetails",
      {
        method: "GET",
        path: `/foundational/v1beta2/nfts/${seg(address)}/${seg(id)}/details`,
        ttl: "nft",
      },
      options,
    );
  }

  /** 12. The metadata document as found. */
  async rawMetadata(contract: string, tokenId: string, options?: CallOptions) {
    const address = parseAddress(contract, "contract address");
    const id = parseTokenId(tokenId);
    return this.call(
      "rawMetadata",
      {
        method: "GET",
        path: `/foundational/v1beta2/nfts/${seg(address)}/${seg(id)}/raw_metadata`,
        ttl: "nft",
      },
      options,
    );
  }

  /** 13. Tokens held by an owner, optionally in one collection. */
  async nftsByOwner(
    owner: string,
    query: Page & { contractAddress?: string; tokenTypes?: readonly string[] } = {},
    options?: CallOptions,
  ) {
    const wallet = parseWallet(owner);
    return this.call(
      "nftsByOwner",
      {
        method: "GET",
        path: `/foundational/v1beta2/nfts/by_owner/${seg(wallet)}`,
        query: {
          ...pageQuery(query),
          contractAddress:
            query.contractAddress !== undefined
              ? parseAddress(query.contractAddress, "collection address")
              : undefined,
          tokenTypes: query.tokenTypes?.map((type) =>
            oneOf(type, NFT_CONTRACT_TYPES, "token type"),
          ),
        },
        ttl: "ownership",
      },
      options,
    );
  }

  /** 14. Current owners of one token (several for ERC1155). */
  async tokenOwners(contract: string, tokenId: string, page: Page = {}, options?: CallOptions) {
    const address = parseAddress(contract, "contract address");
    const id = parseTokenId(tokenId);
    return this.call(
      "tokenOwners",
      {
        method: "GET",
        path: `/foundational/v1beta2/nfts/${seg(address)}/${seg(id)}/owners`,
        query: pageQuery(page),
        ttl: "ownership",
      },
      options,
    );
  }
}

class CollectionsApi {
  constructor(private readonly call: Call) {}

  /** 15. Collections ranked by a metric over a duration, descending. */
  async top(metric: TopMetric, duration: Duration, page: Page = {}, options?: CallOptions) {
    const m = oneOf(metric, TOP_METRICS, "metric");
    const d = oneOf(duration, DURATIONS, "duration");
    return this.call(
      "topCollections",
      {
        method: "GET",
        path: `/collections/v1beta2/top/${seg(m)}/${seg(d)}`,
        query: pageQuery(page),
        ttl: "top",
      },
      options,
    );
  }

  /** 16. Owners of a collection with their owned counts. */
  async ownersList(
    contract: string,
    query: Page & { sortDirection?: SortDirection } = {},
    options?: CallOptions,
  ) {
    const address = parseAddress(contract, "collection address");
    return this.call(
      "ownersList",
      {
        method: "GET",
        path: `/collections/v1beta2/${seg(address)}/owners_list`,
        query: {
          ...pageQuery(query),
          sortDirection:
            query.sortDirection !== undefined
              ? oneOf(query.sortDirection, SORT_DIRECTIONS, "sort direction")
              : undefined,
        },
        ttl: "ownership",
      },
      options,
    );
  }

  /** 17. Owner count over time: one point per period of the duration. */
  async ownersCount(
    contract: string,
    duration: Duration,
    groupBy: GroupByPeriod = "GROUP_BY_PERIOD_1_DAY",
    query: { timestampLt?: string } = {},
    options?: CallOptions,
  ) {
    const address = parseAddress(contract, "collection address");
    const d = oneOf(duration, DURATIONS, "duration");
    const g = oneOf(groupBy, GROUP_BY_PERIODS, "grouping period");
    if (query.timestampLt !== undefined && Number.isNaN(Date.parse(query.timestampLt))) {
      throw new InvalidInputError("timestampLt must be an ISO 8601 timestamp.");
    }
    return this.call(
      "ownersCount",
      {
        method: "GET",
        path: `/collections/v1beta2/${seg(address)}/owners_count/${seg(d)}/${seg(g)}`,
        query: { timestampLt: query.timestampLt },
        ttl: "ownership",
      },
      options,
    );
  }
}

class WalletsApi {
  constructor(
    private readonly call: Call,
    private readonly reportNotSpamPath: string,
  ) {}

  /** 18. A wallet's NFTs, each flagged spam or not for that wallet. */
  async nfts(wallet: string, query: { spam?: SpamFilter } = {}, options?: CallOptions) {
    const w = parseWallet(wallet);
    return this.call(
      "walletNfts",
      {
        method: "GET",
        path: `/wallets/v1beta2/${seg(w)}/nfts`,
        query: {
          spam:
            query.spam !== undefined ? oneOf(query.spam, SPAM_FILTERS, "spam filter") : undefined,
        },
        ttl: "ownership",
      },
      options,
    );
  }

  /** 19. Report a spam NFT the classification missed. Never retried, never cached. */
  async reportSpam(input: ReportInput, options?: CallOptions) {
    const { wallet, contract, query } = this.reportParts(input);
    return this.call(
      "report",
      {
        method: "GET",
        path: `/wallets/v1beta2/${seg(wallet)}/report_spam/${seg(contract)}`,
        query,
        retry: false,
      },
      options,
    );
  }

  /** 20. Report an NFT wrongly flagged spam. Its path is not in the spec: a setting (unverified). */
  async reportNotSpam(input: ReportInput, options?: CallOptions) {
    const { wallet, contract, query } = this.reportParts(input);
    const path = this.reportNotSpamPath
      .replace("{wallet}", seg(wallet))
      .replace("{contract}", seg(contract));
    return this.call("report", { method: "GET", path, query, retry: false }, options);
  }

  private reportParts(input: ReportInput) {
    const wallet = parseAddress(input.wallet, "wallet address");
    const contract = parseAddress(input.contract, "contract address");
    const tokenId = input.tokenId !== undefined ? parseTokenId(input.tokenId) : undefined;
    const feedback = input.feedback?.trim().slice(0, 1000) || undefined;
    return { wallet, contract, query: { tokenId, feedback } };
  }

  /** 21. ENS name to address. */
  async ensByName(name: string, options?: CallOptions) {
    const normalized = parseEnsName(name);
    return this.call(
      "ensByName",
      { method: "GET", path: `/wallets/v1beta2/ens/by_name/${seg(normalized)}`, ttl: "ens" },
      options,
    );
  }

  /** 22. Every ENS name that maps to an address. */
  async ensByAddress(address: string, options?: CallOptions) {
    const a = parseAddress(address, "address");
    return this.call(
      "ensByAddress",
      { method: "GET", path: `/wallets/v1beta2/ens/by_address/${seg(a)}`, ttl: "ens" },
      options,
    );
  }
}

/** Builds the client from the settings. */
export function createApiClient(
  config: Pick<Config, "api" | "cache">,
  baseUrl: string,
  apiKey: string | undefined,
  logger: Logger,
): ApiClient {
  const transport = new Transport({
    baseUrl,
    apiKey,
    timeoutMs: config.api.timeoutMs,
    retries: config.api.retries,
    retryMinDelayMs: config.api.retryMinDelayMs,
    retryMaxDelayMs: config.api.retryMaxDelayMs,
    retryMaxTotalMs: config.api.retryMaxTotalMs,
    maxBodyBytes: config.api.maxBodyBytes,
    budget: new UpstreamBudget(config.api.budget),
    logger,
  });
  return new ApiClient({
    transport,
    cache: new ResponseCache({
      maxKeys: config.cache.maxKeys,
      maxBytes: config.cache.maxBytes,
      maxEntryBytes: config.cache.maxEntryBytes,
    }),
    ttlSeconds: config.cache.ttlSeconds,
    reportNotSpamPath: config.api.reportNotSpamPath,
    logger,
  });
}
