import { RateLimiterMemory, RateLimiterRedis, RateLimiterRes } from "rate-limiter-flexible";
import type { PlatformLimit, SharedPace } from "../adapters/pace.ts";
import { type Budget, BudgetExceededError, type BudgetOptions } from "../api/budget.ts";
import type { Admission, KeyedLimiter, Limit, LimiterFactory } from "../core/rate-limit.ts";
import type { RedisLink } from "./redis.ts";

/**
 * Limits counted in Redis, so every instance of the bot spends one shared allowance, on
 * rate-limiter-flexible's Redis counters (fixed windows, atomic in Redis). Each has an in-memory
 * insurance limiter with the same numbers: while Redis is unreachable an instance counts alone
 * (the limit then holds per instance, as it did before Redis), and goes back to the shared count
 * once Redis answers again.
 *
 * Our token buckets (`burst` at once, `perMinute` after) become a window of `burst` points lasting
 * the time the bucket takes to refill (rounded to whole seconds, Redis's unit): the same burst and
 * the same long-run rate. A window's edge can let up to two windows' worth through close
 * together, once; the burst is still bounded, unlike a limit per instance.
 */

/** A window of whole seconds with the limit's burst and rate. */
export function windowOf(limit: Limit): { points: number; duration: number } {
  const duration = Math.max(1, Math.round((limit.burst * 60) / limit.perMinute));
  const points = Math.max(limit.burst, Math.round((limit.perMinute * duration) / 60));
  return { points, duration };
}

function limiter(
  redis: RedisLink,
  name: string,
  window: { points: number; duration: number },
): RateLimiterRedis {
  return new RateLimiterRedis({
    storeClient: redis.client,
    keyPrefix: `${redis.prefix}limit:${name}`,
    ...window,
    // Not ready (reconnecting): go to the insurance at once instead of waiting on a timeout.
    rejectIfRedisNotReady: true,
    insuranceLimiter: new RateLimiterMemory({ keyPrefix: `local:${name}`, ...window }),
  });
}

const sleep = (ms: number, signal?: AbortSignal) =>
  new Promise<void>((resolve, reject) => {
    if (signal?.aborted) return reject(signal.reason);
    const onAbort = () => {
      clearTimeout(timer);
      reject(signal?.reason);
    };
    const timer = setTimeout(() => {
      signal?.removeEventListener("abort", onAbort);
      resolve();
    }, ms);
    signal?.addEventListener("abort", onAbort, { once: true });
  });

/** Consumes a point, or says how long until the window has one again. */
async function consume(limit: RateLimiterRedis, key: string): Promise<number> {
  try {
    await limit.consume(key);
    return 0;
  } catch (refused) {
    if (refused instanceof RateLimiterRes) return Math.max(1, refused.msBeforeNext);
    // Only when the insurance itself failed (it cannot): never block a command on the limiter.
    return 0;
  }
}

/**
 * A person's or a chat's limit shared across instances. Whether a refusal repeats one already
 * given (and is answered quietly) is remembered per instance: at worst a person hears "slow down"
 * once from each instance.
 */
export class SharedRateLimiter implements KeyedLimiter {
  private readonly limit: RateLimiterRedis;
  /** Keys refused, with when their wait ends (monotonic ms). */
  private readonly refused = new Map<string, number>();

  constructor(redis: RedisLink, scope: string, limit: Limit) {
    this.limit = limiter(redis, scope, windowOf(limit));
  }

  async take(key: string): Promise<Admission> {
    const waitMs = await consume(this.limit, key);
    const now = performance.now();
    if (waitMs === 0) {
      this.refused.delete(key);
      return { allowed: true };
    }
    const repeated = (this.refused.get(key) ?? 0) > now;
    this.refused.set(key, now + waitMs);
    if (this.refused.size > 10_000)
      for (const [other, until] of this.refused) if (until <= now) this.refused.delete(other);
    return { allowed: false, waitMs, repeated };
  }
}

