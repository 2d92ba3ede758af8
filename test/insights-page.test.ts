/**
 * Issue 36's manager's page through the real bot: Discord over the gateway (the fake Discord),
 * the simulator, SQLite, and the pages in a real Chromium. A member runs /verify in the server
 * and proves the simulator's demo wallet on the bot's page; a manager's /dashboard link opens the
 * insights page, whose member table shows them, and the CSV download lists their wallet. A used
 * link gets nothing; a non-manager gets no link; a session reads its own community only.
 */
import { mkdtempSync, readFileSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import type { Browser } from "playwright-core";
import { privateKeyToAccount } from "viem/accounts";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { type Bot, createBot } from "../src/bot.ts";
import { parseConfig } from "../src/config.ts";
import { silentLogger } from "../src/log.ts";
import { DEMO_WALLET } from "../src/simulator/index.ts";
import { type BrowserHarness, launchBrowser, launchChromium } from "./browser.ts";
import { type FakeDiscord, PERMISSION, startFakeDiscord } from "./fakes/discord/index.ts";
import { discordText as textOf } from "./fakes/discord/text.ts";
import { worldEnv } from "./helpers.ts";
import { startTestSimulator } from "./test-simulator.ts";

const demo = privateKeyToAccount(DEMO_WALLET.privateKey);
const cleanups: (() => unknown)[] = [];
let harness: BrowserHarness | undefined;
let chromium: Browser | undefined;

beforeAll(async () => {
  harness = await launchBrowser();
  chromium = await launchChromium();
  cleanups.push(
    () => harness?.close(),
    () => chromium?.close(),
  );
}, 60_000);

afterAll(async () => {
  for (const cleanup of cleanups.splice(0).reverse()) await cleanup();
});

describe("the manager's page on the real bot, in Chromium", () => {
  it("the member who proved the demo wallet is in the table and the CSV; a used link, a non-manager and another community get nothing", async (ctx) => {
    if (!harness || !chromium) return ctx.skip();
    const sim = await startTestSimulator({ apiKey: "insights-page" });
    cleanups.push(() => sim.close());
    const discord: FakeDiscord = await startFakeDiscord();
    cleanups.push(() => discord.close());
    const alice = { id: "300000000000000021", username: "alice", globalName: "Alice" };
    const manager = { id: "300000000000000022", username: "meg", globalName: "Meg" };
    discord.addMember(alice.id);
    discord.addMember(manager.id);
    const dataDir = mkdtempSync(join(tmpdir(), "insights-page-"));
    cleanups.push(() => rmSync(dataDir, { recursive: true, force: true }));
    const env = worldEnv(
      {
        sim,
        dataDir,
        discord: { token: discord.token, apiBase: discord.apiBase, guildId: discord.guildId },
      },
      { CHAINS: "ethereum" },
    );
    const bot: Bot = await createBot(parseConfig(env), { logger: silentLogger() });
    await bot.start();
    cleanups.push(() => bot.stop());
    const linkIn = (text: string, path: string) => {
      const url = new RegExp(`http://127\\.0\\.0\\.1:${bot.http.port}/${path}/[\\w-]+`).exec(
        text,
      )?.[0];
      if (!url) throw new Error(`no /${path} link in: ${text}`);
      return url;
    };
    const slash = async (name: string, who: typeof alice, permissions = 0n) => {
      const interaction = discord.sendInteraction(
        discord.slashCommand(name, {}, { user: who, memberPermissions: permissions }),
      );
      const callback = await discord.waitForCallback(interaction, 10_000);
      // A deferred answer (type 5) comes as the edit of the original message.
      return (callback.body as { type?: number }).type === 5
        ? textOf(await discord.waitForOriginalEdit(interaction, 10_000))
        : textOf(callback);
    };

    // Alice proves the demo wallet from the server, on the bot's page.
    const verify = linkIn(await slash("verify", alice), "verify");
    const { page: proving } = await harness.open(verify, { account: demo });
    await proving.getByRole("button", { name: "Connect wallet" }).click();
    await proving.locator("#status.verified").waitFor();
    await proving.close();

    // A non-manager gets no link; the manager gets one.
    expect(await slash("dashboard", alice)).toMatch(/Only people who can manage this server/);
    // Managing a channel is not managing the server: its members' wallets are not theirs to see.
    expect(await slash("dashboard", alice, PERMISSION.ManageChannels)).toMatch(/Only people/);
    const link = linkIn(await slash("dashboard", manager, PERMISSION.ManageGuild), "dashboard");

    const context = await chromium.newContext();
    cleanups.push(() => context.close());
    const page = await context.newPage();
    await page.goto(link);
    const row = page.locator("#member-rows tr").first();
    await row.waitFor();
    expect(await row.innerText()).toContain(alice.username);
    expect(await page.locator(`#member-rows .wallet[title="${DEMO_WALLET.address}"]`).count()).toBe(
      1,
    );
    // One member: no figure of theirs is shown as an aggregate.
    expect(await page.locator("#floor").innerText()).toMatch(/5/);

    const [download] = await Promise.all([
      page.waitForEvent("download"),
      page.getByRole("link", { name: "Download CSV" }).click(),
    ]);
    const csv = readFileSync(await download.path(), "utf8");
    expect(csv).toContain(alice.id);
    expect(csv).toContain(alice.username);
    expect(csv).toContain(DEMO_WALLET.address);

    // The used link, in another browser: nothing.
    const other = await chromium.newContext();
    cleanups.push(() => other.close());
    const stranger = await other.newPage();
    const answer = await stranger.goto(link);
    expect(answer?.status()).toBe(410);
    expect(await stranger.locator("body").innerText()).toMatch(/used or has expired/);
    expect(await stranger.locator("#member-rows tr").count()).toBe(0);
    const api = await stranger.request.get(
      `http://127.0.0.1:${bot.http.port}/dashboard/api/members`,
    );
    expect(api.status()).toBe(401);

    // Another community's manager: their session reads their own community, whatever is asked.
    const elsewhere = await bot.insights.links.create(
      { platform: "discord", id: "another-guild", channelId: "x" },
      manager.id,
      "ethereum",
    );
    const third = await chromium.newContext();
    cleanups.push(() => third.close());
    const theirs = await third.newPage();
    await theirs.goto(elsewhere.url ?? "");
    await theirs.locator("#member-count").waitFor();
    const members = await theirs.request.get(
      `http://127.0.0.1:${bot.http.port}/dashboard/api/members?chat=${discord.guildId}`,
    );
    expect(((await members.json()) as { total: number }).total).toBe(0);
  }, 90_000);
});
