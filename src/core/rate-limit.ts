/**
 * A token bucket per key (platform + user): `burst` commands at once, then `perMinute` a minute.
 * Full buckets are forgotten, so memory follows the number of recently active people. Time is
 * monotonic milliseconds: a wall clock stepped back by NTP must not empty every bucket.
 */
export class RateLimiter {
  private readonly buckets = new Map<string, { tokens: number; at: number }>();
  private readonly refillPerMs: number;

  constructor(
    private readonly burst: number,
    perMinute: number,
    private readonly now: () => number = () => performance.now(),
  ) {
    this.refillPerMs = perMinute / 60_000;
  }

  /** Takes a token; returns 0 when allowed, else the milliseconds until one is available. */
  take(key: string): number {
    const now = this.now();
    const bucket = this.buckets.get(key) ?? { tokens: this.burst, at: now };
    bucket.tokens = Math.min(
      this.burst,
      bucket.tokens + Math.max(0, now - bucket.at) * this.refillPerMs,
    );
    bucket.at = now;
    if (bucket.tokens >= 1) {
      bucket.tokens -= 1;
      this.buckets.set(key, bucket);
      if (this.buckets.size > 10_000) this.forgetFull(now);
      return 0;
    }
    this.buckets.set(key, bucket);
    return Math.ceil((1 - bucket.tokens) / this.refillPerMs);
  }

  private forgetFull(now: number): void {
    for (const [key, bucket] of this.buckets) {
      if (bucket.tokens + (now - bucket.at) * this.refillPerMs >= this.burst)
        this.buckets.delete(key);
    }
  }
}
