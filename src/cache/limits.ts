import { randomBytes } from "node:crypto";
import type { PlatformLimit, SharedPace } from "../adapters/pace.ts";
import { type Budget, BudgetExceededError, type BudgetOptions } from "../api/budget.ts";
import type { Admission, KeyedLimiter, Limit, LimiterFactory } from "../core/rate-limit.ts";
import type { RedisLink } from "./redis.ts";

/**
 * Limits counted in Redis, so every instance of the bot spends one shared allowance. Each is one
 * Lua script, so the check and the count are one atomic step whatever the number of instances, on
 * Redis's clock. Two kinds:
 *
 * - token buckets (a person, a chat, the data service's budget: `burst` at once, then a steady
 *   rate) as GCRA: one timestamp per key, the same arithmetic as the in-process buckets;
 * - platform limits ("at most N in any window of T") as a sliding log: the grants of the last
 *   window, so no rolling window ever holds more than N, however the instances' waits line up (a
 *   fixed window lets a second window's worth through the moment it resets).
 *
 * When Redis cannot be asked (the link's breaker is open, or the command fails) the same algorithm
 * runs in this process: the limit then holds per instance, as it did before Redis, and the shared
 * count resumes when Redis answers again.
 */

/** GCRA: 0 when a token was taken, else the ms until one is there. */
const TAKE_TOKEN = `
local clock = redis.call('TIME')
local now = clock[1] * 1000 + clock[2] / 1000
local interval = tonumber(ARGV[1])
local burst = tonumber(ARGV[2])
local tat = math.max(tonumber(redis.call('GET', KEYS[1]) or 0), now)
local wait = tat - (burst - 1) * interval - now
if wait > 0 then return math.ceil(wait) end
tat = tat + interval
redis.call('SET', KEYS[1], tostring(tat), 'PX', math.ceil(tat - now))
return 0`;

/**
 * TAKE_TOKEN for each key in turn (ARGV: an interval and a burst per key), stopping at the first
 * refusal: {0, 0} when every token was taken, else {the refusing key's place (1-based), the ms
 * until it has one}. A later key's token is taken only when the earlier ones were.
 */
const TAKE_TOKENS_IN_TURN = `
local clock = redis.call('TIME')
local now = clock[1] * 1000 + clock[2] / 1000
for i = 1, #KEYS do
  local interval = tonumber(ARGV[2 * i - 1])
  local burst = tonumber(ARGV[2 * i])
  local tat = math.max(tonumber(redis.call('GET', KEYS[i]) or 0), now)
  local wait = tat - (burst - 1) * interval - now
  if wait > 0 then return {i, math.ceil(wait)} end
  tat = tat + interval
  redis.call('SET', KEYS[i], tostring(tat), 'PX', math.ceil(tat - now))
end
return {0, 0}`;

/** Sliding log: 0 when a slot was taken, else the ms until the oldest grant leaves the window. */
const TAKE_SLOT = `
local clock = redis.call('TIME')
local now = clock[1] * 1000 + clock[2] / 1000
local limit = tonumber(ARGV[1])
local window = tonumber(ARGV[2])
redis.call('ZREMRANGEBYSCORE', KEYS[1], '-inf', now - window)
if redis.call('ZCARD', KEYS[1]) < limit then
  redis.call('ZADD', KEYS[1], now, ARGV[3])
  redis.call('PEXPIRE', KEYS[1], math.ceil(window))
  return 0
end
local oldest = tonumber(redis.call('ZRANGE', KEYS[1], 0, 0, 'WITHSCORES')[2])
return math.max(1, math.ceil(oldest + window - now))`;

/**
 * The scripts' keys are named after the algorithm (gcra:, slots:), apart from the fixed-window
 * counters of earlier versions: during a rolling upgrade neither misreads the other's keys.
 */
interface LimitScripts {
  takeToken(key: string, intervalMs: number, burst: number): Promise<number>;
  takeTokensInTurn(
    first: string,
    second: string,
    firstIntervalMs: number,
    firstBurst: number,
    secondIntervalMs: number,
    secondBurst: number,
  ): Promise<[number, number]>;
  takeSlot(key: string, limit: number, windowMs: number, grant: string): Promise<number>;
}

/** The scripts as commands of the link's client (EVALSHA, loaded on first use). */
function scripts(link: RedisLink): LimitScripts {
  link.client.defineCommand("takeToken", { numberOfKeys: 1, lua: TAKE_TOKEN });
  link.client.defineCommand("takeTokensInTurn", { numberOfKeys: 2, lua: TAKE_TOKENS_IN_TURN });
  link.client.defineCommand("takeSlot", { numberOfKeys: 1, lua: TAKE_SLOT });
  return link.client as unknown as LimitScripts;
}

