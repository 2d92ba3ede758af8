import { afterEach, describe, expect, it } from "vitest";
import { createApiClient } from "../src/api/client.ts";
import { apiClientSettings } from "../src/bot.ts";
import { SharedAnswerCache } from "../src/cache/answer-cache.ts";
import { SharedBudget, sharedLimiters } from "../src/cache/limits.ts";
import { RedisLink } from "../src/cache/redis.ts";
import { parseConfig } from "../src/config.ts";
import { Admission } from "../src/core/admission.ts";
import type { Invocation } from "../src/core/command.ts";
import type { Simulator } from "../src/simulator/index.ts";
import { capturingLogger } from "./helpers.ts";
import { deleteKeys, RedisProxy, testPrefix } from "./redis-helpers.ts";
import { redisAvailable } from "./services.ts";
import { startTestSimulator } from "./test-simulator.ts";

const person = (id: string): Invocation => ({
  id: "inv",
  platform: "telegram",
  user: { id, name: id },
  chat: { id: "p", kind: "private" },
  canManageChannel: async () => false,
});

async function until(check: () => boolean, ms = 5_000): Promise<void> {
  const deadline = performance.now() + ms;
  while (!check()) {
    if (performance.now() > deadline) throw new Error("condition not met in time");
    await new Promise((resolve) => setTimeout(resolve, 20));
  }
}

const BEHAVIORS = "/audiences/v1beta1/behaviors/by_collection/";

describe.runIf(await redisAvailable())("Redis down", () => {
  let proxy: RedisProxy | undefined;
  let sim: Simulator | undefined;
  let link: RedisLink | undefined;
  let prefix = "";
  afterEach(async () => {
    await link?.close();
    await proxy?.close();
    await sim?.close();
    await deleteKeys(prefix);
  });

  it("commands keep working on the in-process fallbacks; the outage is logged once; recovery is noticed", async () => {
    // Given an instance whose Redis is behind a proxy the test can cut
    proxy = new RedisProxy();
    await proxy.start();
    sim = await startTestSimulator();
    prefix = testPrefix("outage");
    const { logger, lines } = capturingLogger();
    link = new RedisLink({ url: proxy.url, prefix, logger, coolingMs: 1_000 });
    expect(await link.ready(2_000)).toBe(true);
    const config = parseConfig({ API_BUDGET_PER_SECOND: "1000", API_BUDGET_BURST: "1000" });
    const cache = new SharedAnswerCache(link, {
      // No L1 to speak of: every read goes to Redis (or to its fallback)
      local: { maxKeys: 10, maxBytes: 1024, maxEntryBytes: 1, ttlSeconds: 1 },
      maxEntryBytes: config.cache.maxEntryBytes,
      waitMs: 2_000,
    });
    const api = createApiClient(apiClientSettings(config, sim.url, sim.apiKey), logger, {
      cache,
      budget: new SharedBudget(link, { perSecond: 1000, burst: 1000, maxWaitMs: 1000 }),
    });
    const admission = new Admission(
      { burst: 2, perMinute: 2 },
      undefined,
      undefined,
      sharedLimiters(link),
    );
    const { collection } = sim.fixtures;
    await api.audiences.behaviorsByCollection(collection);
    await api.audiences.behaviorsByCollection(collection);
    expect(sim.countRequests(BEHAVIORS)).toBe(1);
    expect(link.healthy).toBe(true);

    // When Redis goes away
    await proxy.cut();
    await until(() => !link?.healthy);

    // Then reads still answer (from the data service), and limits still hold (per instance)
    for (let i = 0; i < 5; i++) await api.audiences.behaviorsByCollection(collection);
    expect(sim.countRequests(BEHAVIORS)).toBe(6);
    const admitted = [];
    for (let i = 0; i < 4; i++) admitted.push(await admission.admit(person("7")));
    expect(admitted.filter((refusal) => refusal === undefined)).toHaveLength(2);
    // And the outage was logged once, not per call
    await new Promise((resolve) => setTimeout(resolve, 500));
    const outage = lines.filter((line) => line.includes("Redis is unreachable"));
    expect(outage).toHaveLength(1);

    // When Redis is back, it is noticed and used again
    const hitsBefore = cache.sharedStats.sharedHits;
    await proxy.restore();
    await until(() => link?.healthy === true, 8_000);
    expect(lines.filter((line) => line.includes("Redis is reachable again"))).toHaveLength(1);
    await api.audiences.behaviorsByCollection(collection);
    expect(sim.countRequests(BEHAVIORS)).toBe(6);
    expect(cache.sharedStats.sharedHits).toBe(hitsBefore + 1);
    await api.close();
  });
});
