import { existsSync } from "node:fs";
import { z } from "zod";

/**
 * Every setting of the bot, read from the environment once at start-up. `.env.example` documents
 * each variable; README.md has the same table. Values of secrets never appear in an error.
 */

const SECRET_VARIABLES = new Set([
  "API_KEY",
  "DISCORD_TOKEN",
  "TELEGRAM_BOT_TOKEN",
  "TELEGRAM_WEBHOOK_SECRET",
  "SIMULATOR_API_KEY",
]);

const emptyToUndefined = (value: unknown) => (value === "" ? undefined : value);
const optionalString = z.preprocess(emptyToUndefined, z.string().optional());
const optionalUrl = z.preprocess(
  emptyToUndefined,
  z
    .url({ protocol: /^https?$/ })
    .transform((url) => url.replace(/\/+$/, ""))
    .optional(),
);
const int = (fallback: number, min: number, max: number) =>
  z.preprocess(emptyToUndefined, z.coerce.number().int().min(min).max(max).default(fallback));
const bool = (fallback: boolean) =>
  z.preprocess(
    emptyToUndefined,
    z
      .enum(["true", "false", "1", "0", "yes", "no"])
      .default(fallback ? "true" : "false")
      .transform((value) => value === "true" || value === "1" || value === "yes"),
  );

const EnvSchema = z.object({
  API_BASE_URL: optionalUrl,
  API_KEY: optionalString,
  API_TIMEOUT_MS: int(10_000, 100, 120_000),
  API_RETRIES: int(3, 0, 10),
  API_RETRY_MIN_DELAY_MS: int(250, 0, 60_000),
  API_RETRY_MAX_DELAY_MS: int(5_000, 0, 300_000),
  API_RETRY_MAX_TOTAL_MS: int(20_000, 0, 600_000),
  API_MAX_BODY_BYTES: int(8 * 1024 * 1024, 1024, 1024 * 1024 * 1024),
  API_BUDGET_PER_SECOND: int(20, 1, 100_000),
  API_BUDGET_BURST: int(40, 1, 100_000),
  API_BUDGET_MAX_WAIT_MS: int(2_000, 0, 60_000),
  API_REPORT_NOT_SPAM_PATH: z.preprocess(
    emptyToUndefined,
    z
      .string()
      .refine(
        (path) => path.startsWith("/") && path.includes("{wallet}") && path.includes("{contract}"),
        {
          message: "must start with / and contain {wallet} and {contract}",
        },
      )
      .default("/wallets/v1beta2/{wallet}/report_not_spam/{contract}"),
  ),
  CACHE_MAX_KEYS: int(10_000, 1, 1_000_000),
  // 8 MiB: the parsed answers take about twice that on the heap, and the whole process, both
  // platforms connected, stays within 150 MB (npm run bench measures it).
  CACHE_MAX_BYTES: int(8 * 1024 * 1024, 1024, 2 * 1024 * 1024 * 1024),
  CACHE_MAX_ENTRY_BYTES: z.preprocess(
    emptyToUndefined,
    z.coerce
      .number()
      .int()
      .min(1)
      .max(2 * 1024 * 1024 * 1024)
      .optional(),
  ),
  CACHE_TTL_BEHAVIORS_S: int(6 * 3600, 0, 7 * 86400),
  CACHE_TTL_AUDIENCE_S: int(3600, 0, 7 * 86400),
  CACHE_TTL_CONTRACTS_S: int(30, 0, 3600),
  CACHE_TTL_TOP_S: int(900, 0, 86400),
  CACHE_TTL_OWNERSHIP_S: int(300, 0, 86400),
  CACHE_TTL_NFT_S: int(300, 0, 86400),
  CACHE_TTL_ENS_S: int(600, 0, 86400),
  DATA_DIR: z.preprocess(emptyToUndefined, z.string().default("./data")),
  LOG_LEVEL: z.preprocess(
    emptyToUndefined,
    z.enum(["fatal", "error", "warn", "info", "debug", "trace", "silent"]).default("info"),
  ),
  COMMAND_DEADLINE_MS: int(20_000, 1_000, 600_000),
  STARTUP_CONNECT_TIMEOUT_S: int(60, 1, 3600),
  RATE_LIMIT_BURST: int(8, 1, 1000),
  RATE_LIMIT_PER_MINUTE: int(10, 1, 100_000),
  RATE_LIMIT_CHAT_BURST: int(20, 1, 1000),
  RATE_LIMIT_CHAT_PER_MINUTE: int(20, 1, 100_000),
  BUTTON_TTL_S: int(7 * 86400, 60, 365 * 86400),
  BUTTON_MAX_PER_USER: int(500, 25, 1_000_000),
  REPORTS_PER_HOUR: int(10, 1, 10_000),
  IPFS_GATEWAY: z.preprocess(
    emptyToUndefined,
    z
      .url({ protocol: /^https?$/ })
      .transform((url) => (url.endsWith("/") ? url : `${url}/`))
      .default("https://ipfs.io/ipfs/"),
  ),
  EXPLORER_URL: z.preprocess(
    emptyToUndefined,
    z
      .url({ protocol: /^https?$/ })
      .transform((url) => url.replace(/\/+$/, ""))
      .default("https://etherscan.io"),
  ),
  COLLECTION_INDEX_REFRESH_S: int(900, 0, 86_400),
  POLL_INTERVAL_S: int(30, 1, 3600),
  POLL_OVERLAP_S: int(600, 0, 86_400),
  POLL_LIMIT: int(100, 1, 500),
  POLL_MAX_PAGES: int(10, 1, 100),
  POLL_MAX_CLOCK_SKEW_S: int(300, 0, 86_400),
  ALERT_DIGEST_THRESHOLD: int(5, 2, 1000),
  ALERT_MAX_ATTEMPTS: int(10, 1, 1000),
  DELIVERY_CONCURRENCY: int(16, 1, 256),
  DELIVERY_TICK_MS: int(1000, 50, 60_000),
  METRICS_PORT: int(0, 0, 65_535),
  METRICS_HOST: z.preprocess(emptyToUndefined, z.string().min(1).default("127.0.0.1")),
  SIMULATOR_PORT: int(0, 0, 65_535),
  SIMULATOR_API_KEY: z.preprocess(emptyToUndefined, z.string().default("sim-key")),
  SIMULATOR_SEED: int(1, 0, 2 ** 31 - 1),
  SIMULATOR_MINT_INTERVAL_MS: int(5_000, 0, 3_600_000),
  DISCORD_TOKEN: optionalString,
  DISCORD_GUILD_ID: z.preprocess(
    emptyToUndefined,
    z
      .string()
      .regex(/^\d{15,25}$/, "must be a Discord server id (15 to 25 digits)")
      .optional(),
  ),
  DISCORD_API_URL: optionalUrl,
  DISCORD_REGISTER_ON_START: bool(false),
  DISCORD_GLOBAL_PER_SECOND: int(47, 1, 48),
  TELEGRAM_BOT_TOKEN: optionalString,
  TELEGRAM_API_ROOT: optionalUrl,
  TELEGRAM_WEBHOOK_URL: optionalUrl,
  TELEGRAM_WEBHOOK_SECRET: z.preprocess(
    emptyToUndefined,
    z
      .string()
      .regex(/^[A-Za-z0-9_-]{1,256}$/, "must be 1 to 256 characters of A-Z, a-z, 0-9, _ and -")
      .optional(),
  ),
  TELEGRAM_WEBHOOK_PORT: int(8443, 1, 65_535),
});