/** Keys not touched for this long hold nothing worth keeping (a full bucket, an empty log). */
const MAX_LOCAL_KEYS = 10_000;

/** TAKE_TOKEN in this process, for when Redis cannot be asked. */
class LocalTokens {
  private readonly due = new Map<string, number>();

  take(key: string, intervalMs: number, burst: number): number {
    const now = performance.now();
    const tat = Math.max(this.due.get(key) ?? 0, now);
    const wait = tat - (burst - 1) * intervalMs - now;
    if (wait > 0) return Math.ceil(wait);
    this.due.set(key, tat + intervalMs);
    if (this.due.size > MAX_LOCAL_KEYS)
      for (const [other, until] of this.due) if (until <= now) this.due.delete(other);
    return 0;
  }
}

/** TAKE_SLOT in this process, for when Redis cannot be asked. */
class LocalSlots {
  private readonly grants = new Map<string, number[]>();

  take(key: string, limit: number, windowMs: number): number {
    const now = performance.now();
    const log = (this.grants.get(key) ?? []).filter((at) => at > now - windowMs);
    this.grants.set(key, log);
    if (log.length < limit) {
      log.push(now);
      if (this.grants.size > MAX_LOCAL_KEYS)
        for (const [other, times] of this.grants)
          if ((times.at(-1) ?? 0) <= now - windowMs) this.grants.delete(other);
      return 0;
    }
    return Math.max(1, Math.ceil((log[0] ?? now) + windowMs - now));
  }
}

/**
 * Redis's answer, or this process's when Redis cannot be asked. The link has counted the failure
 * towards its breaker and logs the outage; a limit never blocks a command on Redis.
 */
