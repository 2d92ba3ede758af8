import NodeCache from "node-cache";

export interface CacheStats {
  hits: number;
  misses: number;
  /** Callers that joined a request already in flight instead of starting their own. */
  joins: number;
  /** Values not stored because the cache was full. */
  full: number;
}

function raceSignal<T>(promise: Promise<T>, signal: AbortSignal | undefined): Promise<T> {
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
 * giving up never fails the others. A full cache only stops storing; it never fails a read.
 */
export class ResponseCache {
  readonly stats: CacheStats = { hits: 0, misses: 0, joins: 0, full: 0 };
  private readonly store: NodeCache;
  private readonly inFlight = new Map<string, Promise<unknown>>();

  constructor(options: { maxKeys: number }) {
    this.store = new NodeCache({
      useClones: false,
      maxKeys: options.maxKeys,
      stdTTL: 0,
      checkperiod: 60,
      deleteOnExpire: true,
    });
  }

  async getOrLoad<T>(
    key: string,
    ttlSeconds: number,
    load: () => Promise<T>,
    signal?: AbortSignal,
  ): Promise<T> {
    if (ttlSeconds > 0) {
      const cached = this.store.get<T>(key);
      if (cached !== undefined) {
        this.stats.hits++;
        return cached;
      }
    }
    const pending = this.inFlight.get(key) as Promise<T> | undefined;
    if (pending) {
      this.stats.joins++;
      return raceSignal(pending, signal);
    }
    this.stats.misses++;
    const loading = load()
      .then((value) => {
        if (ttlSeconds > 0) this.put(key, value, ttlSeconds);
        return value;
      })
      .finally(() => this.inFlight.delete(key));
    // Nobody may be left waiting (every caller gave up): the failure is theirs to see, not the process's.
    loading.catch(() => {});
    this.inFlight.set(key, loading);
    return raceSignal(loading, signal);
  }

  private put(key: string, value: unknown, ttlSeconds: number): void {
    try {
      this.store.set(key, value, ttlSeconds);
    } catch {
      // ECACHEFULL: node-cache throws when maxKeys is reached; the value is simply not kept.
      this.stats.full++;
    }
  }

  get size(): number {
    return this.store.keys().length;
  }

  flush(): void {
    this.store.flushAll();
  }

  close(): void {
    this.store.close();
  }
}
