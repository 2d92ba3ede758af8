import { existsSync } from "node:fs";
import { z } from "zod";
import { ConfigError, resolveChains, resolveHttp } from "./config-resolve.ts";
import {
  cacheEntryBytes,
  databaseSchemaName,
  databaseUrl,
  dataServiceChoice,
  discordGuildId,
  discordPublicKey,
  discordToken,
  explorerUrl,
  ipfsGateway,
  logLevel,
  redisKeyPrefix,
  redisUrl,
  reportNotSpamPath,
  telegramToken,
  telegramWebhookSecret,
} from "./config-values.ts";
import {
  bool,
  emptyToUndefined,
  env,
  fromVariables,
  int,
  optionalPort,
  optionalString,
  optionalUrl,
  requirement,
  seconds,
  variableAt,
} from "./env.ts";
import { DEFAULT_HTTP_LIMITS } from "./http/limits.ts";

export { ConfigError } from "./config-resolve.ts";

/**
 * Every setting of the bot, read from the environment once at start-up. `.env.example` documents
 * each variable; README.md has the same table. Values of secrets never appear in an error.
 */

export const SECRET_VARIABLES: ReadonlySet<string> = new Set([
  "API_KEY",
  "DISCORD_TOKEN",
  "TELEGRAM_BOT_TOKEN",
  "TELEGRAM_WEBHOOK_SECRET",
  "SIMULATOR_API_KEY",
  // Its JSON form may carry API keys.
  "CHAINS",
  // It may carry a password.
  "REDIS_URL",
]);

/**
 * Every setting, shaped as the code uses it; each leaf names its variable. A new setting is one
 * line here (and one in .env.example); its type follows.
 */
