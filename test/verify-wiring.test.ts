/**
 * The bot builds the verification service and hands it to the page (bot.verify) and to the
 * commands (ctx.verify); its links name PUBLIC_URL, else the HTTP host's loopback port. The
 * simulator's demo wallet proves itself end to end against the bot's own store.
 */
import { mkdtempSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { PassThrough, Writable } from "node:stream";
import { privateKeyToAccount } from "viem/accounts";
import { afterEach, describe, expect, it } from "vitest";
import { createBot } from "../src/bot.ts";
import { parseConfig } from "../src/config.ts";
import { defineCommand } from "../src/core/command.ts";
import { silentLogger } from "../src/log.ts";
import { DEMO_WALLET, type Simulator } from "../src/simulator/index.ts";
import { openMemorySqliteStore } from "../src/store/sqlite/index.ts";
import { createVerifyService } from "../src/verify/service.ts";
import { freePort, runtimeWith, startClient, testInvocation } from "./helpers.ts";
import { startTestSimulator } from "./test-simulator.ts";

const cleanups: (() => unknown)[] = [];
afterEach(async () => {
  for (const cleanup of cleanups.splice(0).reverse()) await cleanup();
});

async function startBot(env: Record<string, string>) {
  const sim: Simulator = await startTestSimulator({ apiKey: "verify-key" });
  cleanups.push(() => sim.close());
  const dataDir = mkdtempSync(join(tmpdir(), "verify-bot-"));
  cleanups.push(() => rmSync(dataDir, { recursive: true, force: true }));
  const output = new Writable({ write: (_chunk, _encoding, callback) => callback() });
  const bot = await createBot(
    parseConfig({
      API_BASE_URL: sim.url,
      API_KEY: sim.apiKey,
      DATA_DIR: dataDir,
      COLLECTION_INDEX_REFRESH_S: "0",
      ...env,
    }),
    { logger: silentLogger(), input: new PassThrough(), output },
  );
  await bot.start();
  cleanups.push(() => bot.stop());
  return bot;
}

const CONSOLE = { platform: "console", userId: "me", chatId: "console" } as const;

describe("the bot's verification service", () => {
  it("makes links on the HTTP host's loopback port without PUBLIC_URL, and the demo wallet proves itself into the bot's store", async () => {
    const port = await freePort();
    const bot = await startBot({ HTTP_PORT: String(port) });
    const made = await bot.verify.createLink(CONSOLE, "ethereum");
    if (!made.ok) throw new Error(made.refusal.message);
    expect(made.link.url).toMatch(new RegExp(`^http://127\\.0\\.0\\.1:${port}/verify/[\\w-]{43}$`));
    const token = made.link.url.slice(made.link.url.lastIndexOf("/") + 1);
    const asked = await bot.verify.challenge(token, DEMO_WALLET.address);
    if (!asked.ok) throw new Error(asked.refusal.message);
    expect(asked.challenge.message).toMatch(/^http:\/\/127\.0\.0\.1:\d+ wants you to sign in/);
    const demo = privateKeyToAccount(DEMO_WALLET.privateKey);
    const { message } = asked.challenge;
    const proved = await bot.verify.prove(token, message, await demo.signMessage({ message }));
    expect(proved).toEqual({ ok: true, address: DEMO_WALLET.address, chain: "ethereum" });
    expect((await bot.store.wallets.reportWallet("console", "me"))?.address).toBe(
      DEMO_WALLET.address.toLowerCase(),
    );
  });

  it("names PUBLIC_URL in the link and the message when it is set", async () => {
    const bot = await startBot({ PUBLIC_URL: "https://bot.example.org/nft" });
    const made = await bot.verify.createLink(CONSOLE, "ethereum");
    if (!made.ok) throw new Error(made.refusal.message);
    expect(made.link.url).toMatch(/^https:\/\/bot\.example\.org\/nft\/verify\/[\w-]{43}$/);
    const token = made.link.url.slice(made.link.url.lastIndexOf("/") + 1);
    const asked = await bot.verify.challenge(token, DEMO_WALLET.address);
    expect(asked.ok && asked.challenge.message).toMatch(
      /^https:\/\/bot\.example\.org wants you to sign in[\s\S]*URI: https:\/\/bot\.example\.org\/nft\/verify\n/,
    );
  });

  it("a command reaches the service through its context", async () => {
    const setup = await startClient();
    cleanups.push(() => setup.close());
    const store = openMemorySqliteStore();
    const verify = createVerifyService({
      store,
      chains: setup.config.chains,
      baseUrl: () => "https://bot.example",
      logger: silentLogger(),
    });
    const probe = defineCommand({
      name: "probe",
      description: "d",
      options: {},
      examples: [],
      run: async (ctx) => {
        const made = await ctx.verify?.createLink(
          {
            platform: ctx.invocation.platform,
            userId: ctx.invocation.user.id,
            chatId: ctx.invocation.chat.id,
          },
          ctx.chain.id,
        );
        return { text: made?.ok ? made.link.url : "no service" };
      },
    });
    const runtime = runtimeWith(setup, [probe], { store, services: { verify } });
    const reply = await runtime.run(testInvocation(), "probe", {});
    expect(reply.text).toMatch(/^https:\/\/bot\.example\/verify\/[\w-]{43}$/);
  });
});
