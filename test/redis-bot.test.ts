import { mkdtempSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { PassThrough, Writable } from "node:stream";
import { afterAll, describe, expect, it } from "vitest";
import { type Bot, createBot } from "../src/bot.ts";
import { parseConfig } from "../src/config.ts";
import type { Simulator } from "../src/simulator/index.ts";
import { capturingLogger, freePort, testInvocation } from "./helpers.ts";
import { deleteKeys, RedisProxy, testPrefix } from "./redis-helpers.ts";
import { REDIS_URL, redisAvailable } from "./services.ts";
import { startTestSimulator } from "./test-simulator.ts";

const cleanups: (() => Promise<void> | void)[] = [];
afterAll(async () => {
  for (const cleanup of cleanups.splice(0).reverse()) await cleanup();
});

interface Started {
  bot: Bot;
  port: number;
  printed: () => string;
  input: PassThrough;
  lines: string[];
}

/** A bot on the console chat, with its HTTP host, on the simulator and the given Redis. */
async function startBot(sim: Simulator, env: Record<string, string>): Promise<Started> {
  const dir = mkdtempSync(join(tmpdir(), "bot-redis-"));
  cleanups.push(() => rmSync(dir, { recursive: true, force: true }));
  const port = await freePort();
  let printed = "";
  const input = new PassThrough();
  const output = new Writable({
    write(chunk, _encoding, callback) {
      printed += String(chunk);
      callback();
    },
  });
  const config = parseConfig({
    API_BASE_URL: sim.url,
    API_KEY: sim.apiKey,
    DATA_DIR: dir,
    HTTP_PORT: String(port),
    COLLECTION_INDEX_REFRESH_S: "0",
    RATE_LIMIT_BURST: "2",
    RATE_LIMIT_PER_MINUTE: "2",
    ...env,
  });
  const { logger, lines } = capturingLogger(["s3cret-pass"]);
  const bot = await createBot(config, { logger, input, output });
  await bot.start();
  cleanups.push(() => bot.stop());
  return { bot, port, printed: () => printed, input, lines };
}

async function healthOf(port: number): Promise<{ status: number; body: Record<string, unknown> }> {
  const response = await fetch(`http://127.0.0.1:${port}/healthz`);
  return { status: response.status, body: (await response.json()) as Record<string, unknown> };
}

describe.runIf(await redisAvailable())("a bot with REDIS_URL", () => {
  it("answers commands on the shared cache and limits, reports Redis on /healthz, and keeps serving when it is down", async () => {
    const sim = await startTestSimulator();
    cleanups.push(() => sim.close());
    const prefix = testPrefix("bot");
    cleanups.push(() => deleteKeys(prefix));
    const proxy = new RedisProxy();
    await proxy.start();
    cleanups.push(() => proxy.close());
    // Two instances: one straight to Redis, one through a proxy the test can cut
    const one = await startBot(sim, { REDIS_URL, REDIS_KEY_PREFIX: prefix });
    const two = await startBot(sim, {
      REDIS_URL: proxy.url.replace("redis://", "redis://:s3cret-pass@"),
      REDIS_KEY_PREFIX: prefix,
      REDIS_BREAKER_COOLING_MS: "1000",
    });

    // A command on each: the second is answered from the first's answer, kept in Redis
    one.input.write("/top volume 1d 3\n");
    await expect
      .poll(() => one.printed().includes("Top collections"), { timeout: 5_000 })
      .toBe(true);
    two.input.write("/top volume 1d 3\n");
    await expect
      .poll(() => two.printed().includes("Top collections"), { timeout: 5_000 })
      .toBe(true);
    expect(sim.countRequests("/collections/v1beta2/top/")).toBe(1);

    // A person's limit of 2 holds across both instances
    const who = { user: { id: `p-${prefix}`, name: "P" } };
    const replies = [];
    for (const bot of [one.bot, two.bot, one.bot, two.bot])
      replies.push(await bot.runtime.run(testInvocation(who), "help", {}));
    const refused = replies.filter((reply) => /sending commands quickly/.test(reply.text ?? ""));
    expect(refused).toHaveLength(2);

    // /healthz says redis "ok"; with Redis gone it says "degraded", still 200, and still answers
    expect(await healthOf(two.port)).toMatchObject({ status: 200, body: { redis: "ok" } });
    await proxy.cut();
    await expect
      .poll(async () => (await healthOf(two.port)).body.redis, { timeout: 5_000 })
      .toBe("degraded");
    const down = await healthOf(two.port);
    expect(down.status).toBe(200);
    expect(down.body.redisDown).toMatchObject({ reason: expect.stringMatching(/closed/) });
    two.input.write("/top volume 7d 3\n");
    await expect
      .poll(() => two.printed().split("Top collections").length, { timeout: 5_000 })
      .toBe(3);
    await proxy.restore();
    await expect
      .poll(async () => (await healthOf(two.port)).body.redis, { timeout: 8_000 })
      .toBe("ok");

    // The password in REDIS_URL never reaches the log
    expect(two.lines.join("\n")).not.toContain("s3cret-pass");
    expect(two.lines.some((line) => line.includes("REDIS_URL set"))).toBe(true);
  });

  it("without REDIS_URL /healthz has no redis entry", async () => {
    const sim = await startTestSimulator();
    cleanups.push(() => sim.close());
    const { port } = await startBot(sim, {});
    const { body } = await healthOf(port);
    expect(body).not.toHaveProperty("redis");
  });
});
