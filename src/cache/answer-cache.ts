import { createHash, randomBytes } from "node:crypto";
import {
  type AnswerCache,
  type CacheStats,
  type ReadOptions,
  ResponseCache,
  type ResponseCacheOptions,
  type Sized,
} from "../api/cache.ts";
import type { RedisLink } from "./redis.ts";

export interface SharedCacheOptions {
  /** The in-process layer: small and short-lived, so instances never disagree for long. */
  local: ResponseCacheOptions & { ttlSeconds: number };
  /** Answers larger than this are not written to Redis either. */
  maxEntryBytes: number;
  /**
   * How long an instance waits for the one loading a key elsewhere before loading it itself; also
   * how long the load's lock lives, so a crashed loader holds nobody up for longer.
   */
  waitMs: number;
  /** How often a waiting instance looks for the answer. */
  pollMs?: number;
}

const sleep = (ms: number) => new Promise((resolve) => setTimeout(resolve, ms));

/** Deletes the lock only while it is still ours (it may have expired and been taken since). */
const RELEASE = `if redis.call('get', KEYS[1]) == ARGV[1] then return redis.call('del', KEYS[1]) end return 0`;

/**
 * The answer cache shared by every instance: a small in-process layer (L1, a few seconds) over
 * Redis (L2, the answers' own TTLs). A key missing from both is loaded by one instance only: the
 * first takes a lock (SET NX PX), looks once more (the lock may be free because its loader just
 * finished), and loads; the others look for its answer every `pollMs`, and load it themselves only
 * when the lock is gone without an answer (the loader failed) and they win it, or after `waitMs`. Within an instance, the L1's single flight makes one caller per key
 * do this.
 *
 * Answers are kept in Redis as JSON of the parsed value (the schemas' output is plain JSON data),
 * and read back through the caller's check (the schema the answer was parsed with): a value that
 * fails it is a miss. When Redis fails or its breaker is open, the load goes straight upstream: a
 * command never fails, nor waits long, for the cache.
 */
export class SharedAnswerCache implements AnswerCache {
  private readonly local: ResponseCache;
  private readonly counts = { sharedHits: 0, sharedLoads: 0, sharedWaits: 0, sharedRefused: 0 };

  constructor(
    private readonly redis: RedisLink,
    private readonly options: SharedCacheOptions,
  ) {
    this.local = new ResponseCache(options.local);
  }

  /** L1 counts (a hit in Redis is a miss of the L1). */
  get stats(): CacheStats {
    return this.local.stats;
  }

  /**
   * What happened past the L1: answers found in Redis, loads made here, waits on another's load,
   * values in Redis that did not pass the answer's check (loaded again).
   */
  get sharedStats() {
    return { ...this.counts };
  }

  getOrLoad<T>(
    key: string,
    ttlSeconds: number,
    load: () => Promise<Sized<T>>,
    options: ReadOptions<T> = {},
  ): Promise<T> {
    if (ttlSeconds <= 0) return this.local.getOrLoad(key, 0, load, options);
    const localTtl = Math.min(ttlSeconds, this.options.local.ttlSeconds);
    return this.local.getOrLoad(
      key,
      localTtl,
      () => this.shared(key, ttlSeconds, load, options.check),
      options,
    );
  }

  private async shared<T>(
    key: string,
    ttlSeconds: number,
    load: () => Promise<Sized<T>>,
    check: ((stored: unknown) => T) | undefined,
  ): Promise<Sized<T>> {
    const digest = createHash("sha256").update(key).digest("base64url");
    const valueKey = `${this.redis.prefix}answer:${digest}`;
    const lockKey = `${this.redis.prefix}answer-lock:${digest}`;
    const stored = async (): Promise<Sized<T> | undefined> => {
      const found = await this.redis.run((client) => client.get(valueKey));
      if (found === null) return undefined;
      let value: T;
      try {
        const json: unknown = JSON.parse(found);
        value = check ? check(json) : (json as T);
      } catch {
        // Not an answer this version would accept: a miss, and the load overwrites it.
        this.counts.sharedRefused++;
        return undefined;
      }
      this.counts.sharedHits++;
      return { value, bytes: Buffer.byteLength(found) };
    };
    const release = (token: string) =>
      this.redis.run((client) => client.eval(RELEASE, 1, lockKey, token));
    const token = randomBytes(9).toString("base64url");
    const deadline = performance.now() + this.options.waitMs;
    let waited = false;
    try {
      for (;;) {
        const found = await stored();
        if (found) return found;
        if (performance.now() >= deadline) break;
        const locked = await this.redis.run((client) =>
          client.set(lockKey, token, "PX", this.options.waitMs, "NX"),
        );
        if (locked === "OK") {
          // The lock may be free because its loader just finished: its answer is there then.
          const justStored = await stored();
          if (justStored) {
            await release(token);
            return justStored;
          }
          return await this.loadAndShare(valueKey, token, ttlSeconds, load, release);
        }
        if (!waited) this.counts.sharedWaits++;
        waited = true;
        await sleep(this.options.pollMs ?? 25);
      }
    } catch (error) {
      if (error instanceof LoadFailed) throw error.cause;
      if (error instanceof RedisUnusable) return error.answer as Sized<T>;
      // Redis failed or is not asked (its link counts the failure and reports the outage).
    }
    // Redis failed, or the loader elsewhere took longer than we wait: load it here.
    this.counts.sharedLoads++;
    return load();
  }

  /** Loads under the lock, writes the answer to Redis, lets the lock go. */
  private async loadAndShare<T>(
    valueKey: string,
    token: string,
    ttlSeconds: number,
    load: () => Promise<Sized<T>>,
    release: (token: string) => Promise<unknown>,
  ): Promise<Sized<T>> {
    this.counts.sharedLoads++;
    let answer: Sized<T>;
    try {
      answer = await load();
    } catch (error) {
      // The waiting instances try again (one of them takes the lock) rather than wait it out.
      await release(token).catch(() => {});
      throw new LoadFailed(error);
    }
    try {
      if (answer.bytes <= this.options.maxEntryBytes) {
        const json = JSON.stringify(answer.value);
        await this.redis.run((client) => client.set(valueKey, json, "PX", ttlSeconds * 1000));
      }
      await release(token);
    } catch {
      // The answer is good: Redis failing to keep it is no reason to load it again.
      throw new RedisUnusable(answer);
    }
    return answer;
  }
}

/** The answer was loaded, but Redis could not keep it. */
class RedisUnusable extends Error {
  constructor(readonly answer: unknown) {
    super("Redis could not keep the answer");
  }
}

/** The load itself failed: its error goes to the callers unchanged. */
class LoadFailed extends Error {
  constructor(override readonly cause: unknown) {
    super("the load failed");
  }
}