const SettingsSchema = z.object({
  /**
   * The chains served (src/chains.ts): `ethereum=https://…,base=https://…` or a JSON array; the
   * first is the default. Unset: ethereum on API_BASE_URL, or every chain of the simulator.
   */
  chains: env("CHAINS", optionalString),
  /**
   * `simulator`: the embedded simulator's made-up data is served on purpose, even to Discord or
   * Telegram (without it, a chat token and no data-service URL is refused at start: see
   * dataServiceRefusal). Unset: the data service at API_BASE_URL (or CHAINS), or with neither, the
   * simulator for the console chat alone.
   */
  dataService: env("DATA_SERVICE", dataServiceChoice),
  api: z.object({
    /** Undefined: the bot starts the embedded simulator and uses it. */
    baseUrl: env("API_BASE_URL", optionalUrl),
    apiKey: env("API_KEY", optionalString),
    timeoutMs: env("API_TIMEOUT_MS", int(10_000, 100, 120_000)),
    retries: env("API_RETRIES", int(3, 0, 10)),
    retryMinDelayMs: env("API_RETRY_MIN_DELAY_MS", int(250, 0, 60_000)),
    retryMaxDelayMs: env("API_RETRY_MAX_DELAY_MS", int(5_000, 0, 300_000)),
    retryMaxTotalMs: env("API_RETRY_MAX_TOTAL_MS", int(20_000, 0, 600_000)),
    reportNotSpamPath: env("API_REPORT_NOT_SPAM_PATH", reportNotSpamPath),
    /** Largest response body read, per response. */
    maxBodyBytes: env("API_MAX_BODY_BYTES", int(8 * 1024 * 1024, 1024, 1024 * 1024 * 1024)),
    /** One token bucket for every request to the data service (retries included). */
    budget: z.object({
      perSecond: env("API_BUDGET_PER_SECOND", int(20, 1, 100_000)),
      burst: env("API_BUDGET_BURST", int(40, 1, 100_000)),
      maxWaitMs: env("API_BUDGET_MAX_WAIT_MS", int(2_000, 0, 60_000)),
    }),
  }),
  cache: z.object({
    maxKeys: env("CACHE_MAX_KEYS", int(10_000, 1, 1_000_000)),
    /**
     * Bound of the cache, counted in bytes of the answers as received (JSON text). 4 MiB: the
     * parsed answers take about twice that on the heap, and the whole process, both platforms
     * connected and 10,000 subscriptions, stays within 160 MB at any moment (npm run bench --
     * process measures it): a 256 MB host.
     */
    maxBytes: env("CACHE_MAX_BYTES", int(4 * 1024 * 1024, 1024, 2 * 1024 * 1024 * 1024)),
    /** Larger answers are not cached; unset: a sixteenth of maxBytes (see parseConfig). */
    maxEntryBytes: env("CACHE_MAX_ENTRY_BYTES", cacheEntryBytes),
    ttlSeconds: z.object({
      behaviors: env("CACHE_TTL_BEHAVIORS_S", int(6 * 3600, 0, 7 * 86400)),
      audience: env("CACHE_TTL_AUDIENCE_S", int(3600, 0, 7 * 86400)),
      contracts: env("CACHE_TTL_CONTRACTS_S", int(30, 0, 3600)),
      top: env("CACHE_TTL_TOP_S", int(900, 0, 86400)),
      ownership: env("CACHE_TTL_OWNERSHIP_S", int(300, 0, 86400)),
      nft: env("CACHE_TTL_NFT_S", int(300, 0, 86400)),
      ens: env("CACHE_TTL_ENS_S", int(600, 0, 86400)),
    }),
  }),
  /**
   * Optional. With several instances: the answer cache, its single flight and every rate limit
   * shared over Redis. Unset: each process keeps its own, as one process needs.
   */
  redis: z.object({
    url: env("REDIS_URL", redisUrl),
    /** Every key the bot writes starts with it: several bots can share one Redis. */
    keyPrefix: env("REDIS_KEY_PREFIX", redisKeyPrefix),
    /** The in-process layer over Redis: short, so instances disagree for seconds at most. */
    localTtlSeconds: env("REDIS_CACHE_LOCAL_TTL_S", int(5, 1, 300)),
    localMaxBytes: env("REDIS_CACHE_LOCAL_MAX_BYTES", int(1024 * 1024, 1024, 256 * 1024 * 1024)),
    /** A Redis command not answered this soon fails; the caller uses its in-process fallback. */
    commandTimeoutMs: env("REDIS_COMMAND_TIMEOUT_MS", int(500, 20, 10_000)),
    /**
     * After repeated failures Redis is left alone this long (every caller on its in-process
     * fallback at once), then one probe decides whether it is back.
     */
    breakerCoolingMs: env("REDIS_BREAKER_COOLING_MS", int(10_000, 100, 600_000)),
  }),
  dataDir: env("DATA_DIR", z.preprocess(emptyToUndefined, z.string().default("./data"))),
  /**
   * PostgreSQL instead of the SQLite file under DATA_DIR: several instances share it. Its
   * password never appears in a message (the refusals below do not repeat the value).
   */
  databaseUrl: env("DATABASE_URL", databaseUrl),
  /** The PostgreSQL schema the store lives in (created if missing). */
  databaseSchema: env("DATABASE_SCHEMA", databaseSchemaName),
  /**
   * Bounds on every wait on PostgreSQL: a connection frozen without a reset (a failover, a NAT
   * table that dropped the flow) fails the query in flight and leaves the pool, rather than
   * holding the bot for ever.
   */
  postgres: z.object({
    /** The server cancels a statement running longer (statement_timeout). */
    statementTimeoutMs: env("PG_STATEMENT_TIMEOUT_MS", int(10_000, 100, 600_000)),
    /** The client gives up on a query with no answer after this (query_timeout). */
    queryTimeoutMs: env("PG_QUERY_TIMEOUT_MS", int(15_000, 100, 600_000)),
    /** A new connection not made within this fails (connectionTimeoutMillis). */
    connectTimeoutMs: env("PG_CONNECT_TIMEOUT_MS", int(5_000, 100, 120_000)),
    /** TCP keepalive probes start after a connection is idle this long. */
    keepAliveDelayMs: env("PG_KEEPALIVE_DELAY_MS", int(10_000, 1_000, 600_000)),
  }),
  /** The leases that elect one instance per job (each chain's poller, which also leads delivery). */
  lease: z.object({
    ttlMs: env("LEASE_TTL_MS", int(6_000, 500, 600_000)),
    renewMs: env("LEASE_RENEW_MS", int(2_000, 100, 300_000)),
  }),
  logLevel: env("LOG_LEVEL", logLevel),
  commandDeadlineMs: env("COMMAND_DEADLINE_MS", int(20_000, 1_000, 600_000)),
  /**
   * How long a chat platform's start is retried after a failure that may pass by itself (a
   * timeout, a 5xx) or waited for when it hangs; then it is a start-up failure.
   */
  connectTimeoutMs: seconds("STARTUP_CONNECT_TIMEOUT_S", 60, 1, 3600),
  rateLimit: z.object({
    burst: env("RATE_LIMIT_BURST", int(8, 1, 1000)),
    perMinute: env("RATE_LIMIT_PER_MINUTE", int(10, 1, 100_000)),
  }),
  /** Per Telegram group: the bot may send a group about 20 messages a minute. */
  chatRateLimit: z.object({
    burst: env("RATE_LIMIT_CHAT_BURST", int(20, 1, 1000)),
    perMinute: env("RATE_LIMIT_CHAT_PER_MINUTE", int(20, 1, 100_000)),
  }),
  buttonTtlSeconds: env("BUTTON_TTL_S", int(7 * 86400, 60, 365 * 86400)),
  /** Stored button actions per person; past it their oldest stop working. */
  buttonMaxPerUser: env("BUTTON_MAX_PER_USER", int(500, 25, 1_000_000)),
  reportsPerHour: env("REPORTS_PER_HOUR", int(10, 1, 10_000)),
  ipfsGateway: env("IPFS_GATEWAY", ipfsGateway),
  explorerUrl: env("EXPLORER_URL", explorerUrl),
  /**
   * How often the collection index (names people may type) is refreshed from the top lists and
   * the newest contracts, from start on; 0: never in the background, only when a name misses it.
   */
  collectionIndexRefreshMs: seconds("COLLECTION_INDEX_REFRESH_S", 900, 0, 86_400),
  alerts: z.object({
    pollIntervalMs: seconds("POLL_INTERVAL_S", 30, 1, 3600),
    overlapMs: seconds("POLL_OVERLAP_S", 600, 0, 86_400),
    pollLimit: env("POLL_LIMIT", int(100, 1, 500)),
    maxPages: env("POLL_MAX_PAGES", int(10, 1, 100)),
    /** A mint dated further past our clock is posted but does not move the poll cursor. */
    maxClockSkewMs: seconds("POLL_MAX_CLOCK_SKEW_S", 300, 0, 86_400),
    digestThreshold: env("ALERT_DIGEST_THRESHOLD", int(5, 2, 1000)),
    /** Failed tries before an alert is dropped (rate limits do not count). */
    maxAttempts: env("ALERT_MAX_ATTEMPTS", int(10, 1, 1000)),
    /** Members' spam reports after which a contract is not posted in their channel; 0: never. */
    suppressReports: env("ALERT_SUPPRESS_REPORTS", int(2, 0, 1000)),
    deliveryConcurrency: env("DELIVERY_CONCURRENCY", int(16, 1, 256)),
    deliveryTickMs: env("DELIVERY_TICK_MS", int(1000, 50, 60_000)),
  }),
  /** Scheduled digests (/digest). */
  digests: z.object({
    /** Digests one channel may have. */
    perChat: env("DIGESTS_PER_CHAT", int(5, 1, 100)),
    /** How often the scheduler looks for a slot due. */
    tickMs: env("DIGEST_TICK_MS", int(30_000, 50, 600_000)),
    /** A slot posted more than this after its time is marked late (the bot was down). */
    lateAfterMs: seconds("DIGEST_LATE_AFTER_S", 300, 0, 86_400),
  }),
  /** Watches (/watch): how many a channel may hold, and their share of upstream reads. */
  watches: z.object({
    perChat: env("WATCHES_PER_CHAT", int(10, 1, 1000)),
    /** Upstream reads all watches together may make in a minute (background, never more). */
    checksPerMinute: env("WATCH_CHECKS_PER_MINUTE", int(30, 1, 10_000)),
    tickMs: env("WATCH_TICK_MS", int(30_000, 50, 3_600_000)),
  }),
  /** Gates (/gate): the grace before a member who stops passing loses access, and re-checks. */
  gates: z.object({
    graceHours: env("GATE_GRACE_H", int(24, 0, 24 * 30)),
    /** Members re-checked in a minute at most (each re-check reads the data service). */
    checksPerMinute: env("GATE_CHECKS_PER_MINUTE", int(30, 1, 10_000)),
  }),
  /**
   * Insights (/insights, /dashboard): upstream calls the background reads of members' wallets may
   * make in a minute (3 a wallet), a share that leaves commands their answers.
   */
  insights: z.object({
    callsPerMinute: env("INSIGHTS_CALLS_PER_MINUTE", int(240, 3, 100_000)),
  }),
  /** The one HTTP server (see resolveHttp): its port has two older names, kept as aliases. */
  http: z.object({
    port: env("HTTP_PORT", optionalPort),
    metricsPort: env("METRICS_PORT", optionalPort),
    webhookPort: env("TELEGRAM_WEBHOOK_PORT", optionalPort),
    host: env("HTTP_HOST", optionalString),
    metricsHost: env("METRICS_HOST", optionalString),
    /**
     * Where the world reaches the HTTP host (the reverse proxy's https URL): `npm run register`
     * prints the Discord interactions endpoint from it.
     */
    publicUrl: env("PUBLIC_URL", optionalUrl),
    /** What a client may make the server hold (src/http/limits.ts says why these defaults). */
    limits: z.object({
      headersTimeoutMs: env(
        "HTTP_HEADERS_TIMEOUT_MS",
        int(DEFAULT_HTTP_LIMITS.headersTimeoutMs, 100, 300_000),
      ),
      requestTimeoutMs: env(
        "HTTP_REQUEST_TIMEOUT_MS",
        int(DEFAULT_HTTP_LIMITS.requestTimeoutMs, 100, 600_000),
      ),
      keepAliveTimeoutMs: env(
        "HTTP_KEEP_ALIVE_TIMEOUT_MS",
        int(DEFAULT_HTTP_LIMITS.keepAliveTimeoutMs, 100, 600_000),
      ),
      maxConnections: env(
        "HTTP_MAX_CONNECTIONS",
        int(DEFAULT_HTTP_LIMITS.maxConnections, 1, 1_000_000),
      ),
      // At least one Discord interaction of the largest size read.
      unauthenticatedBodyBytes: env(
        "HTTP_UNAUTHENTICATED_BODY_BYTES",
        int(DEFAULT_HTTP_LIMITS.unauthenticatedBodyBytes, 256 * 1024, 1024 * 1024 * 1024),
      ),
    }),
  }),
  simulator: z.object({
    port: env("SIMULATOR_PORT", int(0, 0, 65_535)),
    apiKey: env("SIMULATOR_API_KEY", z.preprocess(emptyToUndefined, z.string().default("sim-key"))),
    seed: env("SIMULATOR_SEED", int(1, 0, 2 ** 31 - 1)),
    mintIntervalMs: env("SIMULATOR_MINT_INTERVAL_MS", int(5_000, 0, 3_600_000)),
    /** Every Nth timed mint is by a bad actor (BEHAVIOR_BADACTOR); 0: none. */
    badActorEvery: env("SIMULATOR_BADACTOR_EVERY", int(10, 0, 1_000_000)),
  }),
  discord: z.object({
    token: env("DISCORD_TOKEN", discordToken),
    guildId: env("DISCORD_GUILD_ID", discordGuildId),
    apiUrl: env("DISCORD_API_URL", optionalUrl),
    registerOnStart: env("DISCORD_REGISTER_ON_START", bool(false)),
    /**
     * Alert sends started a second, evenly spaced, under Discord's global limit (50 requests a
     * second; interaction answers are exempt and never paced).
     */
    globalPerSecond: env("DISCORD_GLOBAL_PER_SECOND", int(47, 1, 48)),
    /** discord.js's default caches (every guild's channels, roles…): only to measure the limits. */
    fullCaches: env("DISCORD_FULL_CACHES", bool(false)),
    /**
     * The application's public key: set, Discord interactions come over HTTP (POST
     * /discord/interactions on the HTTP host, each verified with it) and no gateway is opened.
     */
    publicKey: env("DISCORD_PUBLIC_KEY", discordPublicKey),
  }),
  telegram: z.object({
    token: env("TELEGRAM_BOT_TOKEN", telegramToken),
    apiRoot: env("TELEGRAM_API_ROOT", optionalUrl),
    webhookUrl: env("TELEGRAM_WEBHOOK_URL", optionalUrl),
    webhookSecret: env("TELEGRAM_WEBHOOK_SECRET", telegramWebhookSecret),
  }),
});

