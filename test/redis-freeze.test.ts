import { afterEach, describe, expect, it } from "vitest";
import { SharedAnswerCache } from "../src/cache/answer-cache.ts";
import { SharedBudget, SharedPacing, sharedLimiters } from "../src/cache/limits.ts";
import { RedisLink } from "../src/cache/redis.ts";
import { FaultProxy } from "./fakes/tcp-proxy.ts";
import { capturingLogger } from "./helpers.ts";
import { countKeys, deleteKeys, testPrefix } from "./redis-helpers.ts";
import { REDIS_URL, redisAvailable } from "./services.ts";

async function until(check: () => boolean, ms: number): Promise<void> {
  const deadline = performance.now() + ms;
  while (!check()) {
    if (performance.now() > deadline) throw new Error("condition not met in time");
    await new Promise((resolve) => setTimeout(resolve, 20));
  }
}

/**
 * A call that takes this long waited on Redis: an answer from the in-process fallback takes a few
 * ms, a command timing out takes the command timeout (a second before the breaker).
 */
const WAITED_MS = 300;

describe.runIf(await redisAvailable())("Redis frozen, slowed or reset", () => {
  let proxy: FaultProxy | undefined;
  let link: RedisLink | undefined;
  let prefix = "";
  afterEach(async () => {
    await link?.close();
    await proxy?.close();
    await deleteKeys(prefix);
  });

  /** A link to the shared Redis through a fault proxy, under a fresh prefix, and a cache on it. */
  async function behindProxy(name: string, coolingMs: number) {
    proxy = FaultProxy.forUrl(REDIS_URL, 6379);
    await proxy.start();
    prefix = testPrefix(name);
    const { logger, lines } = capturingLogger();
    link = new RedisLink({ url: proxy.urlFor(REDIS_URL), prefix, logger, coolingMs });
    expect(await link.ready(2_000)).toBe(true);
    const cache = new SharedAnswerCache(link, {
      // No L1 to speak of: every read goes to Redis (or to its fallback)
      local: { maxKeys: 10, maxBytes: 1024, maxEntryBytes: 1, ttlSeconds: 1 },
      maxEntryBytes: 1024,
      waitMs: 2_000,
    });
    return { proxy, link, lines, cache };
  }

  it("opens the breaker after a few timeouts: every Redis user answers at once from its fallback, health says why, and it closes after the thaw and the cooling", async () => {
    // Given an instance whose Redis is behind a proxy that can freeze the connection
    const { proxy, link, lines, cache } = await behindProxy("freeze", 1_500);
    const person = sharedLimiters(link)("person", { burst: 2, perMinute: 2 });
    const pace = new SharedPacing(link);
    const budget = new SharedBudget(link, { perSecond: 1000, burst: 1000, maxWaitMs: 1000 });
    let loads = 0;
    const load = async () => ({ value: { n: ++loads }, bytes: 8 });
    expect(await cache.getOrLoad("warm", 60, load)).toEqual({ n: 1 });
    expect(link.health()).toEqual({ redis: "ok" });

    // When the connection freezes (no FIN, no RST: the socket stays "ready")
    proxy.freeze();

    // Then only the first few calls wait out a command timeout; the rest answer at once
    const took: number[] = [];
    const timed = async <T>(call: () => Promise<T>): Promise<T> => {
      const started = performance.now();
      try {
        return await call();
      } finally {
        took.push(performance.now() - started);
      }
    };
    const admitted = [];
    for (let i = 0; i < 4; i++) {
      await timed(() => cache.getOrLoad(`key-${i}`, 60, load));
      admitted.push(await timed(() => Promise.resolve(person.take("7"))));
      await timed(() => pace.acquire("telegram:global"));
      await timed(() => budget.take());
    }
    const waited = took.filter((ms) => ms >= WAITED_MS);
    expect(waited.length, `calls that waited: ${took.map(Math.round).join(", ")}`).toBeLessThan(4);
    // The in-process fallbacks still hold the limit: 2 of the person's 4 commands pass
    expect(admitted.filter((one) => one.allowed)).toHaveLength(2);
    // And health says Redis is down, and why
    expect(link.healthy).toBe(false);
    expect(link.health()).toMatchObject({
      redis: "degraded",
      redisDown: { reason: expect.stringMatching(/timed out/) },
    });
    expect(lines.filter((line) => line.includes("Redis is unreachable"))).toHaveLength(1);

    // When the network heals, the breaker closes after its cooling, on a fresh connection
    proxy.thaw();
    await until(() => link.healthy === true, 10_000);
    expect(link.health()).toEqual({ redis: "ok" });
    expect(lines.filter((line) => line.includes("Redis is reachable again"))).toHaveLength(1);
    // And answers are shared through Redis again
    await cache.getOrLoad("after", 60, load);
    expect(await countKeys(prefix, "answer:*")).toBeGreaterThanOrEqual(2);
  }, 40_000);

  it("a slow link (150 ms each way) is still Redis: no breaker, answers shared; a reset is reconnected and shared again", async () => {
    // Given an instance whose Redis is behind a proxy
    const { proxy, link, cache } = await behindProxy("slow", 1_000);
    let loads = 0;
    const load = async () => ({ value: { n: ++loads }, bytes: 8 });

    // When every byte takes 150 ms each way (under the command timeout)
    proxy.slow(150);
    for (let i = 0; i < 3; i++) await cache.getOrLoad(`slow-${i}`, 60, load);
    // Then it stays a working Redis: the answers are stored there and the breaker stays closed
    expect(link.health()).toEqual({ redis: "ok" });
    const shared = await countKeys(prefix, "answer:*");
    expect(shared).toBeGreaterThanOrEqual(3);

    // When the connection is reset (a restart, a failover that sends RST)
    proxy.slow(0);
    proxy.reset();
    // Then the instance gets back to Redis and shares answers there again
    await until(() => link.healthy === true, 15_000);
    await expect
      .poll(
        async () => {
          await cache.getOrLoad(`after-reset-${loads}`, 60, load);
          return countKeys(prefix, "answer:*");
        },
        { timeout: 15_000, interval: 200 },
      )
      .toBeGreaterThan(shared);
  }, 40_000);
});
