/**
 * Issue 34, item 9: the embedded simulator's data is made up. Served on purpose
 * (DATA_SERVICE=simulator), or in the console chat, every answer's footer and every alert says
 * "simulated data", on every platform: Discord (gateway and HTTP interactions), Telegram and the
 * console. Each world is the production wiring (createBot) on the embedded simulator, with the
 * platforms' loopback fakes.
 */
import { mkdtempSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { PassThrough } from "node:stream";
import { afterAll, describe, expect, it } from "vitest";
import { type Bot, createBot } from "../src/bot.ts";
import { parseConfig } from "../src/config.ts";
import { silentLogger } from "../src/log.ts";
import {
  type FakeDiscord,
  PERMISSION,
  type RecordedRequest,
  startFakeDiscord,
} from "./fakes/discord/index.ts";
import { groupChat, startFakeTelegram, user } from "./fakes/telegram/index.ts";
import { freePort, sqliteDbOf } from "./helpers.ts";

const MARK = "simulated data";
const admin = user(3401, "Ada", "ada");
const group = groupChat(-34001, "Mints");

const cleanups: (() => unknown)[] = [];
afterAll(async () => {
  for (const cleanup of cleanups.splice(0).reverse()) await cleanup();
});

function tempDir(): string {
  const dir = mkdtempSync(join(tmpdir(), "bot-simulated-"));
  cleanups.push(() => rmSync(dir, { recursive: true, force: true }));
  return dir;
}

/** The bot on its embedded simulator, timed mints off (the test mints), started. */
async function startBot(settings: Record<string, string>, deps = {}): Promise<Bot> {
  const config = parseConfig({
    DATA_DIR: tempDir(),
    CHAINS: "",
    POLL_INTERVAL_S: "1",
    DELIVERY_TICK_MS: "100",
    SIMULATOR_MINT_INTERVAL_MS: "0",
    SIMULATOR_BADACTOR_EVERY: "0",
    ...settings,
  });
  expect(config.simulated).toBe(true);
  const bot = await createBot(config, { logger: silentLogger(), ...deps });
  cleanups.push(() => bot.stop());
  await bot.start();
  return bot;
}

/** Once the poller has its cursor, a mint is alerted; returns the new NFT contract's address. */
async function mintAfterPollerStarted(bot: Bot): Promise<string> {
  const until = Date.now() + 10_000;
  const cursor = () =>
    sqliteDbOf(bot).prepare("SELECT value FROM kv WHERE key = 'poll_cursor:ethereum'").get();
  while (!cursor()) {
    if (Date.now() > until) throw new Error("the poller did not start within 10 s");
    await new Promise((resolve) => setTimeout(resolve, 50));
  }
  for (;;) {
    const nft = bot.simulator
      ?.mint(1, "ethereum")
      .find((contract) => !contract.types.includes("TYPE_ERC20"));
    if (nft) return nft.address.toLowerCase();
  }
}

type Embed = { description?: string; footer?: { text?: string } };
const embedsOf = (request: RecordedRequest): Embed[] => {
  const body = request.body as { data?: { embeds?: Embed[] }; embeds?: Embed[] };
  return body.data?.embeds ?? body.embeds ?? [];
};
const footerOf = (request: RecordedRequest) => embedsOf(request)[0]?.footer?.text ?? "";

/** A slash command's answer, deferred or not, over the gateway or HTTP interactions. */
async function discordAnswer(
  fake: FakeDiscord,
  payload: ReturnType<FakeDiscord["slashCommand"]>,
  first: RecordedRequest,
): Promise<RecordedRequest> {
  return (first.body as { type: number }).type === 5
    ? fake.waitForOriginalEdit(payload, 15_000)
    : first;
}

describe("simulated data is said so", () => {
  it("Telegram and Discord (gateway): a command's footer and an alert's", async () => {
    const telegram = await startFakeTelegram();
    cleanups.push(() => telegram.close());
    const discord = await startFakeDiscord();
    cleanups.push(() => discord.close());
    telegram.setMemberStatus(group.id, admin.id, "administrator");
    const bot = await startBot({
      DATA_SERVICE: "simulator",
      TELEGRAM_BOT_TOKEN: telegram.token,
      TELEGRAM_API_ROOT: telegram.apiRoot,
      DISCORD_TOKEN: discord.token,
      DISCORD_API_URL: discord.apiBase,
      DISCORD_GUILD_ID: discord.guildId,
      DISCORD_REGISTER_ON_START: "true",
    });
    const telegramSays = async (text: string) => {
      const before = telegram.sent.length;
      telegram.pushUpdate(telegram.message(group, admin, text));
      const call = await telegram.waitFor(
        (c) => c.seq > before && c.ok && c.method === "sendMessage",
        10_000,
      );
      return String(call.params.text);
    };
    const discordSlash = async (name: string, options: Record<string, string>) => {
      const payload = discord.sendInteraction(
        discord.slashCommand(name, options, { memberPermissions: PERMISSION.ManageChannels }),
      );
      return discordAnswer(discord, payload, await discord.waitForCallback(payload, 10_000));
    };

    const wallet = await telegramSays("/wallet vitalik.eth");
    expect(wallet).toMatch(/vitalik\.eth/);
    expect(wallet.trimEnd().split("\n").at(-1)).toContain(MARK);
    expect(footerOf(await discordSlash("wallet", { wallet: "vitalik.eth" }))).toContain(MARK);

    expect(await telegramSays("/subscribe")).toMatch(/Subscribed/);
    expect(JSON.stringify((await discordSlash("subscribe", {})).body)).toMatch(/Subscribed/);
    const address = await mintAfterPollerStarted(bot);
    const onTelegram = await telegram.waitFor(
      (c) =>
        c.ok && c.method === "sendMessage" && String(c.params.text).toLowerCase().includes(address),
      10_000,
    );
    expect(String(onTelegram.params.text)).toMatch(/New collection/);
    expect(String(onTelegram.params.text).trimEnd().split("\n").at(-1)).toContain(MARK);
    const onDiscord = await discord.waitFor(
      (r) => r.route === "createMessage" && JSON.stringify(r.body).toLowerCase().includes(address),
      10_000,
    );
    expect(footerOf(onDiscord)).toContain(MARK);
  }, 40_000);

  it("Discord over HTTP interactions: a command's footer and an alert's", async () => {
    const discord = await startFakeDiscord();
    cleanups.push(() => discord.close());
    const port = await freePort();
    const bot = await startBot({
      DATA_SERVICE: "simulator",
      DISCORD_TOKEN: discord.token,
      DISCORD_PUBLIC_KEY: discord.publicKey,
      DISCORD_API_URL: discord.apiBase,
      DISCORD_GUILD_ID: discord.guildId,
      HTTP_PORT: String(port),
      HTTP_HOST: "127.0.0.1",
    });
    const endpoint = `http://127.0.0.1:${port}/discord/interactions`;
    const slash = async (name: string, options: Record<string, string>) => {
      const payload = discord.slashCommand(name, options, {
        memberPermissions: PERMISSION.ManageChannels,
      });
      const delivery = await discord.postInteraction(endpoint, payload);
      expect(delivery.callback?.status).toBe(204);
      return discordAnswer(discord, payload, delivery.callback as RecordedRequest);
    };
    expect(footerOf(await slash("wallet", { wallet: "vitalik.eth" }))).toContain(MARK);
    expect(JSON.stringify((await slash("subscribe", {})).body)).toMatch(/Subscribed/);
    const address = await mintAfterPollerStarted(bot);
    const alert = await discord.waitFor(
      (r) => r.route === "createMessage" && JSON.stringify(r.body).toLowerCase().includes(address),
      10_000,
    );
    expect(footerOf(alert)).toContain(MARK);
  }, 40_000);

  it("the console chat (no settings at all): a command's footer and an alert's", async () => {
    const input = new PassThrough();
    const output = new PassThrough();
    let printed = "";
    output.on("data", (chunk: Buffer) => {
      printed += String(chunk);
    });
    const waitPrinted = async (pattern: RegExp, from: number) => {
      const until = Date.now() + 10_000;
      while (!pattern.test(printed.slice(from))) {
        if (Date.now() > until) throw new Error(`not printed: ${pattern}\n${printed.slice(from)}`);
        await new Promise((resolve) => setTimeout(resolve, 20));
      }
      return printed.slice(from);
    };
    const bot = await startBot({}, { input, output });
    cleanups.push(() => input.end());
    let from = printed.length;
    input.write("/wallet vitalik.eth\n");
    const wallet = await waitPrinted(/— [^\n]*\n/, from);
    expect(wallet).toMatch(/vitalik\.eth/);
    expect(/— ([^\n]*)\n/.exec(wallet)?.[1]).toContain(MARK);
    from = printed.length;
    input.write("/subscribe\n");
    await waitPrinted(/Subscribed/, from);
    from = printed.length;
    const address = await mintAfterPollerStarted(bot);
    const alert = await waitPrinted(new RegExp(`${address}[\\s\\S]*— [^\\n]*\\n`, "i"), from);
    expect(/— ([^\n]*)\n(?![\s\S]*— )/.exec(alert)?.[1]).toContain(MARK);
  }, 40_000);
});