/** The runtime's limiters (per person, per chat), shared over Redis. */
export function sharedLimiters(redis: RedisLink): LimiterFactory {
  return (scope, limit) => new SharedRateLimiter(redis, scope, limit);
}

/**
 * The budget of requests to the data service, shared by every instance: `perSecond` on average,
 * `burst` at once (a window of `burst / perSecond` seconds, at least one). A request finding it
 * spent waits for the next window while that is within `maxWaitMs`, else is refused (busy, try
 * again); background work (the alert poller) waits as long as it takes.
 */
export class SharedBudget implements Budget {
  private readonly limit: RateLimiterRedis;

  constructor(
    redis: RedisLink,
    private readonly options: Omit<BudgetOptions, "now">,
  ) {
    const duration = Math.max(1, Math.round(options.burst / options.perSecond));
    this.limit = limiter(redis, "upstream", {
      points: Math.max(options.burst, Math.round(options.perSecond * duration)),
      duration,
    });
  }

  async take(
    options: { background?: boolean | undefined; signal?: AbortSignal | undefined } = {},
  ): Promise<void> {
    const { signal } = options;
    const started = performance.now();
    for (;;) {
      if (signal?.aborted) throw signal.reason;
      const waitMs = await consume(this.limit, "all");
      if (waitMs === 0) return;
      const waited = performance.now() - started;
      if (!options.background && waited + waitMs > this.options.maxWaitMs)
        throw new BudgetExceededError(waitMs);
      // A little spread, so the instances waiting do not all ask again at the same instant.
      await sleep(waitMs + Math.random() * 20, signal);
    }
  }
}

/** The per-bot limits the platforms set, as windows: one name per limit. */
export const PLATFORM_LIMITS: Record<PlatformLimit, { points: number; duration: number }> = {
  /** Discord: 50 requests a second per bot (alert sends; interaction answers are exempt). */
  "discord:global": { points: 47, duration: 1 },
  /** Telegram: about 30 messages a second per bot. */
  "telegram:global": { points: 30, duration: 1 },
  /**
   * Telegram: one message a second per chat. A window of one point starts at the send it counts,
   * so the next send to the chat, from any instance, comes a second after it.
   */
  "telegram:chat": { points: 1, duration: 1 },
  /** Telegram: 20 messages a minute per group. */
  "telegram:group": { points: 20, duration: 60 },
};

/**
 * The platforms' per-bot limits counted over every instance: `acquire` resolves when a send under
 * that limit (and key: the group, for a per-group limit) may start. Each instance still paces its
 * own sends evenly (SteadyPace, the Telegram throttler); this keeps their sum under the limit.
 */
export class SharedPacing implements SharedPace {
  private readonly limits = new Map<string, RateLimiterRedis>();

  constructor(
    redis: RedisLink,
    overrides: Partial<Record<PlatformLimit, { points: number; duration: number }>> = {},
  ) {
    for (const [name, window] of Object.entries({ ...PLATFORM_LIMITS, ...overrides }))
      this.limits.set(name, limiter(redis, `pace:${name}`, window));
  }

  async acquire(name: PlatformLimit, key = "bot", signal?: AbortSignal): Promise<void> {
    const limit = this.limits.get(name);
    if (!limit) throw new Error(`no platform limit named ${name}`);
    for (;;) {
      const waitMs = await consume(limit, key);
      if (waitMs === 0) return;
      await sleep(waitMs + (WAIT_MARGIN_MS[name] ?? 0) + Math.random() * 10, signal);
    }
  }
}

/**
 * Extra wait after a refusal, for limits whose window is one send: the window starts when a send
 * is counted, not when Telegram receives it, and a loaded instance can take a few hundred ms in
 * between, so the next send waits that much longer (seen once: 955 ms apart at Telegram's end).
 */
const WAIT_MARGIN_MS: Partial<Record<PlatformLimit, number>> = { "telegram:chat": 250 };