export type Env = z.infer<typeof EnvSchema>;

export interface Config {
  api: {
    /** Undefined: the bot starts the embedded simulator and uses it. */
    baseUrl: string | undefined;
    apiKey: string | undefined;
    timeoutMs: number;
    retries: number;
    retryMinDelayMs: number;
    retryMaxDelayMs: number;
    retryMaxTotalMs: number;
    reportNotSpamPath: string;
    /** Largest response body read, per response. */
    maxBodyBytes: number;
    /** One token bucket for every request to the data service (retries included). */
    budget: { perSecond: number; burst: number; maxWaitMs: number };
  };
  cache: {
    maxKeys: number;
    /** Bound of the cache, counted in bytes of the answers as received (JSON text). */
    maxBytes: number;
    /** Larger answers are not cached. */
    maxEntryBytes: number;
    ttlSeconds: {
      behaviors: number;
      audience: number;
      contracts: number;
      top: number;
      ownership: number;
      nft: number;
      ens: number;
    };
  };
  dataDir: string;
  logLevel: Env["LOG_LEVEL"];
  commandDeadlineMs: number;
  /** A chat platform not connected this long after start is a start-up failure. */
  connectTimeoutMs: number;
  rateLimit: { burst: number; perMinute: number };
  /** Per Telegram group: the bot may send a group about 20 messages a minute. */
  chatRateLimit: { burst: number; perMinute: number };
  buttonTtlSeconds: number;
  /** Stored button actions per person; past it their oldest stop working. */
  buttonMaxPerUser: number;
  reportsPerHour: number;
  ipfsGateway: string;
  explorerUrl: string;
  /**
   * How often the collection index (names people may type) is refreshed from the top lists and
   * the newest contracts, from start on; 0: never in the background, only when a name misses it.
   */
  collectionIndexRefreshMs: number;
  alerts: {
    pollIntervalMs: number;
    overlapMs: number;
    pollLimit: number;
    maxPages: number;
    /** A mint dated further past our clock is posted but does not move the poll cursor. */
    maxClockSkewMs: number;
    digestThreshold: number;
    /** Failed tries before an alert is dropped (rate limits do not count). */
    maxAttempts: number;
    deliveryConcurrency: number;
    deliveryTickMs: number;
  };
  /** 0: no health/metrics server. */
  ops: { port: number; host: string };
  simulator: { port: number; apiKey: string; seed: number; mintIntervalMs: number };
  discord: {
    token: string | undefined;
    guildId: string | undefined;
    apiUrl: string | undefined;
    registerOnStart: boolean;
    /**
     * Alert sends started a second, evenly spaced, under Discord's global limit (50 requests a
     * second; interaction answers are exempt and never paced).
     */
    globalPerSecond: number;
  };
  telegram: {
    token: string | undefined;
    apiRoot: string | undefined;
    webhookUrl: string | undefined;
    webhookSecret: string | undefined;
    webhookPort: number;
  };
}

