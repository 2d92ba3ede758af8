import type { BudgetOptions } from "../api/budget.ts";
import type { Logger } from "../log.ts";
import { SharedAnswerCache } from "./answer-cache.ts";
import { PLATFORM_LIMITS, SharedBudget, SharedPacing, sharedLimiters } from "./limits.ts";
import { RedisLink } from "./redis.ts";

export { redactRedisUrl } from "./redis.ts";

/** What the shared parts are built from: plain values, so src/cache knows nothing of Config. */
export interface SharedSettings {
  url: string;
  keyPrefix: string;
  /** A command not answered this soon fails and counts towards opening the breaker. */
  commandTimeoutMs: number;
  /** How long the breaker keeps Redis out once open, before one probe decides. */
  coolingMs: number;
  /** The in-process layer over Redis. */
  local: { ttlSeconds: number; maxBytes: number };
  /** The answer cache's own bounds: its per-answer cap also bounds what goes to Redis. */
  cache: { maxKeys: number; maxEntryBytes: number };
  budget: Omit<BudgetOptions, "now">;
  discordPerSecond: number;
}

/**
 * How long an instance waits on another's load of the same answer before loading it itself (and
 * how long a load's lock lives): well within a command's deadline, past a slow answer.
 */
const SINGLE_FLIGHT_WAIT_MS = 5_000;

/** Everything the bot shares with its other instances over one Redis connection. */
export function openShared(settings: SharedSettings, logger: Logger) {
  const link = new RedisLink({
    url: settings.url,
    prefix: settings.keyPrefix,
    logger,
    commandTimeoutMs: settings.commandTimeoutMs,
    coolingMs: settings.coolingMs,
  });
  const { local } = settings;
  return {
    link,
    cache: new SharedAnswerCache(link, {
      local: {
        ttlSeconds: local.ttlSeconds,
        maxBytes: local.maxBytes,
        maxKeys: settings.cache.maxKeys,
        maxEntryBytes: Math.min(settings.cache.maxEntryBytes, local.maxBytes),
      },
      maxEntryBytes: settings.cache.maxEntryBytes,
      waitMs: SINGLE_FLIGHT_WAIT_MS,
    }),
    budget: new SharedBudget(link, settings.budget),
    limiters: sharedLimiters(link),
    pace: new SharedPacing(link, {
      "discord:global": { ...PLATFORM_LIMITS["discord:global"], limit: settings.discordPerSecond },
    }),
  };
}

export type Shared = ReturnType<typeof openShared>;
