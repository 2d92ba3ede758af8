import { afterEach, describe, expect, it } from "vitest";
import type { PlatformLimit } from "../src/adapters/pace.ts";
import { SharedPacing } from "../src/cache/limits.ts";
import { RedisLink } from "../src/cache/redis.ts";
import { silentLogger } from "../src/log.ts";
import { deleteKeys, testPrefix } from "./redis-helpers.ts";
import { REDIS_URL, redisAvailable } from "./services.ts";

const sleep = (ms: number) => new Promise((resolve) => setTimeout(resolve, ms));

/** The most grants in any rolling window of `windowMs` (from a grant, up to but not including t + windowMs). */
function peakIn(times: number[], windowMs: number): number {
  const sorted = [...times].sort((a, b) => a - b);
  let peak = 0;
  let first = 0;
  for (let last = 0; last < sorted.length; last++) {
    while ((sorted[first] ?? 0) <= (sorted[last] ?? 0) - windowMs) first++;
    peak = Math.max(peak, last - first + 1);
  }
  return peak;
}

/**
 * The load that breaks a fixed window: a steady stream just under the limit, spread over the
 * instances, then every instance bursting at once. A fixed window lets the burst through when it
 * resets, on top of the stream's last second.
 */
async function hammer(
  instances: SharedPacing[],
  limit: PlatformLimit,
  key: string | undefined,
  plan: { steadyPerSecond: number; steadyMs: number; burstEach: number },
): Promise<number[]> {
  const times: number[] = [];
  const grant = async (pacing: SharedPacing) => {
    await pacing.acquire(limit, key);
    times.push(performance.now());
  };
  const started = performance.now();
  const pending: Promise<void>[] = [];
  for (let i = 0; performance.now() - started < plan.steadyMs; i++) {
    pending.push(grant(instances[i % instances.length] as SharedPacing));
    await sleep(1000 / plan.steadyPerSecond);
  }
  for (const pacing of instances)
    for (let i = 0; i < plan.burstEach; i++) pending.push(grant(pacing));
  await Promise.all(pending);
  return times;
}

describe("peakIn", () => {
  it("counts the most grants in any rolling window", () => {
    expect(peakIn([0, 10, 999, 1000, 1001], 1000)).toBe(4);
    expect(peakIn([0, 1000, 2000], 1000)).toBe(1);
    expect(peakIn([], 1000)).toBe(0);
  });
});

describe.runIf(await redisAvailable())(
  "platform limits in any rolling window, over three instances",
  () => {
    let links: RedisLink[] = [];
    let prefix = "";
    afterEach(async () => {
      for (const link of links) await link.close();
      links = [];
      await deleteKeys(prefix);
    });
    /** Three instances: each its own connection to Redis, all under one prefix. */
    const three = async (overrides?: ConstructorParameters<typeof SharedPacing>[1]) => {
      prefix ||= testPrefix("rolling");
      return Promise.all(
        [1, 2, 3].map(async () => {
          const link = new RedisLink({ url: REDIS_URL, prefix, logger: silentLogger() });
          expect(await link.ready(2_000)).toBe(true);
          links.push(link);
          return new SharedPacing(link, overrides);
        }),
      );
    };

    it("never more than 50 Discord sends in a rolling second", async () => {
      prefix = testPrefix("rolling-discord");
      const times = await hammer(await three(), "discord:global", undefined, {
        steadyPerSecond: 40,
        steadyMs: 1_200,
        burstEach: 20,
      });
      expect(times.length).toBeGreaterThan(100);
      expect(peakIn(times, 1000)).toBeLessThanOrEqual(50);
    }, 20_000);

    it("never more than 30 Telegram sends in a rolling second", async () => {
      prefix = testPrefix("rolling-telegram");
      const times = await hammer(await three(), "telegram:global", undefined, {
        steadyPerSecond: 25,
        steadyMs: 1_200,
        burstEach: 15,
      });
      expect(peakIn(times, 1000)).toBeLessThanOrEqual(30);
    }, 20_000);

    it("never more than 20 sends into one Telegram group in a rolling window (a minute, scaled to 2 s)", async () => {
      prefix = testPrefix("rolling-group");
      const scaled = { "telegram:group": { limit: 20, windowMs: 2_000 } };
      const times = await hammer(await three(scaled), "telegram:group", "-100123", {
        steadyPerSecond: 8,
        steadyMs: 2_400,
        burstEach: 5,
      });
      expect(peakIn(times, 2_000)).toBeLessThanOrEqual(20);
    }, 20_000);

    it("never two sends to one Telegram chat within a second", async () => {
      prefix = testPrefix("rolling-chat");
      const instances = await three();
      const times: number[] = [];
      await Promise.all(
        instances.map(async (pacing) => {
          await pacing.acquire("telegram:chat", "4242");
          times.push(performance.now());
        }),
      );
      expect(peakIn(times, 1000)).toBe(1);
    }, 20_000);
  },
);
