/** The limiter's verdict: go ahead, or wait; `repeated` when this overrun was already refused. */
export type Admission =
  | { allowed: true }
  | {
      allowed: false;
      waitMs: number;
      /** Refused before since the bucket last let a command through: no need to say it again. */
      repeated: boolean;
    };

/**
 * A limit per key: this process's token buckets (RateLimiter below), or counts shared by every
 * instance over Redis (src/cache/limits.ts).
 */
export interface KeyedLimiter {
  take(key: string): Admission | Promise<Admission>;
  /**
   * Takes a token for `key` and, only when that is allowed, one from `next` for `nextKey`, in one
   * step where the two can (limits shared over Redis: one round trip instead of two); undefined
   * where they cannot, and the caller takes them one after the other.
   */
  takeThen?(
    key: string,
    next: KeyedLimiter,
    nextKey: string,
  ): Promise<[Admission, Admission | undefined]> | undefined;
}

/** A limit as the settings give it: `burst` at once, then `perMinute` a minute. */
export interface Limit {
  burst: number;
  perMinute: number;
}

/** Builds the limiter of one scope ("person", or "chat:<platform>") for its limit. */
export type LimiterFactory = (scope: string, limit: Limit) => KeyedLimiter;

interface Bucket {
  tokens: number;
  at: number;
  refused: boolean;
}

/**
 * A token bucket per key (a person, a chat): `burst` commands at once, then `perMinute` a minute.
 * Full buckets are forgotten, so memory follows the number of recently active keys. Time is
 * monotonic milliseconds: a wall clock stepped back by NTP must not empty every bucket.
 */
export class RateLimiter implements KeyedLimiter {
  private readonly buckets = new Map<string, Bucket>();
  private readonly refillPerMs: number;

  constructor(
    private readonly burst: number,
    perMinute: number,
    private readonly now: () => number = () => performance.now(),
  ) {
    this.refillPerMs = perMinute / 60_000;
  }

  /** Takes a token when there is one. */
  take(key: string): Admission {
    const now = this.now();
    const bucket = this.buckets.get(key) ?? { tokens: this.burst, at: now, refused: false };
    bucket.tokens = Math.min(
      this.burst,
      bucket.tokens + Math.max(0, now - bucket.at) * this.refillPerMs,
    );
    bucket.at = now;
    this.buckets.set(key, bucket);
    if (bucket.tokens >= 1) {
      bucket.tokens -= 1;
      bucket.refused = false;
      if (this.buckets.size > 10_000) this.forgetFull(now);
      return { allowed: true };
    }
    const repeated = bucket.refused;
    bucket.refused = true;
    return { allowed: false, waitMs: Math.ceil((1 - bucket.tokens) / this.refillPerMs), repeated };
  }

  private forgetFull(now: number): void {
    for (const [key, bucket] of this.buckets) {
      if (bucket.tokens + (now - bucket.at) * this.refillPerMs >= this.burst)
        this.buckets.delete(key);
    }
  }
}
