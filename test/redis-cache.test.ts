import { Redis } from "ioredis";
import { afterEach, describe, expect, it } from "vitest";
import { type ApiClient, createApiClient } from "../src/api/client.ts";
import { apiClientSettings } from "../src/bot.ts";
import { SharedAnswerCache } from "../src/cache/answer-cache.ts";
import { RedisLink } from "../src/cache/redis.ts";
import { parseConfig } from "../src/config.ts";
import type { Simulator } from "../src/simulator/index.ts";
import { capturingLogger } from "./helpers.ts";
import { countKeys, deleteKeys, testPrefix } from "./redis-helpers.ts";
import { REDIS_URL, redisAvailable } from "./services.ts";
import { startTestSimulator } from "./test-simulator.ts";

interface Instance {
  api: ApiClient;
  cache: SharedAnswerCache;
  link: RedisLink;
  close(): Promise<void>;
}

/** One bot instance's client: its own cache and its own connection to the shared Redis. */
async function instance(
  sim: Simulator,
  prefix: string,
  env: Record<string, string> = {},
): Promise<Instance> {
  const config = parseConfig({
    API_BUDGET_PER_SECOND: "100000",
    API_BUDGET_BURST: "100000",
    ...env,
  });
  const { logger } = capturingLogger();
  const link = new RedisLink({ url: REDIS_URL, prefix, logger });
  expect(await link.ready(2_000)).toBe(true);
  const cache = new SharedAnswerCache(link, {
    local: { maxKeys: 100, maxBytes: 1024 * 1024, maxEntryBytes: 512 * 1024, ttlSeconds: 2 },
    maxEntryBytes: config.cache.maxEntryBytes,
    waitMs: 3_000,
  });
  const api = createApiClient(apiClientSettings(config, sim.url, sim.apiKey), logger, { cache });
  return {
    api,
    cache,
    link,
    async close() {
      await api.close();
      await link.close();
    },
  };
}

const BEHAVIORS = "/audiences/v1beta1/behaviors/by_collection/";