type Settings = z.infer<typeof SettingsSchema>;

/**
 * The settings with what follows from them: the cache's per-answer cap, the Telegram webhook
 * (on only with both its URL and secret), and the one HTTP server's port and address; and the
 * checks between settings (a ConfigError thrown here leaves safeParse as is).
 */
function complete(settings: Settings) {
  const { api, cache, collectionIndexRefreshMs, http, telegram, discord, ...rest } = settings;
  const chains = resolveChains(settings);
  if (api.retryMinDelayMs > api.retryMaxDelayMs) {
    throw new ConfigError(
      "Invalid setting API_RETRY_MIN_DELAY_MS: must not exceed API_RETRY_MAX_DELAY_MS",
    );
  }
  if (settings.lease.renewMs * 2 > settings.lease.ttlMs) {
    throw new ConfigError(
      "Invalid setting LEASE_RENEW_MS: must be at most half of LEASE_TTL_MS (a renewal may fail once without losing the lease)",
    );
  }
  if (cache.maxEntryBytes !== undefined && cache.maxEntryBytes > cache.maxBytes) {
    throw new ConfigError("Invalid setting CACHE_MAX_ENTRY_BYTES: must not exceed CACHE_MAX_BYTES");
  }
  if (collectionIndexRefreshMs > 0 && collectionIndexRefreshMs < 60_000) {
    throw new ConfigError(
      "Invalid settings:\n  - COLLECTION_INDEX_REFRESH_S: must be 0 (only when a name is not found) or at least 60",
    );
  }
  if (telegram.webhookUrl && !telegram.webhookSecret) {
    throw new ConfigError(
      "Invalid setting TELEGRAM_WEBHOOK_SECRET: required when TELEGRAM_WEBHOOK_URL is set",
    );
  }
  if (discord.publicKey && !discord.token) {
    throw new ConfigError(
      "Invalid setting DISCORD_TOKEN: required when DISCORD_PUBLIC_KEY is set (alerts and command registration go through Discord's REST API with it)",
    );
  }
  const simulated = chains.every((chain) => chain.baseUrl === undefined);
  if (settings.dataService === "simulator" && !simulated) {
    throw new ConfigError(
      "Invalid setting DATA_SERVICE: simulator serves made-up data, but API_BASE_URL (or CHAINS) names a data service: unset one of them",
    );
  }
  const webhook =
    telegram.webhookUrl && telegram.webhookSecret
      ? {
          url: telegram.webhookUrl,
          secret: telegram.webhookSecret,
          /** Where the bot's HTTP server takes the updates: the URL's own path. */
          path: new URL(telegram.webhookUrl).pathname,
        }
      : undefined;
  return {
    ...rest,
    chains,
    /**
     * Every chain's data comes from the embedded simulator (no URL set anywhere): every reply and
     * alert then says "simulated data" (SIMULATED_DATA_MARK).
     */
    simulated,
    api,
    collectionIndexRefreshMs,
    cache: { ...cache, maxEntryBytes: cache.maxEntryBytes ?? Math.floor(cache.maxBytes / 16) },
    http: {
      ...resolveHttp(http, webhook !== undefined || discord.publicKey !== undefined),
      publicUrl: http.publicUrl,
      limits: http.limits,
    },
    telegram: { token: telegram.token, apiRoot: telegram.apiRoot, webhook },
    /**
     * With a public key, Discord runs over HTTP interactions and the gateway is not opened, even
     * with DISCORD_TOKEN set (it is needed for REST): while an Interactions Endpoint URL is set in
     * the developer portal, Discord sends interactions only there, never over the gateway.
     */
    discord: { ...discord, mode: discord.publicKey ? ("http" as const) : ("gateway" as const) },
  };
}

