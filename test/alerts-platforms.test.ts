import { mkdtempSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import type { Chat } from "grammy/types";
import { describe, test } from "vitest";
import { createBot } from "../src/bot.ts";
import { parseConfig } from "../src/config.ts";
import { silentLogger } from "../src/log.ts";
import { MEMBER_PERMISSIONS, PERMISSION, startFakeDiscord } from "./fakes/discord/index.ts";
import {
  groupChat,
  type RecordedCall,
  startFakeTelegram,
  supergroupChat,
  telegramErrors,
  user,
} from "./fakes/telegram/index.ts";
import { sqliteDbOf } from "./helpers.ts";
import { startTestSimulator } from "./test-simulator.ts";

const CHANNEL_MANAGER = MEMBER_PERMISSIONS | PERMISSION.ManageChannels;
const admin = user(2001, "Ada", "ada");
const member = user(2002, "Max", "max");
const group = groupChat(-5001, "Mints");
const supergroup = supergroupChat(-1005001, "Mints");

/** One test's simulator, fakes and bot (each test its own), and what the tests do with them. */
async function startWorld() {
  const sim = await startTestSimulator();
  const telegram = await startFakeTelegram();
  const discord = await startFakeDiscord();
  const dataDir = mkdtempSync(join(tmpdir(), "bot-alerts-"));
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
  const bot = await createBot(config, { logger: silentLogger() });
  await bot.start();

  async function telegramSays(
    from: typeof admin,
    text: string,
    chat: Chat = group,
  ): Promise<string> {
    const before = telegram.sent.length;
    telegram.pushUpdate(telegram.message(chat, from, text));
    const call = await telegram.waitFor(
      (c) => c.seq > before && c.ok && c.method === "sendMessage",
      30_000,
    );
    return String(call.params.text);
  }

  async function discordSubscribe(channelId: string, memberPermissions: bigint): Promise<string> {
    return discordSlash("subscribe", {}, channelId, memberPermissions);
  }

  /** A slash command in a channel; the reply's first embed's description. */
  async function discordSlash(
    name: string,
    options: Record<string, string>,
    channelId: string,
    memberPermissions: bigint,
  ): Promise<string> {
    const payload = discord.sendInteraction(
      discord.slashCommand(name, options, { channelId, memberPermissions }),
    );
    const callback = await discord.waitForCallback(payload, 30_000);
    const body = callback.body as { type: number; data?: { embeds?: { description?: string }[] } };
    if (body.type === 5) {
      const edit = await discord.waitForOriginalEdit(payload, 30_000);
      return String(
        (edit.body as { embeds?: { description?: string }[] }).embeds?.[0]?.description ?? "",
      );
    }
    return String(body.data?.embeds?.[0]?.description ?? "");
  }

  /** Mints until an NFT contract (not a fungible one) is among them; returns its address. */
  function mintCollection(minter?: "badactor"): string {
    for (;;) {
      const nft = sim
        .mint(1, undefined, minter ? { minter } : {})
        .find((c) => !c.types.includes("TYPE_ERC20"));
      if (nft) return nft.address.toLowerCase();
    }
  }

  /** Waits until the poller has its cursor: mints from now on are alerted. */
  async function pollerStarted(): Promise<void> {
    // Not expect.poll: the file's global expect belongs to no test once more tests run at once
    // than vitest's maxConcurrency (5), and a concurrent test that waits then fails.
    const until = Date.now() + 5000;
    const cursor = () =>
      sqliteDbOf(bot).prepare("SELECT value FROM kv WHERE key = 'poll_cursor:ethereum'").get();
    while (!cursor()) {
      if (Date.now() > until) throw new Error("the poller did not start within 5 s");
      await new Promise((resolve) => setTimeout(resolve, 50));
    }
  }

  return {
    sim,
    telegram,
    discord,
    bot,
    telegramSays,
    discordSubscribe,
    discordSlash,
    mintCollection,
    pollerStarted,
    async close() {
      await bot.stop();
      await telegram.close();
      await discord.close();
      await sim.close();
      rmSync(dataDir, { recursive: true, force: true });
    },
  };
}

/**
 * The tests share nothing (each its own simulator, fakes, DATA_DIR and bot) and mostly wait (on
 * the poll interval and Telegram's per-group pacing): they run at once, each with its world.
 */
const it = test.extend<{ world: Awaited<ReturnType<typeof startWorld>> }>({
  // biome-ignore lint/correctness/noEmptyPattern: vitest reads a fixture's dependencies from this pattern.
  world: async ({}, use) => {
    const world = await startWorld();
    await use(world);
    await world.close();
  },
});

// Concurrent worlds, each a bot and two fake platforms: on a loaded 2-core machine their waits
// stretch (a run of the whole suite saw 20 s), so they get time enough.
describe.concurrent("alerts on Telegram and Discord", { timeout: 60_000 }, () => {
  it("a group admin and a Manage Channels member subscribe; a mint reaches both channels", async ({
    world,
    expect,
  }) => {
    const { telegram, discord, bot, telegramSays, discordSubscribe, mintCollection } = world;
    expect(await telegramSays(member, "/subscribe")).toMatch(
      /Only people who can manage this channel/,
    );
    expect(await telegramSays(admin, "/subscribe")).toMatch(/Subscribed/);
    expect(await discordSubscribe(discord.channelId, MEMBER_PERMISSIONS)).toMatch(
      /Only people who can manage this channel/,
    );
    expect(await discordSubscribe(discord.channelId, CHANNEL_MANAGER)).toMatch(/Subscribed/);
    await expect
      .poll(
        () =>
          sqliteDbOf(bot).prepare("SELECT value FROM kv WHERE key = 'poll_cursor:ethereum'").get(),
        {
          timeout: 5000,
        },
      )
      .toBeTruthy();

    const address = mintCollection();
    const onTelegram = await telegram.waitFor(
      (c) =>
        c.ok && c.method === "sendMessage" && String(c.params.text).toLowerCase().includes(address),
      30_000,
    );
    expect(String(onTelegram.params.text)).toMatch(/New collection: /);
    expect(JSON.stringify(onTelegram.params.reply_markup)).toContain("Report spam");
    const onDiscord = await discord.waitFor(
      (r) => r.route === "createMessage" && JSON.stringify(r.body).toLowerCase().includes(address),
      30_000,
    );
    expect((onDiscord.body as { allowed_mentions?: unknown }).allowed_mentions).toEqual({
      parse: [],
    });
  });

  it("a bad actor's mint: marked as likely spam where the channel chose badactors:show, not posted where it hides them", async ({
    world,
    expect,
  }) => {
    const { telegram, discord, telegramSays, discordSubscribe, mintCollection, pollerStarted } =
      world;
    expect(await telegramSays(admin, "/subscribe badactors:show")).toMatch(
      /posted, marked as likely spam/,
    );
    expect(await telegramSays(admin, "/subscriptions")).toMatch(/Posted, marked as likely spam/);
    expect(await discordSubscribe(discord.channelId, CHANNEL_MANAGER)).toMatch(/not posted/);
    await pollerStarted();
    const bad = mintCollection("badactor");
    const onTelegram = await telegram.waitFor(
      (c) =>
        c.ok && c.method === "sendMessage" && String(c.params.text).toLowerCase().includes(bad),
      30_000,
    );
    expect(String(onTelegram.params.text)).toMatch(/Likely spam: new collection: /);
    expect(String(onTelegram.params.text)).toMatch(/Bad actor \(has minted spam collections\)/);
    // The next ordinary mint reaches Discord with its minter's label; the bad actor's never did.
    const ordinary = mintCollection();
    const onDiscord = await discord.waitFor(
      (r) => r.route === "createMessage" && JSON.stringify(r.body).toLowerCase().includes(ordinary),
      30_000,
    );
    expect(JSON.stringify(onDiscord.body)).toContain("Minter behavior");
    expect(
      discord.requests.filter(
        (r) => r.route === "createMessage" && JSON.stringify(r.body).toLowerCase().includes(bad),
      ),
    ).toEqual([]);
  });

  it("channel rules on both platforms: managers change them, anyone reads them", async ({
    world,
    expect,
  }) => {
    const { discord, telegramSays, discordSubscribe, discordSlash } = world;
    expect(await telegramSays(admin, "/subscribe")).toMatch(/Subscribed/);
    expect(await telegramSays(member, "/alerts digest 5")).toMatch(
      /Only people who can manage this channel/,
    );
    expect(await telegramSays(admin, "/alerts digest 5")).toMatch(/one digest every 5 minutes/);
    expect(await telegramSays(member, "/alerts show")).toMatch(/one digest every 5 minutes/);
    expect(await discordSubscribe(discord.channelId, CHANNEL_MANAGER)).toMatch(/Subscribed/);
    const quiet = { action: "quiet", value: "23:00-07:00 Europe/Berlin" };
    expect(await discordSlash("alerts", quiet, discord.channelId, MEMBER_PERMISSIONS)).toMatch(
      /Only people who can manage this channel/,
    );
    expect(await discordSlash("alerts", quiet, discord.channelId, CHANNEL_MANAGER)).toMatch(
      /Quiet hours: 23:00 to 07:00 Europe\/Berlin/,
    );
    expect(
      await discordSlash("alerts", { action: "show" }, discord.channelId, MEMBER_PERMISSIONS),
    ).toMatch(/Quiet hours: 23:00 to 07:00 Europe\/Berlin[\s\S]*each mint as it comes/);
  });

  it("pauses a subscription when the platform says the channel is gone, visible in /subscriptions", async ({
    world,
    expect,
  }) => {
    const { telegram, discord, bot, telegramSays, discordSubscribe, mintCollection } = world;
    expect(await telegramSays(admin, "/subscribe")).toMatch(/Subscribed/);
    expect(await discordSubscribe(discord.channelId, CHANNEL_MANAGER)).toMatch(/Subscribed/);
    await expect
      .poll(
        () =>
          sqliteDbOf(bot).prepare("SELECT value FROM kv WHERE key = 'poll_cursor:ethereum'").get(),
        {
          timeout: 5000,
        },
      )
      .toBeTruthy();
    discord.failChannel(discord.channelId, {
      status: 404,
      code: 10003,
      message: "Unknown Channel",
    });
    telegram.failNext("sendMessage", telegramErrors.kicked(), { chatId: group.id });
    mintCollection();
    await expect
      .poll(() => sqliteDbOf(bot).prepare("SELECT COUNT(*) AS n FROM chat_pauses").get(), {
        timeout: 30_000,
      })
      .toEqual({ n: 2 });
    const reasons = sqliteDbOf(bot)
      .prepare("SELECT platform, pause_reason FROM chat_pauses ORDER BY platform")
      .all();
    expect(reasons).toEqual([
      { platform: "discord", pause_reason: expect.stringMatching(/Unknown Channel/) },
      { platform: "telegram", pause_reason: expect.stringMatching(/kicked/) },
    ]);
    expect(await telegramSays(admin, "/subscriptions")).toMatch(/paused .*kicked/);
  });
});

const sendsTo =
  (chat: Chat, after = 0) =>
  (c: RecordedCall) =>
    c.seq > after && c.method === "sendMessage" && c.params.chat_id === chat.id;

const mentions = (address: string) => (c: RecordedCall) =>
  String(c.params.text).toLowerCase().includes(address);

describe.concurrent("Telegram groups that change under the bot", { timeout: 60_000 }, () => {
  it("a group upgraded to a supergroup: the next alert arrives at the new id, where /subscriptions says active", async ({
    world,
    expect,
  }) => {
    const { telegram, telegramSays, mintCollection, pollerStarted } = world;
    expect(await telegramSays(admin, "/subscribe")).toMatch(/Subscribed/);
    await pollerStarted();
    // The service message is not delivered here: the refused send alone leads to the new id.
    telegram.upgradeToSupergroup(group.id, supergroup.id);
    const address = mintCollection();
    const moved = await telegram.waitFor(
      (c) => c.ok && sendsTo(supergroup)(c) && mentions(address)(c),
      30_000,
    );
    const refused = telegram.sent.filter((c) => sendsTo(group)(c) && !c.ok);
    expect(refused).toHaveLength(1);
    expect(refused[0]?.error?.description).toMatch(/upgraded to a supergroup/);
    expect(await telegramSays(admin, "/subscriptions", supergroup)).toMatch(/Status.*active/s);
    // The alert's button was stored for the chat it went to.
    const markup = moved.params.reply_markup as {
      inline_keyboard: { callback_data: string }[][];
    };
    const data = markup.inline_keyboard[0]?.[0]?.callback_data ?? "";
    const before = telegram.sent.length;
    telegram.pushUpdate(telegram.callbackQuery(supergroup, admin, data));
    const answer = await telegram.waitFor(
      (c) => c.seq > before && (c.method === "sendMessage" || c.method === "answerCallbackQuery"),
      30_000,
    );
    expect(JSON.stringify(answer.params)).not.toMatch(/another chat|expired/);
  });

  it("a group upgraded to a supergroup: the refused alert moves the group's watches with its subscription", async ({
    world,
    expect,
  }) => {
    const { telegram, telegramSays, mintCollection, pollerStarted } = world;
    expect(await telegramSays(admin, "/subscribe")).toMatch(/Subscribed/);
    expect(await telegramSays(admin, "/watch wallet vitalik.eth")).toMatch(/Watching #\d+/);
    await pollerStarted();
    telegram.upgradeToSupergroup(group.id, supergroup.id);
    const address = mintCollection();
    await telegram.waitFor((c) => c.ok && sendsTo(supergroup)(c) && mentions(address)(c), 30_000);
    // Everything of the chat follows the new id, whichever part learnt of the move first.
    expect(await telegramSays(admin, "/watch list", supergroup)).toMatch(/#\d+ .*vitalik\.eth/i);
  });

  it("the upgrade's service message moves the subscription before any alert fails", async ({
    world,
    expect,
  }) => {
    const { telegram, bot, telegramSays, mintCollection, pollerStarted } = world;
    expect(await telegramSays(admin, "/subscribe")).toMatch(/Subscribed/);
    await pollerStarted();
    const before = telegram.sent.length;
    telegram.pushUpdate(telegram.upgradeToSupergroup(group.id, supergroup.id, admin));
    await expect
      .poll(() => sqliteDbOf(bot).prepare("SELECT chat_id FROM subscriptions").all(), {
        timeout: 5000,
      })
      .toEqual([{ chat_id: String(supergroup.id) }]);
    const address = mintCollection();
    await telegram.waitFor((c) => c.ok && sendsTo(supergroup)(c) && mentions(address)(c), 30_000);
    expect(telegram.sent.filter(sendsTo(group, before))).toHaveLength(0);
  });

  it("a group where the bot may not write: paused with the reason, and nothing more is sent", async ({
    world,
    expect,
  }) => {
    const { telegram, bot, telegramSays, mintCollection, pollerStarted } = world;
    expect(await telegramSays(admin, "/subscribe")).toMatch(/Subscribed/);
    await pollerStarted();
    telegram.revokeSendRights(group.id);
    mintCollection();
    await expect
      .poll(() => sqliteDbOf(bot).prepare("SELECT pause_reason FROM chat_pauses").get(), {
        timeout: 30_000,
      })
      .toEqual({ pause_reason: expect.stringMatching(/not enough rights to send text messages/) });
    const attempts = () => telegram.sent.filter(sendsTo(group)).filter((c) => !c.ok).length;
    expect(attempts()).toBe(1);
    const seen = () =>
      (sqliteDbOf(bot).prepare("SELECT COUNT(*) AS n FROM seen_contracts").get() as { n: number })
        .n;
    const before = seen();
    mintCollection();
    mintCollection();
    await expect.poll(seen, { timeout: 30_000 }).toBeGreaterThanOrEqual(before + 2);
    await bot.delivery.drain();
    expect(attempts()).toBe(1);
    const status = await bot.runtime.runText(
      {
        id: "inv",
        platform: "telegram",
        user: { id: String(admin.id), name: "ada" },
        chat: { id: String(group.id), kind: "group" },
        canManageChannel: async () => true,
      },
      "subscriptions",
      "",
    );
    expect(status.fields?.find((f) => f.name === "Status")?.value).toMatch(
      /^paused .*not enough rights to send text messages/,
    );
  });
});
