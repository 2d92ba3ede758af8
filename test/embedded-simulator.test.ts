/**
 * The bot on its embedded simulator, as `npm start` with no data-service settings runs them (in
 * this process). Issue 26, item 1: after a restart on the same DATA_DIR, the simulator must not
 * mint again the contracts it minted before (it did, from its seed: the bot, rightly, took them as
 * seen and stayed silent for as long as the previous run had lasted). Since issue "What a
 * community sees", item 6, it answers the same past as the run before (its mints follow the
 * clock) and new contracts after. Item 11: a chain's data set is built when a command first needs
 * it, not at start for every chain.
 */
import { mkdtempSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { afterAll, describe, expect, it } from "vitest";
import { type Bot, createBot } from "../src/bot.ts";
import { parseConfig } from "../src/config.ts";
import { silentLogger } from "../src/log.ts";
import type { Contract } from "../src/simulator/index.ts";
import { type FakeTelegram, groupChat, startFakeTelegram, user } from "./fakes/telegram/index.ts";

const admin = user(2601, "Ada", "ada");
const group = groupChat(-26001, "Mints");

const cleanups: (() => unknown)[] = [];
afterAll(async () => {
  for (const cleanup of cleanups.splice(0).reverse()) await cleanup();
});

async function startBot(
  dataDir: string,
  telegram: FakeTelegram,
  settings: Record<string, string> = { CHAINS: "ethereum" },
): Promise<Bot> {
  const config = parseConfig({
    ...settings,
    DATA_DIR: dataDir,
    TELEGRAM_BOT_TOKEN: telegram.token,
    TELEGRAM_API_ROOT: telegram.apiRoot,
    POLL_INTERVAL_S: "1",
    DELIVERY_TICK_MS: "100",
    SIMULATOR_MINT_INTERVAL_MS: "200",
    // The timed mints are a history (a contract every 200 ms since a week before the start):
    // the poll's overlap, 10 minutes by default, would be 3,000 contracts, more than its pages.
    POLL_OVERLAP_S: "5",
    // Every mint is alerted: none is hidden as a bad actor's.
    SIMULATOR_BADACTOR_EVERY: "0",
  });
  expect(config.simulated).toBe(true);
  const bot = await createBot(config, { logger: silentLogger() });
  await bot.start();
  return bot;
}

/** The NFT contracts the bot's embedded simulator minted since `since` (ms), oldest first. */
async function mintedSince(bot: Bot, since: number): Promise<string[]> {
  const sim = bot.simulator;
  if (!sim) throw new Error("no embedded simulator");
  const url = `${sim.url}/foundational/v1beta2/contracts?limit=500&blockTimestampGt=${new Date(since).toISOString()}`;
  const answer = (await (await fetch(url, { headers: { "x-api-key": sim.apiKey } })).json()) as {
    contracts: Contract[];
  };
  return answer.contracts
    .filter((contract) => !contract.types.includes("TYPE_ERC20"))
    .map((contract) => contract.address.toLowerCase());
}

describe("the embedded simulator across a restart", () => {
  it("mints contracts it never minted before, so a subscriber gets a new alert after a restart", async () => {
    const telegram = await startFakeTelegram();
    cleanups.push(() => telegram.close());
    telegram.setMemberStatus(group.id, admin.id, "administrator");
    const dataDir = mkdtempSync(join(tmpdir(), "bot-alerts-restart-"));
    cleanups.push(() => rmSync(dataDir, { recursive: true, force: true }));
    const alertsSince = (seq: number) =>
      telegram.sent.filter(
        (c) =>
          c.seq > seq &&
          c.ok &&
          c.method === "sendMessage" &&
          String(c.params.chat_id) === String(group.id) &&
          /0x[0-9a-f]{40}/i.test(String(c.params.text)),
      );

    const firstStart = Date.now() - 1000;
    const first = await startBot(dataDir, telegram);
    const subscribed = telegram.sent.length;
    telegram.pushUpdate(telegram.message(group, admin, "/subscribe"));
    await expect
      .poll(() => alertsSince(subscribed).length, { timeout: 20_000, interval: 100 })
      .toBeGreaterThanOrEqual(2);
    const before = await mintedSince(first, firstStart);
    const lastLook = Date.now();
    await first.stop();
    expect(before.length).toBeGreaterThanOrEqual(2);

    const restarted = telegram.sent.length;
    const secondStart = Date.now() - 1000;
    const second = await startBot(dataDir, telegram);
    cleanups.push(() => second.stop());
    // The subscription outlived the restart: an alert for a contract minted after it arrives
    // (alerts of the first run still queued may come first).
    const alertedAfter = async () => {
      const minted = await mintedSince(second, secondStart);
      const texts = alertsSince(restarted).map((c) => String(c.params.text).toLowerCase());
      return minted.filter((address) => texts.some((text) => text.includes(address)));
    };
    await expect.poll(alertedAfter, { timeout: 20_000, interval: 200 }).not.toEqual([]);
    // The past is the same: what the first run listed, the second lists too.
    const past = await mintedSince(second, firstStart);
    expect(before.filter((address) => !past.includes(address))).toEqual([]);
    // None of the contracts minted since the first run's last look repeats one it listed.
    // (The alert above may be for a contract minted between the second start's look-back and
    // the first run's last look: wait for one minted after that look.)
    await expect
      .poll(async () => (await mintedSince(second, lastLook)).length, { timeout: 20_000 })
      .toBeGreaterThan(0);
    const after = await mintedSince(second, lastLook);
    expect(after.filter((address) => before.includes(address))).toEqual([]);
  }, 60_000);
});

describe("the embedded simulator's chains", () => {
  it("builds the first chain's data set at start and another's when a command first needs it; the pollers of all poll meanwhile", async () => {
    const telegram = await startFakeTelegram();
    cleanups.push(() => telegram.close());
    const dataDir = mkdtempSync(join(tmpdir(), "bot-lazy-chains-"));
    cleanups.push(() => rmSync(dataDir, { recursive: true, force: true }));
    // No CHAINS: every chain the simulator serves, as `npm start` with no settings.
    const bot = await startBot(dataDir, telegram, {});
    cleanups.push(() => bot.stop());
    const sim = bot.simulator;
    if (!sim) throw new Error("no embedded simulator");
    expect(sim.chains).toEqual(["ethereum", "base", "polygon"]);
    // Every poller polls a few times, over contracts minted meanwhile (minters looked up too).
    for (const poller of bot.pollers.values())
      await expect
        .poll(() => poller.stats.polls, { timeout: 20_000, interval: 100 })
        .toBeGreaterThanOrEqual(3);
    await expect.poll(() => sim.built("ethereum"), { timeout: 20_000 }).toBe("world");
    expect(sim.built("base")).toBe("population");
    expect(sim.built("polygon")).toBe("population");

    const before = telegram.sent.length;
    telegram.pushUpdate(
      telegram.message(group, admin, "/audience bored ape yacht club chain:base"),
    );
    const answer = await telegram.waitFor(
      (c) => c.seq > before && c.ok && c.method.startsWith("send"),
      20_000,
    );
    expect(JSON.stringify(answer.params)).toMatch(/Bored Ape Yacht Club/);
    expect(sim.built("base")).toBe("world");
    expect(sim.built("polygon")).toBe("population");
  }, 60_000);
});