const ConfigSchema = SettingsSchema.transform(complete);

/** Every setting, as the code reads it. */
export type Config = z.infer<typeof ConfigSchema>;

/** What the bot's own live heap reaches at its busiest besides the cache (npm run bench -- process). */
const HEAP_BESIDES_CACHE = 128 * 1024 * 1024;

/**
 * Whether the answer cache fits the JavaScript heap Node was given (the bot runs with
 * --max-old-space-size=256, see docs/operations.md): the parsed answers take about twice the bytes
 * counted, and a cache that outgrows the heap would end the process out of memory at its busiest
 * hour. Plain words saying what to run when it does not fit; undefined when it does.
 */
export function heapRoomProblem(cacheMaxBytes: number, heapLimitBytes: number): string | undefined {
  const needed = 2 * cacheMaxBytes + HEAP_BESIDES_CACHE;
  if (needed <= heapLimitBytes) return undefined;
  const mb = (bytes: number) => Math.ceil(bytes / (1024 * 1024));
  return `Invalid setting CACHE_MAX_BYTES: ${mb(cacheMaxBytes)} MiB of answers need a JavaScript heap of ${mb(needed)} MiB, and Node was given ${mb(heapLimitBytes)} MiB: run node with --max-old-space-size=${mb(needed)} (or lower CACHE_MAX_BYTES)`;
}

