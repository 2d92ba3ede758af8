import { mkdtempSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { type Bot, createBot } from "../src/bot.ts";
import { parseConfig } from "../src/config.ts";
import { silentLogger } from "../src/log.ts";
import type { Simulator } from "../src/simulator/index.ts";
import {
  type FakeDiscord,
  MEMBER_PERMISSIONS,
  PERMISSION,
  startFakeDiscord,
} from "./fakes/discord/index.ts";
import { type FakeTelegram, groupChat, startFakeTelegram, user } from "./fakes/telegram/index.ts";
import { startTestSimulator } from "./test-simulator.ts";

const admin = user(3001, "Ada", "ada");
const member = user(3002, "Max", "max");
const group = groupChat(-7001, "Watchers");

/** The bot as `npm start` builds it, on Telegram: a watch's post goes through the adapter. */
describe("watches on Telegram", () => {
  let sim: Simulator;
  let telegram: FakeTelegram;
  let dataDir: string;
  let bot: Bot | undefined;

  const start = async () => {
    const config = parseConfig({
      API_BASE_URL: sim.url,
      API_KEY: sim.apiKey,
      DATA_DIR: dataDir,
      TELEGRAM_BOT_TOKEN: telegram.token,
      TELEGRAM_API_ROOT: telegram.apiRoot,
      WATCH_TICK_MS: "100",
      WATCHES_PER_CHAT: "2",
    });
    bot = await createBot(config, { logger: silentLogger() });
    await bot.start();
  };

  async function says(from: typeof admin, text: string): Promise<string> {
    const before = telegram.sent.length;
    telegram.pushUpdate(telegram.message(group, from, text));
    const call = await telegram.waitFor(
      (c) => c.seq > before && c.ok && c.method === "sendMessage",
      10_000,
    );
    return String(call.params.text);
  }

  beforeAll(async () => {
    sim = await startTestSimulator();
    telegram = await startFakeTelegram();
    telegram.setMemberStatus(group.id, admin.id, "administrator");
    telegram.setMemberStatus(group.id, member.id, "member");
    dataDir = mkdtempSync(join(tmpdir(), "bot-watches-"));
    await start();
  });
  afterAll(async () => {
    await bot?.stop();
    await telegram?.close();
    await sim?.close();
    rmSync(dataDir, { recursive: true, force: true });
  });

  it("an owner jump over the threshold is posted in the group once, and not again after a restart", async () => {
    const { collection } = sim.fixtures;
    expect(await says(member, `/watch collection ${collection} owners 5`)).toContain(
      "Only people who can manage this channel",
    );
    sim.bumpOwners(collection, 40);
    const before = telegram.sent.length;
    expect(await says(admin, `/watch collection ${collection} owners 5`)).toContain("Watching #1");
    const post = await telegram.waitFor(
      (c) =>
        c.seq > before &&
        c.ok &&
        c.method === "sendMessage" &&
        String(c.params.text).includes("Owner count rose"),
      10_000,
    );
    expect(post.params.chat_id).toBe(group.id);
    await expect
      .poll(async () => (await bot?.metrics.registry.metrics()) ?? "")
      .toMatch(/^bot_watch_posts_total 1$/m);
    // Anyone may list; the cap holds.
    expect(await says(member, "/watch list")).toContain("#1");
    expect(await says(admin, `/watch wallet ${sim.fixtures.wallet}`)).toContain("Watching #2");
    expect(await says(admin, `/watch collection ${sim.fixtures.erc1155Collection}`)).toContain(
      "the most it may have (2)",
    );

    await bot?.stop();
    const afterStop = telegram.sent.length;
    await start();
    // A few checker rounds after the restart (it ticks every 100 ms).
    await new Promise((resolve) => setTimeout(resolve, 600));
    const posts = telegram.sent
      .slice(afterStop)
      .filter((c) => c.method === "sendMessage" && String(c.params.text).includes("Owner count"));
    expect(posts).toEqual([]);
    const all = telegram.sent.filter(
      (c) => c.method === "sendMessage" && String(c.params.text).includes("Owner count rose"),
    );
    expect(all).toHaveLength(1);
  });
});

describe("watches on Discord", () => {
  let sim: Simulator;
  let discord: FakeDiscord;
  let dataDir: string;
  let bot: Bot | undefined;

  beforeAll(async () => {
    sim = await startTestSimulator();
    discord = await startFakeDiscord();
    dataDir = mkdtempSync(join(tmpdir(), "bot-watches-discord-"));
    const config = parseConfig({
      API_BASE_URL: sim.url,
      API_KEY: sim.apiKey,
      DATA_DIR: dataDir,
      DISCORD_TOKEN: discord.token,
      DISCORD_API_URL: discord.apiBase,
      DISCORD_GUILD_ID: discord.guildId,
      DISCORD_REGISTER_ON_START: "true",
      WATCH_TICK_MS: "100",
    });
    bot = await createBot(config, { logger: silentLogger() });
    await bot.start();
  });
  afterAll(async () => {
    await bot?.stop();
    await discord?.close();
    await sim?.close();
    rmSync(dataDir, { recursive: true, force: true });
  });

  async function slash(options: Record<string, string>, memberPermissions: bigint) {
    const payload = discord.sendInteraction(
      discord.slashCommand("watch", options, { channelId: discord.channelId, memberPermissions }),
    );
    const callback = await discord.waitForCallback(payload, 10_000);
    const body = callback.body as { type: number; data?: { embeds?: { description?: string }[] } };
    if (body.type === 5) {
      const edit = await discord.waitForOriginalEdit(payload, 10_000);
      return String(
        (edit.body as { embeds?: { description?: string }[] }).embeds?.[0]?.description ?? "",
      );
    }
    return String(body.data?.embeds?.[0]?.description ?? "");
  }

  it("the slash command with its options adds a watch (managers only) and the move is posted in the channel once", async () => {
    const { collection } = sim.fixtures;
    expect(
      await slash({ action: "collection", target: `${collection} whales 50` }, MEMBER_PERMISSIONS),
    ).toContain("Only people who can manage this channel");
    sim.bumpOwners(collection, -25);
    expect(
      await slash(
        { action: "collection", target: `${collection} owners 5` },
        MEMBER_PERMISSIONS | PERMISSION.ManageChannels,
      ),
    ).toContain("Watching #1");
    const post = await discord.waitFor(
      (r) => r.route === "createMessage" && JSON.stringify(r.body).includes("Owner count fell"),
      10_000,
    );
    // Sent with a nonce Discord enforces: a re-send after a crash is dropped.
    expect((post.body as { nonce?: string; enforce_nonce?: boolean }).enforce_nonce).toBe(true);
    await new Promise((resolve) => setTimeout(resolve, 500));
    const posts = discord.requests.filter(
      (r) => r.route === "createMessage" && JSON.stringify(r.body).includes("Owner count"),
    );
    expect(posts).toHaveLength(1);
  });
});
