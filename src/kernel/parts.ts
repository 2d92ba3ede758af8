import type { ChatAdapter } from "../adapters/types.ts";
import { UpstreamBudget } from "../api/budget.ts";
import { ResponseCache } from "../api/cache.ts";
import { type ApiClient, type ApiClientSettings, createApiClient } from "../api/client.ts";
import type { Shared } from "../cache/index.ts";
import type { Chain } from "../chains.ts";
import type { Config } from "../config.ts";
import { chainLeaseName, isDeadLocalHolder, Lease } from "../jobs/lease.ts";
import type { Logger } from "../log.ts";
import type { Simulator } from "../simulator/index.ts";
import { connect, listen } from "../startup.ts";
import type { LeaseStore } from "../store/types.ts";
import { settledBy } from "../within.ts";
import type { FeatureParts, Kernel } from "./feature.ts";

/**
 * The kernel's parts that bot.ts opens first, each pushing its closer on `opened` (closed last
 * first when a later step fails, or at stop): each chain's data service and Redis's shared parts.
 */

/**
 * Each chain's data service: the configured ones, or the embedded simulator started for them all
 * (one server, a path prefix per chain).
 */
export async function dataServices(
  config: Config,
  logger: Logger,
  opened: (() => unknown)[],
): Promise<{ chains: Chain[]; simulator: Simulator | undefined }> {
  if (!config.simulated) return { chains: config.chains, simulator: undefined };
  // Loaded only when used: the simulator's world is large, and the real service needs none of it.
  const { startSimulator } = await import("../simulator/index.ts");
  const simulator = await listen(
    "the embedded simulator (SIMULATOR_PORT)",
    `127.0.0.1:${config.simulator.port}`,
    () =>
      startSimulator({
        port: config.simulator.port,
        apiKey: config.simulator.apiKey,
        seed: config.simulator.seed,
        mintIntervalMs: config.simulator.mintIntervalMs,
        badActorEvery: config.simulator.badActorEvery,
        chains: config.chains.map((chain) => chain.id),
      }),
  );
  opened.push(() => simulator.close());
  logger.info(
    { url: simulator.url, chains: simulator.chains },
    "no API_BASE_URL: using the embedded simulator",
  );
  const chains = config.chains.map((chain) => ({
    ...chain,
    baseUrl: simulator.urlOf(chain.id),
    apiKey: simulator.apiKey,
  }));
  return { chains, simulator };
}

/** The data-service client's settings, taken from the bot's (src/api knows nothing of Config). */
export function apiClientSettings(
  config: Pick<Config, "api" | "cache">,
  baseUrl: string,
  apiKey: string | undefined,
): ApiClientSettings {
  const { api } = config;
  return {
    baseUrl,
    apiKey,
    timeoutMs: api.timeoutMs,
    retries: api.retries,
    retryMinDelayMs: api.retryMinDelayMs,
    retryMaxDelayMs: api.retryMaxDelayMs,
    retryMaxTotalMs: api.retryMaxTotalMs,
    maxBodyBytes: api.maxBodyBytes,
    budget: api.budget,
    reportNotSpamPath: api.reportNotSpamPath,
    cache: config.cache,
  };
}

/** With REDIS_URL: the cache, limits and pacing shared with the other instances. */
export async function sharedParts(
  config: Config,
  logger: Logger,
  opened: (() => unknown)[],
): Promise<Shared | undefined> {
  const { redis } = config;
  if (redis.url === undefined) return undefined;
  // Loaded only with REDIS_URL: ioredis is some 15 ms of a start that does not use it
  // (test/lazy-load.test.ts).
  const { openShared, redactRedisUrl } = await import("../cache/index.ts");
  const shared = openShared(
    {
      url: redis.url,
      keyPrefix: redis.keyPrefix,
      commandTimeoutMs: redis.commandTimeoutMs,
      coolingMs: redis.breakerCoolingMs,
      local: { ttlSeconds: redis.localTtlSeconds, maxBytes: redis.localMaxBytes },
      cache: config.cache,
      budget: config.api.budget,
      discordPerSecond: config.discord.globalPerSecond,
    },
    logger.child({ part: "redis" }),
  );
  opened.push(() => shared.link.close());
  logger.info(
    { redis: redactRedisUrl(redis.url), prefix: redis.keyPrefix },
    "REDIS_URL set: answer cache and rate limits are shared with the bot's other instances",
  );
  return shared;
}

