import { mkdtempSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { afterEach, beforeEach, describe, expect, it } from "vitest";
import { type Bot, createBot } from "../src/bot.ts";
import { parseConfig } from "../src/config.ts";
import { silentLogger } from "../src/log.ts";
import { type Simulator, startSimulator } from "../src/simulator/index.ts";
import {
  type FakeDiscord,
  MEMBER_PERMISSIONS,
  PERMISSION,
  startFakeDiscord,
} from "./fakes/discord/index.ts";
import {
  type FakeTelegram,
  groupChat,
  startFakeTelegram,
  telegramErrors,
  user,
} from "./fakes/telegram/index.ts";

const CHANNEL_MANAGER = MEMBER_PERMISSIONS | PERMISSION.ManageChannels;
const admin = user(2001, "Ada", "ada");
const member = user(2002, "Max", "max");
const group = groupChat(-5001, "Mints");

let sim: Simulator;
let telegram: FakeTelegram;
let discord: FakeDiscord;
let bot: Bot;
let dataDir: string;

beforeEach(async () => {
  sim = await startSimulator();
  telegram = await startFakeTelegram();
  discord = await startFakeDiscord();
  dataDir = mkdtempSync(join(tmpdir(), "bot-alerts-"));
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
    POLL_INTERVAL_S: "1",
    DELIVERY_TICK_MS: "100",
  });
  bot = await createBot(config, { logger: silentLogger() });
});

afterEach(async () => {
  await bot.stop();
  await telegram.close();
  await discord.close();
  await sim.close();
  rmSync(dataDir, { recursive: true, force: true });
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

async function discordSubscribe(channelId: string, memberPermissions: bigint): Promise<string> {
  const payload = discord.sendInteraction(
    discord.slashCommand("subscribe", {}, { channelId, memberPermissions }),
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

/** Mints until an NFT contract (not a fungible one) is among them; returns its address. */
function mintCollection(): string {
  for (;;) {
    const nft = sim.mint(1).find((c) => !c.types.includes("TYPE_ERC20"));
    if (nft) return nft.address.toLowerCase();
  }
}

describe("alerts on Telegram and Discord", () => {
  it("a group admin and a Manage Channels member subscribe; a mint reaches both channels", async () => {
    expect(await telegramSays(member, "/subscribe")).toMatch(
      /Only people who can manage this channel/,
    );
    expect(await telegramSays(admin, "/subscribe")).toMatch(/Subscribed/);
    expect(await discordSubscribe(discord.channelId, MEMBER_PERMISSIONS)).toMatch(
      /Only people who can manage this channel/,
    );
    expect(await discordSubscribe(discord.channelId, CHANNEL_MANAGER)).toMatch(/Subscribed/);
    await expect
      .poll(() => bot.db.prepare("SELECT value FROM kv WHERE key = 'poll_cursor'").get(), {
        timeout: 5000,
      })
      .toBeTruthy();

    const address = mintCollection();
    const onTelegram = await telegram.waitFor(
      (c) =>
        c.ok && c.method === "sendMessage" && String(c.params.text).toLowerCase().includes(address),
      10_000,
    );
    expect(String(onTelegram.params.text)).toMatch(/New collection: /);
    expect(JSON.stringify(onTelegram.params.reply_markup)).toContain("Report spam");
    const onDiscord = await discord.waitFor(
      (r) => r.route === "createMessage" && JSON.stringify(r.body).toLowerCase().includes(address),
      10_000,
    );
    expect((onDiscord.body as { allowed_mentions?: unknown }).allowed_mentions).toEqual({
      parse: [],
    });
  });

  it("pauses a subscription when the platform says the channel is gone, visible in /subscriptions", async () => {
    expect(await telegramSays(admin, "/subscribe")).toMatch(/Subscribed/);
    expect(await discordSubscribe(discord.channelId, CHANNEL_MANAGER)).toMatch(/Subscribed/);
    await expect
      .poll(() => bot.db.prepare("SELECT value FROM kv WHERE key = 'poll_cursor'").get(), {
        timeout: 5000,
      })
      .toBeTruthy();
    discord.failChannel(discord.channelId, {
      status: 404,
      code: 10003,
      message: "Unknown Channel",
    });
    telegram.failNext("sendMessage", telegramErrors.kicked(), { chatId: group.id });
    mintCollection();
    await expect
      .poll(
        () =>
          bot.db
            .prepare("SELECT COUNT(*) AS n FROM subscriptions WHERE paused_at IS NOT NULL")
            .get(),
        { timeout: 10_000 },
      )
      .toEqual({ n: 2 });
    const reasons = bot.db
      .prepare("SELECT platform, pause_reason FROM subscriptions ORDER BY platform")
      .all();
    expect(reasons).toEqual([
      { platform: "discord", pause_reason: expect.stringMatching(/Unknown Channel/) },
      { platform: "telegram", pause_reason: expect.stringMatching(/kicked/) },
    ]);
    expect(await telegramSays(admin, "/subscriptions")).toMatch(/paused .*kicked/);
  });
});