/**
 * Why the bot must not start with these settings: a chat platform's token with no data service
 * would serve the embedded simulator's made-up holders and sales to real people. Only
 * DATA_SERVICE=simulator says that is meant. One line naming what to set; undefined when the
 * settings are fine (the console chat, with no token, runs on the simulator as it always has).
 */
export function dataServiceRefusal(
  config: Pick<Config, "simulated" | "dataService" | "discord" | "telegram">,
): string | undefined {
  if (!config.simulated || config.dataService === "simulator") return undefined;
  const tokens = [
    ...(config.discord.token !== undefined ? ["DISCORD_TOKEN"] : []),
    ...(config.telegram.token !== undefined ? ["TELEGRAM_BOT_TOKEN"] : []),
  ];
  if (tokens.length === 0) return undefined;
  return `Refusing to serve made-up data to real chats: ${tokens.join(" and ")} ${tokens.length > 1 ? "are" : "is"} set but API_BASE_URL is not. Set API_BASE_URL with API_KEY for the real data service, or DATA_SERVICE=simulator to serve the embedded simulator's made-up data deliberately.`;
}

/**
 * One line per problem, by variable name; the value itself is never quoted (it may be a secret),
 * nor, for a secret, any message that might.
 */
function describeIssue(issue: z.core.$ZodIssue): string {
  const variable = variableAt(SettingsSchema, issue.path) ?? "environment";
  const reason =
    requirement(issue) ?? (SECRET_VARIABLES.has(variable) ? "is not valid" : issue.message);
  return `Invalid setting ${variable}: ${reason}`;
}

