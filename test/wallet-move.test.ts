/**
 * Issue 34, item 2: on each platform a wallet belongs to one person. Through the real bot (Discord
 * over the gateway and Telegram, one bot), the page in a real Chromium (test/browser.ts) and the
 * simulator's demo wallet, which holds an Azuki: account A proves it and gets the gate's role;
 * account B proves the same wallet on Discord and so holds its key now: B owns it and gets the
 * role, A is told privately, and A's role ends like a sale's (a warning, the grace, then removal).
 * A Telegram account proving it takes nothing from the Discord account. The bot's clock runs
 * `skew` ahead of the real one; the re-check job's rounds are run by hand.
 */
import { mkdtempSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import type { Page } from "playwright-core";
import { getAddress } from "viem";
import { privateKeyToAccount } from "viem/accounts";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { type Bot, createBot } from "../src/bot.ts";
import { parseConfig } from "../src/config.ts";
import { gateStoreOf } from "../src/gates/store.ts";
import { silentLogger } from "../src/log.ts";
import { CAST_COLLECTIONS, DEMO_WALLET } from "../src/simulator/index.ts";
import { type BrowserHarness, launchBrowser } from "./browser.ts";
import { type FakeDiscord, PERMISSION, startFakeDiscord } from "./fakes/discord/index.ts";
import { discordText as textOf } from "./fakes/discord/text.ts";
import {
  type FakeTelegram,
  privateChat,
  type RecordedCall,
  startFakeTelegram,
  user,
} from "./fakes/telegram/index.ts";
import { worldEnv } from "./helpers.ts";
import { startTestSimulator } from "./test-simulator.ts";

const HOUR = 3_600_000;
const demo = privateKeyToAccount(DEMO_WALLET.privateKey);
const cleanups: (() => unknown)[] = [];
let browser: BrowserHarness | undefined;
/** How far ahead of the real clock the bot's runs. */
let skew = 0;

beforeAll(async () => {
  browser = await launchBrowser();
  cleanups.push(() => browser?.close());
}, 60_000);

afterAll(async () => {
  for (const cleanup of cleanups.splice(0).reverse()) await cleanup();
});

/** Opens the link with the demo wallet, clicks Connect wallet, and reads the page's end. */
async function signOnPage(url: string): Promise<string> {
  if (!browser) throw new Error("no browser");
  const { page }: { page: Page } = await browser.open(url, { account: demo });
  try {
    await page.getByRole("button", { name: "Connect wallet" }).click();
    await page.locator("#status.refused, #status.verified").waitFor();
    return (await page.locator("#verified").isVisible())
      ? await page.locator("#verified").innerText()
      : `refused: ${await page.locator("#status").innerText()}`;
  } finally {
    await page.close();
  }
}

describe("one wallet, one person per platform, through the page in Chromium", () => {
  it("B proving A's wallet on Discord takes it: A is told privately and loses the role after the grace; a Telegram account takes nothing", async (ctx) => {
    if (!browser) return ctx.skip();
    const sim = await startTestSimulator({ apiKey: "wallet-move" });
    cleanups.push(() => sim.close());
    const discord: FakeDiscord = await startFakeDiscord();
    cleanups.push(() => discord.close());
    const telegram: FakeTelegram = await startFakeTelegram();
    cleanups.push(() => telegram.close());
    const holders = discord.addRole({ name: "Holders", position: 1 });
    const botRole = discord.addRole({
      name: "Gatekeeper",
      position: 2,
      permissions: PERMISSION.ManageRoles,
      managed: true,
    });
    discord.setBotRoles([botRole.id]);
    const a = { id: "300000000000000011", username: "alice", globalName: "Alice" };
    const b = { id: "300000000000000012", username: "bob", globalName: "Bob" };
    discord.addMember(a.id);
    discord.addMember(b.id);
    const dataDir = mkdtempSync(join(tmpdir(), "wallet-move-"));
    cleanups.push(() => rmSync(dataDir, { recursive: true, force: true }));
    const env = worldEnv(
      {
        sim,
        dataDir,
        discord: { token: discord.token, apiBase: discord.apiBase, guildId: discord.guildId },
        telegram: { token: telegram.token, apiRoot: telegram.apiRoot },
      },
      { CHAINS: "ethereum", CACHE_TTL_OWNERSHIP_S: "0" },
    );
    const bot: Bot = await createBot(parseConfig(env), {
      logger: silentLogger(),
      now: () => Date.now() + skew,
    });
    await bot.start();
    cleanups.push(() => bot.stop());
    const linkIn = (text: string) => {
      const url = new RegExp(`http://127\\.0\\.0\\.1:${bot.http.port}/verify/[\\w-]+`).exec(
        text,
      )?.[0];
      if (!url) throw new Error(`no link to the bot's page in: ${text}`);
      return url;
    };
    const hasRole = (id: string) => discord.member(id)?.roles.includes(holders.id) ?? false;
    const holdsIt = async (platform: string, id: string) =>
      (await bot.store.wallets.list(platform, id)).some(
        (wallet) => wallet.address === DEMO_WALLET.address.toLowerCase() && wallet.provedAt,
      );

    // The gate: holds 1 Azuki (the demo wallet holds one) gives Holders.
    const azuki = CAST_COLLECTIONS.find((c) => c.name === "Azuki")?.address ?? "";
    const added = await bot.gates.add({
      platform: "discord",
      chatId: discord.guildId,
      target: {
        platform: "discord",
        guildId: discord.guildId,
        roleId: holders.id,
        roleName: "Holders",
      },
      criteria: [
        { kind: "holds", chain: "ethereum", contract: getAddress(azuki), name: "Azuki", min: 1 },
      ],
      createdBy: "manager",
    });
    expect(added.ok).toBe(true);

    /** /verify in the server as `who`, then the page with the demo wallet. */
    const proveOnDiscord = async (who: typeof a) => {
      const interaction = discord.sendInteraction(
        discord.slashCommand("verify", {}, { user: who }),
      );
      const answer = await discord.waitForCallback(interaction, 10_000);
      expect(await signOnPage(linkIn(textOf(answer)))).toContain(DEMO_WALLET.address);
      await bot.gates.settled();
    };

    // 1. A proves the demo wallet: A holds it and gets the role.
    await proveOnDiscord(a);
    expect(await holdsIt("discord", a.id)).toBe(true);
    expect(hasRole(a.id)).toBe(true);
    expect(discord.dms(a.id)).toEqual([]);

    // 2. B proves the same wallet on Discord: the wallet is B's now, and the role with it.
    await proveOnDiscord(b);
    expect(await holdsIt("discord", b.id)).toBe(true);
    expect(hasRole(b.id)).toBe(true);
    expect(await holdsIt("discord", a.id)).toBe(false);
    expect(await bot.store.wallets.list("discord", a.id)).toEqual([]);
    // A is told privately that another account proved it, and that the role ends after the grace.
    await expect
      .poll(
        () =>
          discord
            .dms(a.id)
            .map((dm) => dm.content)
            .join("\n"),
        { timeout: 10_000 },
      )
      .toMatch(/another Discord account[\s\S]*no longer pass the gate for the Holders role/);
    await bot.gates.settled();
    const toA = discord.dms(a.id).map((dm) => dm.content);
    expect(toA).toHaveLength(2);
    expect(toA[0]).toContain(DEMO_WALLET.address);
    expect(discord.dms(b.id)).toEqual([]);
    // Like a sale: A keeps the role through the grace.
    expect(hasRole(a.id)).toBe(true);

    // 3. A Telegram account proves the same wallet: it holds it on Telegram; B keeps it on Discord.
    const carol = user(7003, "Carol", "carol");
    const dm = privateChat(carol);
    const before = telegram.sent.length;
    telegram.pushUpdate(telegram.message(dm, carol, "/verify"));
    const answer = await telegram.waitFor(
      (call: RecordedCall) => call.seq > before && call.ok && call.method === "sendMessage",
      10_000,
    );
    expect(await signOnPage(linkIn(String(answer.params.text)))).toContain(DEMO_WALLET.address);
    await bot.gates.settled();
    expect(await holdsIt("telegram", String(carol.id))).toBe(true);
    expect(await holdsIt("discord", b.id)).toBe(true);
    expect(hasRole(b.id)).toBe(true);
    expect(discord.dms(b.id)).toEqual([]);

    // 4. Half the grace later A still has the role; past it, A's role ends and B's stays.
    const dmsToA = discord.dms(a.id).length;
    skew += 12 * HOUR;
    await bot.gateRecheck.tick();
    await bot.gates.settled();
    expect(hasRole(a.id)).toBe(true);
    skew += 12 * HOUR + 60_000;
    await bot.gateRecheck.tick();
    await bot.gates.settled();
    expect(hasRole(a.id)).toBe(false);
    expect(hasRole(b.id)).toBe(true);
    // Told once: the removal itself sends nothing more.
    expect(discord.dms(a.id)).toHaveLength(dmsToA);
    const [gate] = await bot.gates.list("discord", discord.guildId);
    const log = await gateStoreOf(bot.store).logOf(gate?.id ?? 0, 10);
    expect(log.map((entry) => [entry.action, entry.userId])).toEqual([
      ["removed", a.id],
      ["grace", a.id],
      ["granted", b.id],
      ["granted", a.id],
    ]);
  }, 60_000);
});