describe.runIf(await redisAvailable())("shared answer cache over Redis", () => {
  let sim: Simulator | undefined;
  let instances: Instance[] = [];
  let prefix = "";
  afterEach(async () => {
    for (const one of instances) await one.close();
    instances = [];
    await sim?.close();
    await deleteKeys(prefix);
  });

  it("50 identical reads spread over 3 instances make 1 upstream call per key", async () => {
    // Given three instances, each with its own cache and connection, and a slow data service
    sim = await startTestSimulator({ faults: { latencyMs: 150 } });
    prefix = testPrefix("cache");
    const started = sim;
    instances = await Promise.all([1, 2, 3].map(() => instance(started, prefix)));
    const { collection } = sim.fixtures;

    // When 50 identical reads arrive at once, round robin over the three
    const answers = await Promise.all(
      Array.from({ length: 50 }, (_, i) =>
        instances[i % 3]?.api.audiences.behaviorsByCollection(collection),
      ),
    );

    // Then the data service was asked once, and every read got the same answer
    expect(sim.countRequests(BEHAVIORS)).toBe(1);
    expect(new Set(answers.map((answer) => JSON.stringify(answer))).size).toBe(1);
    expect(answers[0]?.aggregatedBehaviors.length).toBeGreaterThan(0);
    const loads = instances.reduce((sum, one) => sum + one.cache.sharedStats.sharedLoads, 0);
    expect(loads).toBe(1);
    // The answer is in Redis under the prefix (and the lock is gone)
    expect(await countKeys(prefix, "answer:*")).toBe(1);
    expect(await countKeys(prefix, "answer-lock:*")).toBe(0);

    // And a later read on any instance, past the short in-process layer, is served by Redis
    const later = await instance(started, prefix);
    instances.push(later);
    await later.api.audiences.behaviorsByCollection(collection);
    expect(sim.countRequests(BEHAVIORS)).toBe(1);
    expect(later.cache.sharedStats.sharedHits).toBe(1);
  });

  it("two keys read 25 times each over 3 instances: 2 calls; after the TTL, once more each", async () => {
    sim = await startTestSimulator({ faults: { latencyMs: 100 } });
    prefix = testPrefix("cache-ttl");
    const started = sim;
    instances = await Promise.all(
      [1, 2, 3].map(() => instance(started, prefix, { CACHE_TTL_BEHAVIORS_S: "1" })),
    );
    const { collection, wallet } = sim.fixtures;
    const round = () =>
      Promise.all(
        Array.from({ length: 50 }, (_, i) => {
          const api = instances[i % 3]?.api;
          return i % 2 === 0
            ? api?.audiences.behaviorsByCollection(collection)
            : api?.audiences.behaviorsByWallets([wallet]);
        }),
      );
    await round();
    expect(sim.countRequests("/audiences/v1beta1/behaviors/")).toBe(2);
    // Past the 1 s TTL (in Redis and in each L1), each key is loaded once more, by one instance
    await new Promise((resolve) => setTimeout(resolve, 1_200));
    await round();
    expect(sim.countRequests("/audiences/v1beta1/behaviors/")).toBe(4);
  });

  it("a failed load is not kept and holds no lock: the next read, on another instance, loads again", async () => {
    sim = await startTestSimulator();
    prefix = testPrefix("cache-fail");
    const started = sim;
    instances = await Promise.all(
      [1, 2].map(() => instance(started, prefix, { API_RETRIES: "0" })),
    );
    const { collection } = sim.fixtures;
    sim.script([{ status: 404 }]);
    await expect(instances[0]?.api.audiences.behaviorsByCollection(collection)).rejects.toThrow();
    expect(await countKeys(prefix)).toBe(0);
    await instances[1]?.api.audiences.behaviorsByCollection(collection);
    expect(sim.countRequests(BEHAVIORS)).toBe(2);
    expect(await countKeys(prefix, "answer:*")).toBe(1);
  });

  it("a value in Redis that is not a valid answer is a miss: loaded again and overwritten, never a crash", async () => {
    sim = await startTestSimulator();
    prefix = testPrefix("cache-check");
    const started = sim;
    const { collection } = sim.fixtures;
    const first = await instance(started, prefix);
    instances.push(first);
    const good = await first.api.audiences.behaviorsByCollection(collection);
    expect(sim.countRequests(BEHAVIORS)).toBe(1);

    // Whatever another version of the bot (or anyone) left under the key
    const foreign = [
      "not json{",
      JSON.stringify({ aggregatedBehaviors: "many" }),
      JSON.stringify({ aggregatedBehaviors: [{ behavior: 7, walletsCount: 1 }] }),
      "null",
    ];
    for (const [i, value] of foreign.entries()) {
      await overwriteAnswers(prefix, value);
      // A fresh instance, so the read goes past the in-process layer to Redis
      const reader = await instance(started, prefix);
      instances.push(reader);
      expect(await reader.api.audiences.behaviorsByCollection(collection)).toEqual(good);
      expect(sim.countRequests(BEHAVIORS)).toBe(2 + i);
    }

    // The load overwrote the foreign value: the next instance finds a good answer in Redis
    const last = await instance(started, prefix);
    instances.push(last);
    expect(await last.api.audiences.behaviorsByCollection(collection)).toEqual(good);
    expect(sim.countRequests(BEHAVIORS)).toBe(1 + foreign.length);
    expect(last.cache.sharedStats.sharedHits).toBe(1);
  });
});

/** Puts `value` under every answer key of the prefix. */
async function overwriteAnswers(prefix: string, value: string): Promise<void> {
  const redis = new Redis(REDIS_URL, { maxRetriesPerRequest: 1 });
  try {
    const keys = await redis.keys(`${prefix}answer:*`);
    expect(keys.length).toBeGreaterThan(0);
    for (const key of keys) await redis.set(key, value, "PX", 60_000);
  } finally {
    redis.disconnect();
  }
}
