import { createHash, randomBytes } from "node:crypto";
import {
  type AnswerCache,
  type CacheStats,
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
 * Answers are kept in Redis as JSON of the parsed value (the schemas' output is plain JSON data).
 * When Redis fails, the load goes straight upstream: a command never fails for the cache.
 */
export class SharedAnswerCache implements AnswerCache {
  private readonly local: ResponseCache;
  private readonly counts = { sharedHits: 0, sharedLoads: 0, sharedWaits: 0 };

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

  /** What happened past the L1: answers found in Redis, loads made here, waits on another's load. */
  get sharedStats() {
    return { ...this.counts };
  }

  getOrLoad<T>(
    key: string,
    ttlSeconds: number,
    load: () => Promise<Sized<T>>,
    signal?: AbortSignal,
  ): Promise<T> {
    if (ttlSeconds <= 0) return this.local.getOrLoad(key, 0, load, signal);
    const localTtl = Math.min(ttlSeconds, this.options.local.ttlSeconds);
    return this.local.getOrLoad(key, localTtl, () => this.shared(key, ttlSeconds, load), signal);
  }

  private async shared<T>(
    key: string,
    ttlSeconds: number,
    load: () => Promise<Sized<T>>,
  ): Promise<Sized<T>> {
    const digest = createHash("sha256").update(key).digest("base64url");
    const valueKey = `${this.redis.prefix}answer:${digest}`;
    const lockKey = `${this.redis.prefix}answer-lock:${digest}`;
    const stored = async (): Promise<Sized<T> | undefined> => {
      const found = await this.redis.client.get(valueKey);
      if (found === null) return undefined;
      this.counts.sharedHits++;
      return { value: JSON.parse(found) as T, bytes: Buffer.byteLength(found) };
    };
    const token = randomBytes(9).toString("base64url");
    const deadline = performance.now() + this.options.waitMs;
    let waited = false;
    try {
      for (;;) {
        const found = await stored();
        if (found) return found;
        if (performance.now() >= deadline) break;
        const locked = await this.redis.client.set(lockKey, token, "PX", this.options.waitMs, "NX");
        if (locked === "OK") {
          // The lock may be free because its loader just finished: its answer is there then.
          const justStored = await stored();
          if (justStored) {
            await this.redis.client.eval(RELEASE, 1, lockKey, token);
            return justStored;
          }
          return await this.loadAndShare(valueKey, lockKey, token, ttlSeconds, load);
        }
        if (!waited) this.counts.sharedWaits++;
        waited = true;
        await sleep(this.options.pollMs ?? 25);
      }
    } catch (error) {
      if (error instanceof LoadFailed) throw error.cause;
      if (error instanceof RedisUnusable) return error.answer as Sized<T>;
      this.redis.failed(error);
    }
    // Redis failed, or the loader elsewhere took longer than we wait: load it here.
    this.counts.sharedLoads++;
    return load();
  }

  /** Loads under the lock, writes the answer to Redis, lets the lock go. */
  private async loadAndShare<T>(
    valueKey: string,
    lockKey: string,
    token: string,
    ttlSeconds: number,
    load: () => Promise<Sized<T>>,
  ): Promise<Sized<T>> {
    this.counts.sharedLoads++;
    let answer: Sized<T>;
    try {
      answer = await load();
    } catch (error) {
      // The waiting instances try again (one of them takes the lock) rather than wait it out.
      await this.redis.client.eval(RELEASE, 1, lockKey, token).catch(() => {});
      throw new LoadFailed(error);
    }
    try {
      if (answer.bytes <= this.options.maxEntryBytes) {
        await this.redis.client.set(
          valueKey,
          JSON.stringify(answer.value),
          "PX",
          ttlSeconds * 1000,
        );
      }
      await this.redis.client.eval(RELEASE, 1, lockKey, token);
    } catch (error) {
      this.redis.failed(error);
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
