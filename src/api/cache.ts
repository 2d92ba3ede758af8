import { LRUCache } from "lru-cache";

export interface CacheStats {
  hits: number;
  misses: number;
  /** Callers that joined a request already in flight instead of starting their own. */
  joins: number;
  /** Answers not kept because they were larger than the per-answer cap. */
  full: number;
  /** What the kept answers weigh: bytes as received, plus their keys. */
  bytes: number;
}

/** A loaded answer with its size as received, which is what the cache counts. */
export interface Sized<T> {
  value: T;
  bytes: number;
}

export interface ResponseCacheOptions {
  maxKeys: number;
  maxBytes: number;
  maxEntryBytes: number;
}

/**
 * What the client reads through: the in-process ResponseCache here, or the shared one over Redis
 * (src/cache/) when the bot runs as several instances.
 */
export interface AnswerCache {
  readonly stats: CacheStats;
  /**
   * The answer under `key`, loaded once (by whoever is first) when no fresh one is kept; kept for
   * `ttlSeconds` (0: never kept, only shared with the reads already in flight).
   */
  getOrLoad<T>(
    key: string,
    ttlSeconds: number,
    load: () => Promise<Sized<T>>,
    options?: ReadOptions<T>,
  ): Promise<T>;
}

export interface ReadOptions<T> {
  /** This caller stops waiting when it aborts (the load goes on for the others). */
  signal?: AbortSignal | undefined;
  /**
   * Checks an answer read back from outside the process (Redis) as the loaded one was checked: a
   * value it throws on is a miss, loaded again. Another version of the bot, or anyone who can
   * write to Redis, may have put anything there.
   */
  check?: ((stored: unknown) => T) | undefined;
}

export function raceSignal<T>(promise: Promise<T>, signal: AbortSignal | undefined): Promise<T> {
  if (!signal) return promise;
  if (signal.aborted) return Promise.reject(signal.reason);
  return new Promise<T>((resolve, reject) => {
    const onAbort = () => reject(signal.reason);
    signal.addEventListener("abort", onAbort, { once: true });
    promise.then(
      (value) => {
        signal.removeEventListener("abort", onAbort);
        resolve(value);
      },
      (error: unknown) => {
        signal.removeEventListener("abort", onAbort);
        reject(error);
      },
    );
  });
}

/**
 * A read-through cache with single flight: concurrent reads of one key share one load. The load
 * runs free of any one caller's signal (each caller stops waiting on its own), so one person
 * giving up never fails the others. It is bounded in bytes (the size of each answer as the
 * service sent it, a cheap and close measure of what the parsed answer holds): past the bound the
 * least recently used answers make room, and an answer above the per-answer cap is not kept at
 * all. Not keeping an answer never fails a read.
 */
export class ResponseCache implements AnswerCache {
  private readonly counts = { hits: 0, misses: 0, joins: 0, full: 0 };
  private readonly store: LRUCache<string, { value: unknown }>;
  private readonly inFlight = new Map<string, Promise<unknown>>();

  constructor(options: ResponseCacheOptions) {
    // Entry ages are measured on lru-cache's monotonic clock (performance.now).
    this.store = new LRUCache({
      max: options.maxKeys,
      maxSize: options.maxBytes,
      maxEntrySize: options.maxEntryBytes,
    });
  }

  get stats(): CacheStats {
    return { ...this.counts, bytes: this.store.calculatedSize };
  }

  async getOrLoad<T>(
    key: string,
    ttlSeconds: number,
    load: () => Promise<Sized<T>>,
    { signal }: ReadOptions<T> = {},
  ): Promise<T> {
    if (ttlSeconds > 0) {
      const cached = this.store.get(key);
      if (cached !== undefined) {
        this.counts.hits++;
        return cached.value as T;
      }
    }
    const pending = this.inFlight.get(key) as Promise<T> | undefined;
    if (pending) {
      this.counts.joins++;
      return raceSignal(pending, signal);
    }
    this.counts.misses++;
    const loading = load()
      .then(({ value, bytes }) => {
        if (ttlSeconds > 0) this.put(key, value, bytes, ttlSeconds);
        return value;
      })
      .finally(() => this.inFlight.delete(key));
    // Nobody may be left waiting (every caller gave up): the failure is theirs to see, not the process's.
    loading.catch(() => {});
    this.inFlight.set(key, loading);
    return raceSignal(loading, signal);
  }

  private put(key: string, value: unknown, bytes: number, ttlSeconds: number): void {
    const status: LRUCache.Status<string, { value: unknown }> = {};
    this.store.set(key, { value }, { ttl: ttlSeconds * 1000, size: bytes + key.length, status });
    if (status.maxEntrySizeExceeded) this.counts.full++;
  }
}
