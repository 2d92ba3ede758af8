/**
 * Issue 25, defect 1: PostgreSQL frozen without a reset (a failover, a NAT table that dropped the
 * flow), then new connections allowed again. The bot must say so on /healthz at once (within its
 * bound, 503 with the reason), take alerts up again after the thaw, and still stop.
 */
import { mkdtempSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { afterEach, describe, expect, it } from "vitest";
import { cursorKey } from "../src/alerts/poller.ts";
import { createBot } from "../src/bot.ts";
import { parseConfig } from "../src/config.ts";
import { silentLogger } from "../src/log.ts";
import { FaultProxy } from "./fakes/tcp-proxy.ts";
import { groupChat, startFakeTelegram, user } from "./fakes/telegram/index.ts";
import { freePort, worldEnv } from "./helpers.ts";
import { POSTGRES_URL, postgresAvailable } from "./services.ts";
import { dropSchema, freshSchemaName } from "./store/backends.ts";
import { startTestSimulator } from "./test-simulator.ts";

const admin = user(4001, "Ada", "ada");
const group = groupChat(-8001, "Mints");

const cleanups: (() => unknown)[] = [];
afterEach(async () => {
  for (const cleanup of cleanups.splice(0).reverse()) await cleanup();
});

/** /healthz, given 3 s to answer (its bound is 1 s): a hang fails the fetch. */
async function healthz(port: number): Promise<{ status: number; body: Record<string, unknown> }> {
  const response = await fetch(`http://127.0.0.1:${port}/healthz`, {
    signal: AbortSignal.timeout(3_000),
  });
  return { status: response.status, body: (await response.json()) as Record<string, unknown> };
}

/** A bot on its own PostgreSQL schema behind a fault proxy, with a fake Telegram group subscribed. */
async function botBehindProxy() {
  const schema = freshSchemaName();
  cleanups.push(() => dropSchema(schema));
  const proxy = FaultProxy.forUrl(POSTGRES_URL, 5432);
  await proxy.start();
  cleanups.push(() => proxy.close());
  const sim = await startTestSimulator();
  cleanups.push(() => sim.close());
  const telegram = await startFakeTelegram();
  cleanups.push(() => telegram.close());
  telegram.setMemberStatus(group.id, admin.id, "administrator");
  const dataDir = mkdtempSync(join(tmpdir(), "bot-pg-freeze-"));
  cleanups.push(() => rmSync(dataDir, { recursive: true, force: true }));
  const port = await freePort();
  const bot = await createBot(
    parseConfig(
      worldEnv(
        { sim, dataDir, telegram },
        {
          DATABASE_URL: proxy.urlFor(POSTGRES_URL),
          DATABASE_SCHEMA: schema,
          HTTP_PORT: String(port),
          HTTP_HOST: "127.0.0.1",
          POLL_INTERVAL_S: "1",
          DELIVERY_TICK_MS: "100",
          COLLECTION_INDEX_REFRESH_S: "0",
          // Short bounds, so the test takes seconds: every wait on PostgreSQL ends within 1 s.
          PG_QUERY_TIMEOUT_MS: "1000",
          PG_CONNECT_TIMEOUT_MS: "1000",
          LEASE_TTL_MS: "1500",
          LEASE_RENEW_MS: "300",
        },
      ),
    ),
    { logger: silentLogger() },
  );
  const state = { stopped: false };
  cleanups.push(() => (state.stopped ? undefined : bot.stop()));
  await bot.start();

  const sentTo = (address: string) =>
    telegram.sent.some(
      (c) =>
        c.ok &&
        c.method === "sendMessage" &&
        String(c.params.chat_id) === String(group.id) &&
        String(c.params.text).toLowerCase().includes(address),
    );
  const mint = () => {
    for (;;) {
      const nft = sim.mint(1).find((c) => !c.types.includes("TYPE_ERC20"));
      if (nft) return nft.address.toLowerCase();
    }
  };

  const before = telegram.sent.length;
  telegram.pushUpdate(telegram.message(group, admin, "/subscribe"));
  await telegram.waitFor((c) => c.seq > before && c.ok && c.method === "sendMessage", 10_000);
  await expect
    .poll(() => bot.store.kv.get(cursorKey("ethereum")), { timeout: 10_000 })
    .toBeTruthy();
  expect((await healthz(port)).status).toBe(200);
  const first = mint();
  await expect.poll(() => sentTo(first), { timeout: 10_000 }).toBe(true);
  return { bot, proxy, port, mint, sentTo, state };
}

describe.runIf(await postgresAvailable())("a frozen PostgreSQL", () => {
  it("/healthz answers 503 with the reason while frozen; after the thaw alerts resume; stop() completes", async () => {
    const { bot, proxy, port, mint, sentTo, state } = await botBehindProxy();
    proxy.freeze();
    const frozenAt = performance.now();
    let slowestHealthMs = 0;
    const timedHealthz = async () => {
      const started = performance.now();
      const answer = await healthz(port);
      slowestHealthMs = Math.max(slowestHealthMs, performance.now() - started);
      return answer;
    };
    // Every answer comes within its bound; soon one is 503 and says why.
    await expect
      .poll(async () => (await timedHealthz()).status, { timeout: 15_000, interval: 200 })
      .toBe(503);
    const unhealthyAfterMs = performance.now() - frozenAt;
    const frozen = await healthz(port);
    expect(frozen.status).toBe(503);
    expect(frozen.body).toMatchObject({ ok: false, database: false });
    const reasons = async () =>
      ((await healthz(port)).body.checks as { ok: boolean; reason?: string }[])
        .filter((check) => !check.ok)
        .map((check) => check.reason)
        .join("\n");
    expect(await reasons()).toMatch(/^database: the store did not answer/m);
    // The lease cannot be renewed: this instance stops leading, and says its attempts fail.
    await expect
      .poll(reasons, { timeout: 10_000, interval: 200 })
      .toMatch(/^lease new-contract-poller:ethereum: no attempt confirmed for \d+ s/m);
    expect(bot.poller.isLeader).toBe(false);

    proxy.thaw();
    const thawedAt = performance.now();
    const second = mint();
    await expect.poll(() => sentTo(second), { timeout: 30_000, interval: 200 }).toBe(true);
    const alertAfterThawMs = performance.now() - thawedAt;
    await expect.poll(async () => (await healthz(port)).status, { timeout: 10_000 }).toBe(200);

    // Frozen again: shutdown still completes.
    proxy.freeze();
    state.stopped = true;
    const stopStarted = performance.now();
    await expect(
      Promise.race([
        bot.stop().then(() => "stopped"),
        new Promise((resolve) => setTimeout(() => resolve("hung"), 20_000)),
      ]),
    ).resolves.toBe("stopped");
    const ms = (value: number) => `${(value / 1000).toFixed(1)} s`;
    process.stdout.write(
      `postgres-freeze: 503 ${ms(unhealthyAfterMs)} after the freeze (slowest /healthz ${ms(slowestHealthMs)}); alert ${ms(alertAfterThawMs)} after the thaw; stop while frozen ${ms(performance.now() - stopStarted)}\n`,
    );
  }, 90_000);

  it("a reset-style outage and a slow link: alerts keep coming, health is 200 again at once", async () => {
    const { bot, proxy, port, mint, sentTo } = await botBehindProxy();

    // When every byte to and from PostgreSQL takes 50 ms each way
    proxy.slow(50);
    const slowMint = mint();
    // Then alerts still arrive and the bot stays healthy
    await expect.poll(() => sentTo(slowMint), { timeout: 20_000, interval: 200 }).toBe(true);
    expect((await healthz(port)).status).toBe(200);

    // When every connection is reset (a restart of the server, a failover that sends RST)
    proxy.slow(0);
    proxy.reset();
    const afterReset = mint();
    // Then the pool reconnects: the next alert arrives and health is 200
    await expect.poll(() => sentTo(afterReset), { timeout: 20_000, interval: 200 }).toBe(true);
    await expect.poll(async () => (await healthz(port)).status, { timeout: 10_000 }).toBe(200);
    expect(bot.poller.isLeader).toBe(true);
  }, 90_000);
});