export class ConfigError extends Error {
  override name = "ConfigError";
}

/**
 * What a setting must be, in words, for the problems people make (a word where a number goes, a
 * value out of range, a URL without http). Undefined for the rest.
 */
function requirement(issue: z.core.$ZodIssue): string | undefined {
  switch (issue.code) {
    case "invalid_type":
      return issue.expected === "number" || issue.expected === "int"
        ? "must be a whole number"
        : undefined;
    case "too_small":
      return `must be at least ${issue.minimum}`;
    case "too_big":
      return `must be at most ${issue.maximum}`;
    case "invalid_value":
      return `must be one of ${issue.values.join(", ")}`;
    case "invalid_format":
      // Every other format check in the schema (a pattern) carries its own message.
      return issue.format === "url" ? "must be an http(s) URL" : issue.message;
    case "custom":
      return issue.message;
    default:
      return undefined;
  }
}

/**
 * One line per problem, by variable name; the value itself is never quoted (it may be a secret),
 * nor, for a secret, any message that might.
 */
function describeIssue(issue: z.core.$ZodIssue): string {
  const variable = String(issue.path[0] ?? "environment");
  const reason =
    requirement(issue) ?? (SECRET_VARIABLES.has(variable) ? "is not valid" : issue.message);
  return `Invalid setting ${variable}: ${reason}`;
}