async function sharedOrLocal(
  link: RedisLink,
  shared: () => Promise<number>,
  local: () => number,
): Promise<number> {
  try {
    return await link.run(shared);
  } catch {
    return local();
  }
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

/**
 * A person's or a chat's limit shared across instances. Whether a refusal repeats one already
 * given (and is answered quietly) is remembered per instance: at worst a person hears "slow down"
 * once from each instance.
 */
export class SharedRateLimiter implements KeyedLimiter {
  private readonly scripts: LimitScripts;
  private readonly local = new LocalTokens();
  private readonly intervalMs: number;
  /** Keys refused, with when their wait ends (monotonic ms). */
  private readonly refused = new Map<string, number>();

  constructor(
    private readonly link: RedisLink,
    private readonly scope: string,
    private readonly limit: Limit,
  ) {
    this.scripts = scripts(link);
    this.intervalMs = 60_000 / limit.perMinute;
  }

  async take(key: string): Promise<Admission> {
    const { burst } = this.limit;
    const waitMs = await sharedOrLocal(
      this.link,
      () => this.scripts.takeToken(this.redisKey(key), this.intervalMs, burst),
      () => this.local.take(key, this.intervalMs, burst),
    );
    return this.verdict(key, waitMs);
  }

  /** With another limit on the same link: both in one round trip (see KeyedLimiter.takeThen). */
  takeThen(
    key: string,
    next: KeyedLimiter,
    nextKey: string,
  ): Promise<[Admission, Admission | undefined]> | undefined {
    if (!(next instanceof SharedRateLimiter) || next.link !== this.link) return undefined;
    return this.takeBoth(key, next, nextKey);
  }

  private async takeBoth(
    key: string,
    next: SharedRateLimiter,
    nextKey: string,
  ): Promise<[Admission, Admission | undefined]> {
    let refusedBy: number;
    let waitMs: number;
    try {
      [refusedBy, waitMs] = await this.link.run(() =>
        this.scripts.takeTokensInTurn(
          this.redisKey(key),
          next.redisKey(nextKey),
          this.intervalMs,
          this.limit.burst,
          next.intervalMs,
          next.limit.burst,
        ),
      );
    } catch {
      // Redis cannot be asked: each limit in this process, as take() does.
      const mine = this.local.take(key, this.intervalMs, this.limit.burst);
      if (mine > 0) return [this.verdict(key, mine), undefined];
      return [
        this.verdict(key, 0),
        next.verdict(nextKey, next.local.take(nextKey, next.intervalMs, next.limit.burst)),
      ];
    }
    if (refusedBy === 1) return [this.verdict(key, waitMs), undefined];
    return [this.verdict(key, 0), next.verdict(nextKey, refusedBy === 2 ? waitMs : 0)];
  }

  private redisKey(key: string): string {
    return `${this.link.prefix}gcra:${this.scope}:${key}`;
  }

  /** A wait from the limit as an Admission, remembering refusals to answer repeats quietly. */
  private verdict(key: string, waitMs: number): Admission {
    const now = performance.now();
    if (waitMs === 0) {
      this.refused.delete(key);
      return { allowed: true };
    }
    const repeated = (this.refused.get(key) ?? 0) > now;
    this.refused.set(key, now + waitMs);
    if (this.refused.size > MAX_LOCAL_KEYS)
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
 * `burst` at once. A request finding it spent waits for a token while that is within `maxWaitMs`,
 * else is refused (busy, try again); background work (the alert poller) waits as long as it takes.
 */
export class SharedBudget implements Budget {
  private readonly scripts: LimitScripts;
  private readonly local = new LocalTokens();
  private readonly intervalMs: number;

  constructor(
    private readonly link: RedisLink,
    private readonly options: Omit<BudgetOptions, "now">,
  ) {
    this.scripts = scripts(link);
    this.intervalMs = 1000 / options.perSecond;
  }

  async take(
    options: { background?: boolean | undefined; signal?: AbortSignal | undefined } = {},
  ): Promise<void> {
    const { signal } = options;
    const { burst } = this.options;
    const started = performance.now();
    for (;;) {
      if (signal?.aborted) throw signal.reason;
      const waitMs = await sharedOrLocal(
        this.link,
        () => this.scripts.takeToken(`${this.link.prefix}gcra:upstream`, this.intervalMs, burst),
        () => this.local.take("upstream", this.intervalMs, burst),
      );
      if (waitMs === 0) return;
      const waited = performance.now() - started;
      if (!options.background && waited + waitMs > this.options.maxWaitMs)
        throw new BudgetExceededError(waitMs);
      // A little spread, so the instances waiting do not all ask again at the same instant.
      await sleep(waitMs + Math.random() * 20, signal);
    }
  }
}

/** At most `limit` sends in any window of `windowMs`, as the platform counts them. */
export interface PlatformWindow {
  limit: number;
  windowMs: number;
  /**
   * A send starts a little after its grant and reaches the platform later still, by how much
   * depending on load: the window is counted this much longer than the platform's (default
   * 100 ms), so the platform, counting by arrival, still finds no more than the limit in any of its
   * windows.
   */
  marginMs?: number;
}

const DEFAULT_MARGIN_MS = 100;

/** The per-bot limits the platforms set: one name per limit. */
export const PLATFORM_LIMITS: Record<PlatformLimit, PlatformWindow> = {
  /** Discord: 50 requests a second per bot (alert sends; interaction answers are exempt). */
  "discord:global": { limit: 47, windowMs: 1000 },
  /** Telegram: about 30 messages a second per bot. */
  "telegram:global": { limit: 30, windowMs: 1000 },
  /**
   * Telegram: one message a second per chat. A loaded instance can take a few hundred ms between
   * the grant and Telegram's arrival (seen once: 955 ms apart at Telegram's end).
   */
  "telegram:chat": { limit: 1, windowMs: 1000, marginMs: 250 },
  /** Telegram: 20 messages a minute per group. */
  "telegram:group": { limit: 20, windowMs: 60_000, marginMs: 1000 },
};

/**
 * The platforms' per-bot limits counted over every instance: `acquire` resolves when a send under
 * that limit (and key: the group, for a per-group limit) may start. Each instance still paces its
 * own sends evenly (SteadyPace, the Telegram throttler); this keeps their sum under the limit in
 * any rolling window.
 */
export class SharedPacing implements SharedPace {
  private readonly scripts: LimitScripts;
  private readonly local = new LocalSlots();
  private readonly limits: Record<PlatformLimit, PlatformWindow>;
  /** Names this instance's grants in the sliding logs (a sorted set needs distinct members). */
  private readonly instance = randomBytes(6).toString("base64url");
  private grants = 0;

  constructor(
    private readonly link: RedisLink,
    overrides: Partial<Record<PlatformLimit, PlatformWindow>> = {},
  ) {
    this.scripts = scripts(link);
    this.limits = { ...PLATFORM_LIMITS, ...overrides };
  }

  async acquire(name: PlatformLimit, key = "bot", signal?: AbortSignal): Promise<void> {
    const { limit, windowMs: platformMs, marginMs = DEFAULT_MARGIN_MS } = this.limits[name];
    const windowMs = platformMs + marginMs;
    const redisKey = `${this.link.prefix}slots:${name}:${key}`;
    for (;;) {
      const waitMs = await sharedOrLocal(
        this.link,
        () => this.scripts.takeSlot(redisKey, limit, windowMs, `${this.instance}:${++this.grants}`),
        () => this.local.take(`${name}:${key}`, limit, windowMs),
      );
      if (waitMs === 0) return;
      // A little spread, so the instances waiting do not all ask again at the same instant.
      await sleep(waitMs + Math.random() * 10, signal);
    }
  }
}
