/**
 * A chat that refuses the bot (Telegram: kicked; Discord: Unknown Channel) pauses its watches and
 * digests as it pauses subscriptions: a paused wallet watch reads nothing from the data service, a
 * paused digest is not attempted nor logged as failed every day; /watch list and /digest list say
 * so with the platform's reason; using the bot in the chat resumes them, and the owed post goes out.
 * The bot as `npm start` builds it, through the fake platforms and the simulator.
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
import { watchStoreOf } from "../src/watches/store.ts";
import type { Watch } from "../src/watches/types.ts";
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
import { capturingLogger, worldEnv } from "./helpers.ts";
import { startTestSimulator } from "./test-simulator.ts";

const admin = user(4001, "Ada", "ada");
const dead = groupChat(-8001, "Kicked us");
const alive = groupChat(-8002, "Still here");
const wallet = `0x${"de".repeat(2)}${"0".repeat(32)}a11e`;
const control = `0x${"de".repeat(2)}${"0".repeat(32)}c0de`;

/** Reads of a wallet's NFTs the simulator has answered. */
const readsOf = (sim: Simulator, target: string) =>
  sim.requests.filter((r) => r.path.endsWith("/nfts") && r.path.toLowerCase().includes(target))
    .length;

/**
 * The watch made due now (as if last read 5 minutes ago), once its last read is stored, its owed
 * post kept.
 */
async function makeDue(bot: Bot, id: number): Promise<void> {
  const stored = async () => (await watchStoreOf(bot.store).all()).find((w) => w.id === id);
  const readAt = async () => {
    const state = (await stored())?.state;
    return state ? ((JSON.parse(state) as { nftsAt?: number }).nftsAt ?? 0) : 0;
  };
  // The read before (or the last makeDue's) is stored: the checker will not overwrite this one.
  await expect.poll(readAt, { timeout: 10_000 }).toBeGreaterThan(0);
  const watch = (await stored()) as Watch;
  const state = JSON.parse(watch.state ?? "{}") as Record<string, unknown>;
  await watchStoreOf(bot.store).advance(id, JSON.stringify({ ...state, nftsAt: 0 }), watch.pending);
}

async function watchOf(bot: Bot, chatId: number | string): Promise<Watch> {
  const [watch] = await watchStoreOf(bot.store).forChat("telegram", String(chatId));
  if (!watch) throw new Error(`no watch in ${chatId}`);
  return watch;
}

describe("a Telegram group that kicked the bot", () => {
  let sim: Simulator;
  let telegram: FakeTelegram;
  let dataDir: string;
  let bot: Bot;
  let lines: string[];
  // Monday 23 Nov 2026, 08:00 UTC: the digests' clock (the watches keep the real one).
  let clock = Date.parse("2026-11-23T08:00:00Z");

  beforeAll(async () => {
    sim = await startTestSimulator();
    telegram = await startFakeTelegram();
    for (const chat of [dead, alive]) telegram.setMemberStatus(chat.id, admin.id, "administrator");
    dataDir = mkdtempSync(join(tmpdir(), "bot-dead-chat-"));
    const captured = capturingLogger();
    lines = captured.lines;
    bot = await createBot(
      parseConfig(
        worldEnv({ sim, dataDir, telegram }, { WATCH_TICK_MS: "100", DIGEST_TICK_MS: "100" }),
      ),
      { logger: captured.logger, now: () => clock },
    );
    await bot.start();
  });
  afterAll(async () => {
    await bot?.stop();
    await telegram?.close();
    await sim?.close();
    rmSync(dataDir, { recursive: true, force: true });
  });

  async function says(chat: typeof dead, text: string): Promise<string> {
    const before = telegram.sent.length;
    telegram.pushUpdate(telegram.message(chat, admin, text));
    const call = await telegram.waitFor(
      (c) => c.seq > before && c.ok && c.method === "sendMessage" && c.params.chat_id === chat.id,
      10_000,
    );
    return String(call.params.text);
  }

  it("pauses a wallet watch (no more reads) and shows why; used again, it resumes and posts", async () => {
    expect(await says(dead, `/watch wallet ${wallet}`)).toContain("Watching #");
    expect(await says(alive, `/watch wallet ${control}`)).toContain("Watching #");
    // The first reads: what the wallets hold when the watches begin.
    await expect.poll(() => readsOf(sim, wallet), { timeout: 10_000 }).toBe(1);
    await expect.poll(() => readsOf(sim, control), { timeout: 10_000 }).toBe(1);

    telegram.failNext("*", telegramErrors.kicked(), { chatId: dead.id, times: 1 });
    sim.giveNft(wallet);
    await makeDue(bot, (await watchOf(bot, dead.id)).id);
    await expect
      .poll(async () => (await watchOf(bot, dead.id)).pauseReason, { timeout: 10_000 })
      .toBe("Telegram: Forbidden: bot was kicked from the supergroup chat");
    const paused = await watchOf(bot, dead.id);
    expect(paused.pending).not.toBeNull();
    expect(readsOf(sim, wallet)).toBe(2);

    // Both due again: the checker reads the live group's wallet, never the paused one's.
    await makeDue(bot, paused.id);
    await makeDue(bot, (await watchOf(bot, alive.id)).id);
    await expect.poll(() => readsOf(sim, control), { timeout: 10_000 }).toBe(2);
    await makeDue(bot, (await watchOf(bot, alive.id)).id);
    await expect.poll(() => readsOf(sim, control), { timeout: 10_000 }).toBe(3);
    expect(readsOf(sim, wallet)).toBe(2);

    // A manager looks: the pause and its reason; the bot answered there, so the watch resumes
    // and the post it owed goes out.
    expect(await says(dead, "/watch list")).toMatch(
      /paused .*: the chat refused the bot \(Telegram: Forbidden: bot was kicked from the supergroup chat\); using the bot here resumes it/,
    );
    const post = await telegram.waitFor(
      (c) => c.ok && c.params.chat_id === dead.id && String(c.params.text).includes("A new NFT"),
      10_000,
    );
    expect(post.method).toBe("sendMessage");
    expect((await watchOf(bot, dead.id)).pausedAt).toBeNull();
  });

  it("pauses a digest: not attempted nor logged as failed each day; used again, the next slot posts", async () => {
    expect(await says(dead, "/digest add daily 09:00 UTC")).toMatch(/Digest \d+ added/);
    telegram.failNext("*", telegramErrors.kicked(), { chatId: dead.id, times: 1 });
    const tries = () =>
      telegram.sent.filter(
        (c) => c.params.chat_id === dead.id && JSON.stringify(c.params).includes("Daily digest"),
      ).length;
    clock = Date.parse("2026-11-23T09:00:05Z");
    await expect
      .poll(async () => (await digestStoreOf(bot.store).all())[0]?.pauseReason, { timeout: 10_000 })
      .toBe("Telegram: Forbidden: bot was kicked from the supergroup chat");
    expect(tries()).toBe(1);
    const logged = lines.length;
    // Three more days of slots, each given a few ticks.
    for (let day = 1; day <= 3; day++) {
      clock = Date.parse(`2026-11-2${3 + day}T09:00:05Z`);
      await new Promise((resolve) => setTimeout(resolve, 400));
    }
    expect(tries()).toBe(1);
    expect(
      lines
        .slice(logged)
        .filter((line) => /"part":"digests"/.test(line) && /"level":50/.test(line)),
    ).toEqual([]);

    expect(await says(dead, "/digest list")).toMatch(
      /Paused .*: the chat refused the bot \(Telegram: Forbidden: bot was kicked from the supergroup chat\); using the bot here resumes it\./,
    );
    await expect
      .poll(async () => (await digestStoreOf(bot.store).all())[0]?.pausedAt, { timeout: 10_000 })
      .toBeNull();
    await telegram.waitFor(
      (c) =>
        c.ok &&
        c.params.chat_id === dead.id &&
        JSON.stringify(c.params).includes("Daily digest for 26 Nov 2026"),
      10_000,
    );
  });
});