export function parseConfig(env: Record<string, string | undefined>): Config {
  const parsed = EnvSchema.safeParse(env);
  if (!parsed.success) {
    throw new ConfigError(parsed.error.issues.map(describeIssue).join("\n"));
  }
  const e = parsed.data;
  if (e.API_RETRY_MIN_DELAY_MS > e.API_RETRY_MAX_DELAY_MS) {
    throw new ConfigError(
      "Invalid setting API_RETRY_MIN_DELAY_MS: must not exceed API_RETRY_MAX_DELAY_MS",
    );
  }
  const maxEntryBytes = e.CACHE_MAX_ENTRY_BYTES ?? Math.floor(e.CACHE_MAX_BYTES / 16);
  if (maxEntryBytes > e.CACHE_MAX_BYTES) {
    throw new ConfigError("Invalid setting CACHE_MAX_ENTRY_BYTES: must not exceed CACHE_MAX_BYTES");
  }
  if (e.COLLECTION_INDEX_REFRESH_S > 0 && e.COLLECTION_INDEX_REFRESH_S < 60) {
    throw new ConfigError(
      "Invalid settings:\n  - COLLECTION_INDEX_REFRESH_S: must be 0 (only when a name is not found) or at least 60",
    );
  }
  if (e.TELEGRAM_WEBHOOK_URL && !e.TELEGRAM_WEBHOOK_SECRET) {
    throw new ConfigError(
      "Invalid setting TELEGRAM_WEBHOOK_SECRET: required when TELEGRAM_WEBHOOK_URL is set",
    );
  }
  return {
    api: {
      baseUrl: e.API_BASE_URL,
      apiKey: e.API_KEY,
      timeoutMs: e.API_TIMEOUT_MS,
      retries: e.API_RETRIES,
      retryMinDelayMs: e.API_RETRY_MIN_DELAY_MS,
      retryMaxDelayMs: e.API_RETRY_MAX_DELAY_MS,
      retryMaxTotalMs: e.API_RETRY_MAX_TOTAL_MS,
      reportNotSpamPath: e.API_REPORT_NOT_SPAM_PATH,
      maxBodyBytes: e.API_MAX_BODY_BYTES,
      budget: {
        perSecond: e.API_BUDGET_PER_SECOND,
        burst: e.API_BUDGET_BURST,
        maxWaitMs: e.API_BUDGET_MAX_WAIT_MS,
      },
    },
    cache: {
      maxKeys: e.CACHE_MAX_KEYS,
      maxBytes: e.CACHE_MAX_BYTES,
      maxEntryBytes,
      ttlSeconds: {
        behaviors: e.CACHE_TTL_BEHAVIORS_S,
        audience: e.CACHE_TTL_AUDIENCE_S,
        contracts: e.CACHE_TTL_CONTRACTS_S,
        top: e.CACHE_TTL_TOP_S,
        ownership: e.CACHE_TTL_OWNERSHIP_S,
        nft: e.CACHE_TTL_NFT_S,
        ens: e.CACHE_TTL_ENS_S,
      },
    },
    dataDir: e.DATA_DIR,
    logLevel: e.LOG_LEVEL,
    commandDeadlineMs: e.COMMAND_DEADLINE_MS,
    connectTimeoutMs: e.STARTUP_CONNECT_TIMEOUT_S * 1000,
    rateLimit: { burst: e.RATE_LIMIT_BURST, perMinute: e.RATE_LIMIT_PER_MINUTE },
    chatRateLimit: { burst: e.RATE_LIMIT_CHAT_BURST, perMinute: e.RATE_LIMIT_CHAT_PER_MINUTE },
    buttonTtlSeconds: e.BUTTON_TTL_S,
    buttonMaxPerUser: e.BUTTON_MAX_PER_USER,
    reportsPerHour: e.REPORTS_PER_HOUR,
    ipfsGateway: e.IPFS_GATEWAY,
    explorerUrl: e.EXPLORER_URL,
    collectionIndexRefreshMs: e.COLLECTION_INDEX_REFRESH_S * 1000,
    alerts: {
      pollIntervalMs: e.POLL_INTERVAL_S * 1000,
      overlapMs: e.POLL_OVERLAP_S * 1000,
      pollLimit: e.POLL_LIMIT,
      maxPages: e.POLL_MAX_PAGES,
      maxClockSkewMs: e.POLL_MAX_CLOCK_SKEW_S * 1000,
      digestThreshold: e.ALERT_DIGEST_THRESHOLD,
      maxAttempts: e.ALERT_MAX_ATTEMPTS,
      deliveryConcurrency: e.DELIVERY_CONCURRENCY,
      deliveryTickMs: e.DELIVERY_TICK_MS,
    },
    ops: { port: e.METRICS_PORT, host: e.METRICS_HOST },
    simulator: {
      port: e.SIMULATOR_PORT,
      apiKey: e.SIMULATOR_API_KEY,
      seed: e.SIMULATOR_SEED,
      mintIntervalMs: e.SIMULATOR_MINT_INTERVAL_MS,
    },
    discord: {
      token: e.DISCORD_TOKEN,
      guildId: e.DISCORD_GUILD_ID,
      apiUrl: e.DISCORD_API_URL,
      registerOnStart: e.DISCORD_REGISTER_ON_START,
      globalPerSecond: e.DISCORD_GLOBAL_PER_SECOND,
    },
    telegram: {
      token: e.TELEGRAM_BOT_TOKEN,
      apiRoot: e.TELEGRAM_API_ROOT,
      webhookUrl: e.TELEGRAM_WEBHOOK_URL,
      webhookSecret: e.TELEGRAM_WEBHOOK_SECRET,
      webhookPort: e.TELEGRAM_WEBHOOK_PORT,
    },
  };
}

/** Loads `.env` from the working directory when there is one (variables already set win). */
export function loadDotEnv(path = ".env"): void {
  if (existsSync(path)) process.loadEnvFile(path);
}

/** The secret values in force, so the logger and error paths can redact them. */
export function secretsOf(config: Config): string[] {
  return [
    config.api.apiKey,
    config.discord.token,
    config.telegram.token,
    config.telegram.webhookSecret,
  ].filter((secret): secret is string => typeof secret === "string" && secret.length >= 4);
}