/**
 * Closes what was opened, last first; a failure to close is logged, not thrown. With a deadline
 * (monotonic ms), a part not closed by then is logged and left behind.
 */
export async function closeAll(
  closers: (() => unknown)[],
  logger: Logger,
  deadline = Number.POSITIVE_INFINITY,
): Promise<void> {
  for (const close of closers.splice(0).reverse()) {
    const closing = (async () => close())().catch((error: unknown) => {
      logger.warn({ err: error }, "could not close a part");
    });
    if (deadline === Number.POSITIVE_INFINITY) await closing;
    else if (!(await settledBy(closing, deadline)))
      logger.warn("a part did not close in time at shutdown; going on");
  }
}

/**
 * One client per chain, all on one answer cache (its keys hold the base URL) and one upstream
 * budget: more chains never mean more memory or more requests a second. By chain id, the
 * default chain's first.
 */
export function dataClients(
  config: Config,
  chains: readonly Chain[],
  shared: Shared | undefined,
  logger: Logger,
  opened: (() => unknown)[],
): Map<string, ApiClient> {
  const cache = shared?.cache ?? new ResponseCache(config.cache);
  const budget = shared?.budget ?? new UpstreamBudget(config.api.budget);
  const apis = new Map<string, ApiClient>();
  for (const chain of chains) {
    const client = createApiClient(
      apiClientSettings(config, chain.baseUrl ?? "", chain.apiKey),
      logger.child({ part: "api", ...(chains.length > 1 ? { chain: chain.id } : {}) }),
      { cache, budget },
    );
    opened.push(() => client.close());
    apis.set(chain.id, client);
  }
  return apis;
}

/**
 * Starts each adapter in turn, one that connects to its platform waiting out a platform that is
 * slow to answer (within `timeoutMs`, told at once through `notice`); each adapter's stop goes on
 * `running` as it starts.
 */
export async function connectAdapters(
  adapters: readonly ChatAdapter[],
  timeoutMs: number,
  running: (() => unknown)[],
  notice: ((line: string) => void) | undefined,
): Promise<void> {
  for (const adapter of adapters) {
    running.push(() => adapter.stop());
    const { connectsTo, label, tokenSetting } = adapter;
    if (connectsTo === undefined) await adapter.start();
    else
      await connect(
        { service: label, url: connectsTo, credential: tokenSetting, credentialName: "bot token" },
        timeoutMs,
        () => adapter.start(),
        notice,
      );
  }
}

/** One lease per chain, named for it, held by `holder` (a dead local holder's is taken at once). */
export function chainLeases(
  chains: readonly Pick<Chain, "id">[],
  store: LeaseStore,
  holder: string,
  ttlMs: number,
  monotonic?: () => number,
): Map<string, Lease> {
  return new Map(
    chains.map((chain) => [
      chain.id,
      new Lease({
        store,
        name: chainLeaseName(chain.id),
        holder,
        ttlMs,
        isDead: isDeadLocalHolder,
        ...(monotonic ? { monotonic } : {}),
      }),
    ]),
  );
}

/**
 * Every built feature's sections for a chat (FeatureParts.chatSections), in the features' order:
 * read when asked, so a feature built early sees those built after it.
 */
export function sectionsOf(built: ReadonlyMap<unknown, FeatureParts>): Kernel["chatSections"] {
  return async (platform, chatId) =>
    (
      await Promise.all(
        [...built.values()].map((part) => part.chatSections?.(platform, chatId) ?? []),
      )
    ).flat();
}
