import type { Logger } from "../log.ts";
import { AudiencesApi } from "./audiences.ts";
import { type Budget, type BudgetOptions, UpstreamBudget } from "./budget.ts";
import { type AnswerCache, ResponseCache, type ResponseCacheOptions } from "./cache.ts";
import { createCall, type TtlSeconds } from "./call.ts";
import { CollectionsApi } from "./collections.ts";
import { FoundationalApi } from "./foundational.ts";
import { type RequestObserver, Transport, type TransportOptions } from "./transport.ts";
import { WalletsApi } from "./wallets.ts";

/** What the client is built from: plain values, so it knows nothing of the bot's settings. */
export interface ApiClientSettings
  extends Omit<TransportOptions, "budget" | "logger" | "dispatcher"> {
  budget: Omit<BudgetOptions, "now">;
  /** Endpoint 20's path, with {wallet} and {contract}: the spec does not give it. */
  reportNotSpamPath: string;
  cache: ResponseCacheOptions & { ttlSeconds: TtlSeconds };
}

interface ApiClientParts {
  transport: Transport;
  cache: AnswerCache;
  ttlSeconds: TtlSeconds;
  reportNotSpamPath: string;
  logger: Logger;
}

/**
 * The data-service client: one method per endpoint of API-SPEC.md, grouped by area, one area per
 * file. Every input is checked before a request leaves; every output is parsed with the spec's
 * schema; every failure is an ApiError that names the resource it was about.
 */
export class ApiClient {
  readonly audiences: AudiencesApi;
  readonly foundational: FoundationalApi;
  readonly collections: CollectionsApi;
  readonly wallets: WalletsApi;

  constructor(private readonly parts: ApiClientParts) {
    const call = createCall(parts);
    this.audiences = new AudiencesApi(call);
    this.foundational = new FoundationalApi(call);
    this.collections = new CollectionsApi(call);
    this.wallets = new WalletsApi(call, parts.reportNotSpamPath);
  }

  get cacheStats() {
    return this.parts.cache.stats;
  }

  /** What the cached answers weigh, in bytes as received. */
  get cacheBytes(): number {
    return this.parts.cache.stats.bytes;
  }

  /** Told of every HTTP attempt (metrics). */
  observeRequests(observer: RequestObserver): void {
    this.parts.transport.observer = observer;
  }

  async close(): Promise<void> {
    await this.parts.transport.close();
  }
}

/** Parts shared with other instances (over Redis) instead of this process's own. */
export interface SharedParts {
  cache?: AnswerCache;
  budget?: Budget;
}

/**
 * Builds the client, its transport, upstream budget and response cache (the in-process ones
 * unless `shared` gives others).
 */
export function createApiClient(
  settings: ApiClientSettings,
  logger: Logger,
  shared: SharedParts = {},
): ApiClient {
  const { budget, cache, reportNotSpamPath, ...transport } = settings;
  return new ApiClient({
    transport: new Transport({
      ...transport,
      budget: shared.budget ?? new UpstreamBudget(budget),
      logger,
    }),
    cache: shared.cache ?? new ResponseCache(cache),
    ttlSeconds: cache.ttlSeconds,
    reportNotSpamPath,
    logger,
  });
}