describe("a Discord channel that was deleted", () => {
  let sim: Simulator;
  let discord: FakeDiscord;
  let dataDir: string;
  let bot: Bot;
  let clock = Date.parse("2026-11-23T08:00:00Z");

  beforeAll(async () => {
    sim = await startTestSimulator();
    discord = await startFakeDiscord();
    dataDir = mkdtempSync(join(tmpdir(), "bot-dead-channel-"));
    bot = await createBot(
      parseConfig(
        worldEnv({ sim, dataDir, discord }, { WATCH_TICK_MS: "100", DIGEST_TICK_MS: "100" }),
      ),
      { logger: silentLogger(), now: () => clock },
    );
    await bot.start();
  });
  afterAll(async () => {
    await bot?.stop();
    await discord?.close();
    await sim?.close();
    rmSync(dataDir, { recursive: true, force: true });
  });

  async function slash(command: string, options: Record<string, string>): Promise<string> {
    const payload = discord.sendInteraction(
      discord.slashCommand(command, options, {
        channelId: discord.channelId,
        memberPermissions: MEMBER_PERMISSIONS | PERMISSION.ManageChannels,
      }),
    );
    const callback = await discord.waitForCallback(payload, 10_000);
    const body = callback.body as { type: number; data?: unknown };
    if (body.type === 5) return JSON.stringify((await discord.waitForOriginalEdit(payload)).body);
    return JSON.stringify(body.data);
  }

  it("Unknown Channel pauses the channel's digest, shown in /digest list; Missing Access pauses its watch", async () => {
    expect(await slash("digest", { action: "add", spec: "daily 09:00 UTC" })).toMatch(
      /Digest \d+ added/,
    );
    discord.failChannel(discord.channelId, { status: 404, code: 10003, times: 1 });
    clock = Date.parse("2026-11-23T09:00:05Z");
    await expect
      .poll(async () => (await digestStoreOf(bot.store).all())[0]?.pauseReason, { timeout: 10_000 })
      .toBe("Discord: Unknown Channel");
    expect(await slash("digest", { action: "list" })).toContain(
      "the chat refused the bot (Discord: Unknown Channel)",
    );
    // Used in the channel again: the digest resumes and the slot it owed goes out.
    await discord.waitFor(
      (r) =>
        r.route === "createMessage" &&
        r.status === 200 &&
        JSON.stringify(r.body).includes("Daily digest for 23 Nov 2026"),
      10_000,
    );

    expect(await slash("watch", { action: "wallet", target: wallet })).toContain("Watching #");
    await expect.poll(() => readsOf(sim, wallet), { timeout: 10_000 }).toBe(1);
    discord.failChannel(discord.channelId, { status: 403, code: 50001, times: 1 });
    sim.giveNft(wallet);
    const [watch] = await watchStoreOf(bot.store).all();
    if (!watch) throw new Error("no watch");
    await makeDue(bot, watch.id);
    await expect
      .poll(async () => (await watchStoreOf(bot.store).all())[0]?.pauseReason, { timeout: 10_000 })
      .toBe("Discord: Missing Access");
    expect(await slash("watch", { action: "list" })).toContain(
      "the chat refused the bot (Discord: Missing Access)",
    );
  });
});
