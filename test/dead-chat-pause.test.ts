/**
 * The pause belongs to the chat (issue 34, item 7). A Telegram group holds a wallet watch, a
 * digest and an alert subscription; the group kicks the bot, and the first feature to meet the
 * refusal (the digest) pauses the whole chat: over several of the watch checker's rounds the
 * paused chat's wallet is never read from the data service, no alert, digest or watch post is
 * even attempted there, while another group's watch and alerts go on. One command from the group
 * resumes everything: its owed digest slot posts, its wallet is read again (and the NFT it got
 * meanwhile is posted), and new alerts reach it.
 *
 * The bot as `npm start` builds it, through the fake Telegram and the simulator over loopback,
 * on SQLite and on PostgreSQL.
 */
import { mkdtempSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { alertStoresOf } from "../src/alerts/store/index.ts";
import { type Bot, createBot } from "../src/bot.ts";
import { parseConfig } from "../src/config.ts";
import { digestStoreOf } from "../src/digests/store.ts";
import { silentLogger } from "../src/log.ts";
import type { Simulator } from "../src/simulator/index.ts";
import { watchStoreOf } from "../src/watches/store.ts";
import type { Watch } from "../src/watches/types.ts";
import {
  type FakeTelegram,
  groupChat,
  startFakeTelegram,
  telegramErrors,
  user,
} from "./fakes/telegram/index.ts";
import { worldEnv } from "./helpers.ts";
import { POSTGRES_URL, postgresAvailable } from "./services.ts";
import { dropSchema, freshSchemaName } from "./store/backends.ts";
import { startTestSimulator } from "./test-simulator.ts";

const admin = user(4101, "Ada", "ada");
const dead = groupChat(-8101, "Kicked us");
const alive = groupChat(-8102, "Still here");
const wallet = `0x${"d1".repeat(2)}${"0".repeat(32)}a11e`;
const control = `0x${"d1".repeat(2)}${"0".repeat(32)}c0de`;
const KICKED = "Telegram: Forbidden: bot was kicked from the supergroup chat";

/** Reads of a wallet's NFTs the simulator has answered. */
const readsOf = (sim: Simulator, target: string) =>
  sim.requests.filter((r) => r.path.endsWith("/nfts") && r.path.toLowerCase().includes(target))
    .length;

const backends = [
  { name: "SQLite", env: () => ({}), cleanup: async () => {} },
  ...((await postgresAvailable())
    ? [
        (() => {
          const schema = freshSchemaName();
          return {
            name: "PostgreSQL",
            env: () => ({ DATABASE_URL: POSTGRES_URL, DATABASE_SCHEMA: schema }),
            cleanup: () => dropSchema(schema),
          };
        })(),
      ]
    : []),
];

describe.each(backends)("a chat that refuses the bot, on $name", (backend) => {
  let sim: Simulator;
  let telegram: FakeTelegram;
  let dataDir: string;
  let bot: Bot;
  // Monday 23 Nov 2026, 08:00 UTC: the digests' clock (the watches keep the real one).
  let clock = Date.parse("2026-11-23T08:00:00Z");

  beforeAll(async () => {
    sim = await startTestSimulator();
    telegram = await startFakeTelegram();
    for (const chat of [dead, alive]) telegram.setMemberStatus(chat.id, admin.id, "administrator");
    dataDir = mkdtempSync(join(tmpdir(), "bot-chat-pause-"));
    bot = await createBot(
      parseConfig(
        worldEnv(
          { sim, dataDir, telegram },
          {
            WATCH_TICK_MS: "100",
            DIGEST_TICK_MS: "100",
            POLL_INTERVAL_S: "1",
            DELIVERY_TICK_MS: "100",
            ...backend.env(),
          },
        ),
      ),
      { logger: silentLogger(), now: () => clock },
    );
    await bot.start();
  });
  afterAll(async () => {
    await bot?.stop();
    await telegram?.close();
    await sim?.close();
    rmSync(dataDir, { recursive: true, force: true });
    await backend.cleanup();
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

  /** Every call the bot made towards the dead group, answered or refused. */
  const attemptsAtDead = () => telegram.sent.filter((c) => c.params.chat_id === dead.id).length;

  async function watchOf(chatId: number): Promise<Watch> {
    const [watch] = await watchStoreOf(bot.store).forChat("telegram", String(chatId));
    if (!watch) throw new Error(`no watch in ${chatId}`);
    return watch;
  }

  /** The watch made due now, as if last read long ago (its other state kept). */
  async function setDue(id: number): Promise<void> {
    const watch = (await watchStoreOf(bot.store).all()).find((w) => w.id === id) as Watch;
    const state = JSON.parse(watch.state ?? "{}") as Record<string, unknown>;
    await watchStoreOf(bot.store).advance(
      id,
      JSON.stringify({ ...state, nftsAt: 0 }),
      watch.pending,
    );
  }

  /** One more of the checker's rounds, seen through the live group's watch being read again. */
  async function aRound(): Promise<void> {
    const id = (await watchOf(alive.id)).id;
    const readAt = async () =>
      (JSON.parse((await watchOf(alive.id)).state ?? "{}") as { nftsAt?: number }).nftsAt ?? 0;
    // Its read before is stored: the checker will not overwrite this one.
    await expect.poll(readAt, { timeout: 10_000 }).toBeGreaterThan(0);
    const before = readsOf(sim, control);
    await setDue(id);
    await expect.poll(() => readsOf(sim, control), { timeout: 10_000 }).toBe(before + 1);
  }

  /** Mints until an NFT contract (not a fungible one) is among them; returns its address. */
  function mintCollection(): string {
    for (;;) {
      const nft = sim.mint(1).find((c) => !c.types.includes("TYPE_ERC20"));
      if (nft) return nft.address.toLowerCase();
    }
  }

  const alertTo = (chatId: number, address: string) => (c: (typeof telegram.sent)[number]) =>
    c.ok && c.params.chat_id === chatId && String(c.params.text).toLowerCase().includes(address);

  it("the first refusal pauses every feature of the chat; a command there resumes them all", async () => {
    expect(await says(dead, `/watch wallet ${wallet}`)).toContain("Watching #");
    expect(await says(dead, "/digest add daily 09:00 UTC")).toMatch(/Digest \d+ added/);
    expect(await says(dead, "/subscribe")).toMatch(/Subscribed/);
    expect(await says(alive, `/watch wallet ${control}`)).toContain("Watching #");
    expect(await says(alive, "/subscribe")).toMatch(/Subscribed/);
    await expect.poll(() => readsOf(sim, wallet), { timeout: 10_000 }).toBe(1);
    await expect.poll(() => readsOf(sim, control), { timeout: 10_000 }).toBe(1);
    // The poller has its cursor: mints from now on are alerted.
    await expect
      .poll(() => bot.store.kv.get("poll_cursor:ethereum"), { timeout: 10_000 })
      .toBeTruthy();

    // The group kicks the bot; the digest's slot is the first to meet it.
    telegram.failNext("*", telegramErrors.kicked(), { chatId: dead.id, times: 1 });
    clock = Date.parse("2026-11-23T09:00:05Z");
    await expect
      .poll(async () => (await digestStoreOf(bot.store).all())[0]?.pauseReason, { timeout: 10_000 })
      .toBe(KICKED);
    const attempts = attemptsAtDead();
    const reads = readsOf(sim, wallet);
    expect(reads).toBe(1);

    // The paused chat's wallet is due at every round from now on, and has something new to post;
    // a collection is minted, and the next day's slot comes.
    sim.giveNft(wallet);
    await setDue((await watchOf(dead.id)).id);
    const duringPause = mintCollection();
    await telegram.waitFor(alertTo(alive.id, duringPause), 10_000);
    clock = Date.parse("2026-11-24T09:00:05Z");
    for (let round = 0; round < 3; round++) await aRound();
    expect(readsOf(sim, wallet)).toBe(reads);
    expect(attemptsAtDead()).toBe(attempts);
    // Every feature shows the chat's pause and its reason.
    expect((await watchOf(dead.id)).pauseReason).toBe(KICKED);
    const [subscription] = await alertStoresOf(bot.store).subscriptions.forChat(
      "telegram",
      String(dead.id),
    );
    expect(subscription?.pauseReason).toBe(KICKED);

    // Used again: /subscriptions shows why it was paused, and everything resumes.
    expect(await says(dead, "/subscriptions")).toContain(
      `the chat refused the bot (${KICKED}); using the bot here resumes it`,
    );
    await telegram.waitFor(
      (c) =>
        c.ok &&
        c.params.chat_id === dead.id &&
        JSON.stringify(c.params).includes("Daily digest for 24 Nov 2026"),
      10_000,
    );
    await expect.poll(() => readsOf(sim, wallet), { timeout: 10_000 }).toBe(reads + 1);
    await telegram.waitFor(
      (c) => c.ok && c.params.chat_id === dead.id && String(c.params.text).includes("A new NFT"),
      10_000,
    );
    const afterPause = mintCollection();
    await telegram.waitFor(alertTo(dead.id, afterPause), 10_000);
    expect((await watchOf(dead.id)).pausedAt).toBeNull();
    expect((await digestStoreOf(bot.store).all())[0]?.pausedAt).toBeNull();
  });
});
