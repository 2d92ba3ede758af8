/**
 * /digest on Telegram and Discord through their fakes, with the bot's clock injected: managers
 * add digests (members are refused), and at the slot each platform's channel gets the digest,
 * chart included, once.
 */
import { mkdtempSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { type Bot, createBot } from "../src/bot.ts";
import { parseConfig } from "../src/config.ts";
import { digestStoreOf } from "../src/digests/store.ts";
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

const CHANNEL_MANAGER = MEMBER_PERMISSIONS | PERMISSION.ManageChannels;
const admin = user(2001, "Ada", "ada");
const member = user(2002, "Max", "max");
const group = groupChat(-5001, "Mints");

let sim: Simulator;
let telegram: FakeTelegram;
let discord: FakeDiscord;
let bot: Bot;
let dataDir: string;
// Monday 23 Nov 2026, 08:00 in Berlin.
let clock = Date.parse("2026-11-23T07:00:00Z");

beforeAll(async () => {
  sim = await startTestSimulator();
  telegram = await startFakeTelegram();
  discord = await startFakeDiscord();
  dataDir = mkdtempSync(join(tmpdir(), "bot-digests-platforms-"));
  telegram.setMemberStatus(group.id, admin.id, "administrator");
  telegram.setMemberStatus(group.id, member.id, "member");
  const config = parseConfig({
    API_BASE_URL: sim.url,
    API_KEY: sim.apiKey,
    DATA_DIR: dataDir,
    TELEGRAM_BOT_TOKEN: telegram.token,
    TELEGRAM_API_ROOT: telegram.apiRoot,
    DISCORD_TOKEN: discord.token,
    DISCORD_API_URL: discord.apiBase,
    DISCORD_GUILD_ID: discord.guildId,
    DISCORD_REGISTER_ON_START: "true",
    DIGEST_TICK_MS: "100",
  });
  bot = await createBot(config, { logger: silentLogger(), now: () => clock });
  await bot.start();
});
afterAll(async () => {
  await bot?.stop();
  await telegram?.close();
  await discord?.close();
  await sim?.close();
  if (dataDir) rmSync(dataDir, { recursive: true, force: true });
});

async function telegramSays(from: typeof admin, text: string): Promise<string> {
  const before = telegram.sent.length;
  telegram.pushUpdate(telegram.message(group, from, text));
  const call = await telegram.waitFor(
    (c) => c.seq > before && c.ok && c.method === "sendMessage",
    10_000,
  );
  return String(call.params.text);
}

async function discordDigest(
  options: Record<string, string>,
  permissions: bigint,
): Promise<string> {
  const payload = discord.sendInteraction(
    discord.slashCommand("digest", options, {
      channelId: discord.channelId,
      memberPermissions: permissions,
    }),
  );
  const callback = await discord.waitForCallback(payload, 10_000);
  const body = callback.body as { type: number; data?: { embeds?: { description?: string }[] } };
  if (body.type === 5) {
    const edit = await discord.waitForOriginalEdit(payload, 10_000);
    return JSON.stringify(edit.body);
  }
  return JSON.stringify(body.data);
}

describe("/digest on Telegram and Discord", () => {
  it("managers add digests, members are refused, and each channel gets its digest once at the slot", async () => {
    expect(await telegramSays(member, "/digest add daily 09:00 Europe/Berlin")).toContain(
      "Only people who can manage this channel",
    );
    expect(
      await telegramSays(admin, "/digest add daily 09:00 Europe/Berlin top volume 1d"),
    ).toMatch(/Digest \d+ added/);
    expect(await telegramSays(member, "/digest list")).toContain("daily at 09:00 Europe/Berlin");

    expect(
      await discordDigest(
        { action: "add", spec: "weekly mon 09:00 Europe/Berlin" },
        MEMBER_PERMISSIONS,
      ),
    ).toContain("Only people who can manage this channel");
    expect(
      await discordDigest(
        { action: "add", spec: "weekly mon 09:00 Europe/Berlin top sales 7d" },
        CHANNEL_MANAGER,
      ),
    ).toMatch(/Digest \d+ added/);
    expect(await digestStoreOf(bot.store).all()).toHaveLength(2);

    // 09:00 Berlin.
    clock = Date.parse("2026-11-23T08:00:05Z");
    const onTelegram = await telegram.waitFor(
      (c) => c.ok && JSON.stringify(c.params).includes("Daily digest for 23 Nov 2026"),
      10_000,
    );
    expect(onTelegram.method).toBe("sendPhoto");
    const onDiscord = await discord.waitFor(
      (r) =>
        r.route === "createMessage" &&
        JSON.stringify(r.body).includes("Weekly digest for Mon 23 Nov 2026"),
      10_000,
    );
    expect(JSON.stringify(onDiscord.body)).toContain("Top collections by number of sales");
    // Some ticks later: still one each.
    await new Promise((resolve) => setTimeout(resolve, 500));
    expect(
      telegram.sent.filter((c) => c.ok && JSON.stringify(c.params).includes("Daily digest for")),
    ).toHaveLength(1);
    expect(
      discord.requests.filter(
        (r) => r.route === "createMessage" && JSON.stringify(r.body).includes("Weekly digest for"),
      ),
    ).toHaveLength(1);
  });
});