export function parseConfig(variables: Record<string, string | undefined>): Config {
  const parsed = ConfigSchema.safeParse(fromVariables(SettingsSchema, variables));
  if (!parsed.success) {
    throw new ConfigError(parsed.error.issues.map(describeIssue).join("\n"));
  }
  return parsed.data;
}

/** Loads `.env` from the working directory when there is one (variables already set win). */
export function loadDotEnv(path = ".env"): void {
  if (existsSync(path)) process.loadEnvFile(path);
}

/** The password in the Redis URL, if any (or a lone user name, which some hosts use as a token). */
function redisSecrets(url: string | undefined): string[] {
  if (url === undefined) return [];
  const { username, password } = new URL(url);
  const secret = password || username;
  return secret ? [secret, decodeURIComponent(secret)] : [];
}

/** The secret values in force, so the logger and error paths can redact them. */
export function secretsOf(config: Config): string[] {
  return [
    config.api.apiKey,
    ...config.chains.map((chain) => chain.apiKey),
    // An RPC provider's URL carries its key (https://…/v2/<key>).
    ...config.chains.map((chain) => chain.rpcUrl),
    config.discord.token,
    config.telegram.token,
    config.telegram.webhook?.secret,
    ...redisSecrets(config.redis.url),
  ].filter((secret): secret is string => typeof secret === "string" && secret.length >= 4);
}
