/**
 * Proving a wallet from each chat platform through the page in a real Chromium (issue 27's "done
 * when"): a person asks /verify on Telegram, on Discord over the gateway and on Discord over HTTP
 * interactions; the link the platform delivered is opened in the browser, whose injected wallet
 * signs with a viem local account; the page says Verified, the bot confirms on that platform, and
 * /wallets there lists the address. Real bots (createBot) against the fakes in test/fakes; the
 * console's path is in verify-bot.test.ts.
 */
import { mkdtempSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import type { Page } from "playwright-core";
import { generatePrivateKey, privateKeyToAccount } from "viem/accounts";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { INTERACTIONS_PATH } from "../src/adapters/discord-http/endpoint.ts";
import { type Bot, createBot } from "../src/bot.ts";
import { parseConfig } from "../src/config.ts";
import { silentLogger } from "../src/log.ts";
import type { Simulator } from "../src/simulator/index.ts";
import { type BrowserHarness, launchBrowser } from "./browser.ts";
import { type FakeDiscord, type RecordedRequest, startFakeDiscord } from "./fakes/discord/index.ts";
import {
  type FakeTelegram,
  privateChat,
  type RecordedCall,
  startFakeTelegram,
  user,
} from "./fakes/telegram/index.ts";
import { worldEnv } from "./helpers.ts";
import { startTestSimulator } from "./test-simulator.ts";

const cleanups: (() => unknown)[] = [];
let browser: BrowserHarness | undefined;
let sim: Simulator;

beforeAll(async () => {
  sim = await startTestSimulator({ apiKey: "verify-platforms" });
  cleanups.push(() => sim.close());
  browser = await launchBrowser();
  cleanups.push(() => browser?.close());
}, 60_000);

afterAll(async () => {
  for (const cleanup of cleanups.splice(0).reverse()) await cleanup();
});

/** A bot as an operator runs it, on its own data directory, HTTP host on a free loopback port. */
async function startBot(
  parts: Omit<Parameters<typeof worldEnv>[0], "sim" | "dataDir">,
  extra = {},
) {
  const dataDir = mkdtempSync(join(tmpdir(), "verify-platforms-"));
  cleanups.push(() => rmSync(dataDir, { recursive: true, force: true }));
  const bot: Bot = await createBot(
    parseConfig(worldEnv({ sim, dataDir, ...parts }, { CHAINS: "ethereum", ...extra })),
    { logger: silentLogger() },
  );
  await bot.start();
  cleanups.push(() => bot.stop());
  return bot;
}

/** The link in a reply (Telegram's HTML, Discord's markdown). */
function linkIn(text: string, bot: Bot): string {
  const url = new RegExp(`http://127\\.0\\.0\\.1:${bot.http.port}/verify/[\\w-]+`).exec(text)?.[0];
  if (!url) throw new Error(`no link to the bot's page in: ${text}`);
  return url;
}

/** Opens the link with a wallet of `account`, clicks Connect wallet, and reads the page's end. */
async function signOnPage(url: string, account: ReturnType<typeof privateKeyToAccount>) {
  if (!browser) throw new Error("no browser");
  const { page }: { page: Page } = await browser.open(url, { account });
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

/** The page's heading for a link (opening the page does not use the link up). */
async function headingOf(url: string): Promise<string> {
  if (!browser) throw new Error("no browser");
  const { page }: { page: Page } = await browser.open(url);
  try {
    return (await page.locator("#heading").innerText()).replace(/\s+/g, " ").trim();
  } finally {
    await page.close();
  }
}

type Body = {
  flags?: number;
  content?: string;
  embeds?: { description?: string; title?: string }[];
};
function textOf(request: RecordedRequest): string {
  const body = request.body as Body & { data?: Body };
  const data = body.data ?? body;
  const embeds = (data.embeds ?? []).map((e) => `${e.title ?? ""}\n${e.description ?? ""}`);
  return [data.content ?? "", ...embeds].join("\n");
}

describe("/verify through the page in Chromium, from each platform", () => {
  it("Telegram: the private chat's link, Verified on the page, the confirmation there, /wallets lists it", async (ctx) => {
    if (!browser) return ctx.skip();
    const fake: FakeTelegram = await startFakeTelegram();
    cleanups.push(() => fake.close());
    const bot = await startBot({ telegram: { token: fake.token, apiRoot: fake.apiRoot } });
    const alice = user(7001, "Alice", "alice");
    const dm = privateChat(alice);
    const say = async (text: string) => {
      const before = fake.sent.length;
      fake.pushUpdate(fake.message(dm, alice, text));
      return fake.waitFor(
        (call: RecordedCall) => call.seq > before && call.ok && call.method === "sendMessage",
        10_000,
      );
    };
    const account = privateKeyToAccount(generatePrivateKey());
    // The payload naming the group is typed by anyone: to someone not in it, the page does not
    // tell the group's title.
    const stranger = user(7002, "Mallory", "mallory");
    fake.setMemberStatus(-1009876, stranger.id, "left");
    const before0 = fake.sent.length;
    fake.pushUpdate(
      fake.message(privateChat(stranger), stranger, "/start verify_ethereum_-1009876"),
    );
    const theirs = await fake.waitFor(
      (call: RecordedCall) => call.seq > before0 && call.ok && call.method === "sendMessage",
      10_000,
    );
    expect(await headingOf(linkIn(String(theirs.params.text), bot))).toBe(
      "Prove a wallet for Fake Test Bot on Telegram",
    );
    // As the group's "Verify in private chat" button starts it: the page names that group.
    const answer = await say("/start verify_ethereum_-1009876");
    const url = linkIn(String(answer.params.text), bot);
    expect(await headingOf(url)).toBe("Prove a wallet to Chat -1009876 for Fake Test Bot");
    const before = fake.sent.length;
    expect(await signOnPage(url, account)).toContain(account.address);
    const told = await fake.waitFor(
      (call: RecordedCall) =>
        call.seq > before &&
        call.ok &&
        call.method === "sendMessage" &&
        String(call.params.chat_id) === String(dm.id),
      10_000,
    );
    expect(String(told.params.text)).toContain(account.address);
    const listed = await say("/wallets");
    expect(String(listed.params.text)).toContain(account.address);
  });

  it("Discord over the gateway: the ephemeral link, Verified, the ephemeral follow-up, /wallets lists it", async (ctx) => {
    if (!browser) return ctx.skip();
    const fake: FakeDiscord = await startFakeDiscord();
    cleanups.push(() => fake.close());
    const bot = await startBot({
      discord: { token: fake.token, apiBase: fake.apiBase, guildId: fake.guildId },
    });
    const account = privateKeyToAccount(generatePrivateKey());
    const interaction = fake.sendInteraction(fake.slashCommand("verify"));
    const answer = await fake.waitForCallback(interaction, 10_000);
    const url = linkIn(textOf(answer), bot);
    expect(await headingOf(url)).toBe("Prove a wallet to Fake Guild for FakeBot");
    expect(await signOnPage(url, account)).toContain(account.address);
    const told = await fake.waitForFollowUp(interaction, 10_000);
    expect(textOf(told)).toContain(account.address);
    const wallets = fake.sendInteraction(fake.slashCommand("wallets"));
    expect(textOf(await fake.waitForCallback(wallets, 10_000))).toContain(account.address);
  });

  it("Discord over HTTP interactions: the same, through the bot's own HTTP host", async (ctx) => {
    if (!browser) return ctx.skip();
    const fake: FakeDiscord = await startFakeDiscord();
    cleanups.push(() => fake.close());
    const bot = await startBot(
      { discord: { token: fake.token, apiBase: fake.apiBase, guildId: fake.guildId } },
      { DISCORD_PUBLIC_KEY: fake.publicKey },
    );
    const endpoint = `http://127.0.0.1:${bot.http.port}${INTERACTIONS_PATH}`;
    const account = privateKeyToAccount(generatePrivateKey());
    const payload = fake.slashCommand("verify");
    const delivery = await fake.postInteraction(endpoint, payload);
    expect(delivery.status).toBe(200);
    const answer = delivery.callback as RecordedRequest;
    const url = linkIn(textOf(answer), bot);
    // An HTTP interaction carries no names: they are read through REST.
    expect(await headingOf(url)).toBe("Prove a wallet to Fake Guild for FakeBot");
    expect(await signOnPage(url, account)).toContain(account.address);
    const told = await fake.waitForFollowUp(payload, 10_000);
    expect(textOf(told)).toContain(account.address);
    const wallets = await fake.postInteraction(endpoint, fake.slashCommand("wallets"));
    expect(textOf(wallets.callback as RecordedRequest)).toContain(account.address);
  });
});
