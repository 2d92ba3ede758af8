/**
 * Issue 26, item 1: after a restart on the same DATA_DIR, the embedded simulator must not mint
 * again the contracts it minted before (it did, from its seed: the bot, rightly, took them as
 * seen and stayed silent for as long as the previous run had lasted). The bot and its embedded
 * simulator run in this process, as `npm start` with no data-service settings runs them.
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

async function startBot(dataDir: string, telegram: FakeTelegram): Promise<Bot> {
  const config = parseConfig({
    CHAINS: "ethereum",
    DATA_DIR: dataDir,
    TELEGRAM_BOT_TOKEN: telegram.token,
    TELEGRAM_API_ROOT: telegram.apiRoot,
    POLL_INTERVAL_S: "1",
    DELIVERY_TICK_MS: "100",
    SIMULATOR_MINT_INTERVAL_MS: "200",
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
    await first.stop();
    expect(before.length).toBeGreaterThanOrEqual(2);

    const restarted = telegram.sent.length;
    const second = await startBot(dataDir, telegram);
    cleanups.push(() => second.stop());
    const secondStart = Date.now() - 1000;
    // The subscription outlived the restart; an alert for a contract minted after it arrives.
    await expect
      .poll(() => alertsSince(restarted).length, { timeout: 20_000, interval: 100 })
      .toBeGreaterThanOrEqual(1);
    const after = await mintedSince(second, secondStart);
    expect(after.length).toBeGreaterThanOrEqual(1);
    // None of them repeats a contract of the first run.
    expect(after.filter((address) => before.includes(address))).toEqual([]);
    const alerted = String(alertsSince(restarted)[0]?.params.text).toLowerCase();
    expect(after.some((address) => alerted.includes(address))).toBe(true);
  }, 60_000);
});
