import { mkdtempSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { afterEach, describe, expect, it } from "vitest";
import { type Bot, createBot } from "../src/bot.ts";
import { parseConfig } from "../src/config.ts";
import { silentLogger } from "../src/log.ts";
import { ReportRetryWorker } from "../src/reports/submit.ts";
import { SQLITE_MIGRATIONS } from "../src/store/sqlite/db.ts";
import { openDatabase, openSqliteStore } from "../src/store/sqlite/index.ts";
import { groupChat, startFakeTelegram, user } from "./fakes/telegram/index.ts";
import { capturingLogger, sqliteDbOf, worldEnv } from "./helpers.ts";
import { aReport } from "./store/samples.ts";
import { startTestSimulator } from "./test-simulator.ts";
import { canMountTmpfs, fillDisk, mountSmallDisk } from "./tmpfs.ts";

/**
 * A full disk degrades the bot and never ends it: commands answer (a reply whose buttons cannot be
 * stored goes without them, with a note), alerts wait and go out once there is room, /healthz is
 * 503 saying why, and a start on a full disk starts. The disk fills two ways: SQLite's
 * max_page_count (everywhere), and a real small file system (tmpfs, where this machine lets the
 * test mount one): only a real disk makes the WAL checkpoint fail, which ended the process.
 */

const admin = user(3001, "Ada", "ada");
const group = groupChat(-7001, "Mints");

const cleanups: (() => Promise<void> | void)[] = [];
afterEach(async () => {
  for (const cleanup of cleanups.splice(0).reverse()) await cleanup();
});

async function startWorld(dataDir: string) {
  const sim = await startTestSimulator();
  const telegram = await startFakeTelegram();
  telegram.setMemberStatus(group.id, admin.id, "administrator");
  const config = parseConfig(
    worldEnv({ sim, dataDir, telegram }, { POLL_INTERVAL_S: "1", DELIVERY_TICK_MS: "100" }),
  );
  const { logger, lines } = capturingLogger();
  const start = async () => {
    const bot = await createBot(config, { logger });
    await bot.start();
    return bot;
  };
  let bot: Bot = await start();
  cleanups.push(async () => {
    await bot.stop();
    await telegram.close();
    await sim.close();
  });

  /** Sends a message in the group; the bot's reply (text and buttons). */
  async function says(text: string) {
    const before = telegram.sent.length;
    telegram.pushUpdate(telegram.message(group, admin, text));
    const call = await telegram.waitFor(
      (c) => c.seq > before && c.ok && c.method === "sendMessage",
      10_000,
    );
    return { text: String(call.params.text), markup: call.params.reply_markup };
  }

  async function until(what: string, condition: () => Promise<boolean> | boolean, ms = 15_000) {
    const deadline = Date.now() + ms;
    while (!(await condition())) {
      if (Date.now() > deadline) throw new Error(`timed out waiting for ${what}`);
      await new Promise((resolve) => setTimeout(resolve, 100));
    }
  }

  /** Mints until an NFT contract is among them; its address. */
  function mintCollection(): string {
    for (;;) {
      const nft = sim.mint(1).find((c) => !c.types.includes("TYPE_ERC20"));
      if (nft) return nft.address.toLowerCase();
    }
  }

  const alerted = (address: string) =>
    telegram.sent.some(
      (c) =>
        c.ok && c.method === "sendMessage" && String(c.params.text).toLowerCase().includes(address),
    );

  return {
    get bot() {
      return bot;
    },
    async restart() {
      await bot.stop();
      bot = await start();
    },
    lines,
    says,
    until,
    mintCollection,
    alerted,
    async subscribed() {
      expect((await says("/subscribe")).text).toMatch(/Subscribed/);
      await until("the poller's cursor", () =>
        Boolean(
          sqliteDbOf(bot).prepare("SELECT value FROM kv WHERE key = 'poll_cursor:ethereum'").get(),
        ),
      );
    },
  };
}

/** Records what reaches the process as uncaught: a full disk must never. */
function uncaughtErrors(): unknown[] {
  const seen: unknown[] = [];
  const note = (error: unknown) => seen.push(error);
  process.on("uncaughtException", note);
  process.on("unhandledRejection", note);
  cleanups.push(() => {
    process.off("uncaughtException", note);
    process.off("unhandledRejection", note);
  });
  return seen;
}

function tempDir(): string {
  const dir = mkdtempSync(join(tmpdir(), "bot-disk-"));
  cleanups.push(() => rmSync(dir, { recursive: true, force: true }));
  return dir;
}

const canMount = canMountTmpfs();
if (!canMount)
  console.warn(
    "\n!!! this machine does not let the test mount a small tmpfs (root and mount needed): SKIPPING the real-disk cases of disk-full.test.ts; the max_page_count case still runs !!!\n",
  );

describe("a full disk degrades the bot, never ends it", () => {
  it("SQLite at max_page_count: commands answer without stored buttons and say so; health is 503 saying why, then 200 once there is room", async () => {
    const world = await startWorld(tempDir());
    await world.subscribed();
    expect((await world.says("/top volume 1d 25")).markup).toBeDefined();
    const db = sqliteDbOf(world.bot);
    // The database may not grow; the buttons' table is filled until a hundred inserts in a row
    // find no room.
    db.pragma(`max_page_count = ${db.pragma("page_count", { simple: true })}`);
    const fill = db.prepare(
      "INSERT INTO button_actions (secret, platform, chat_id, user_id, first_seq, count, actions, expires_at) VALUES (randomblob(10), 'x', 'x', 'x', 0, 1, '[]', 0)",
    );
    for (let failures = 0; failures < 100; ) {
      try {
        fill.run();
        failures = 0;
      } catch {
        failures++;
      }
    }
    const reply = await world.says("/top volume 1d 25");
    expect(reply.text).toMatch(/Collection/);
    expect(reply.text).toMatch(/Buttons left out/);
    expect(reply.markup).toBeUndefined();
    const health = await world.bot.health();
    expect(health.ok).toBe(false);
    expect(health.disk).toMatch(/disk full.*SQLITE_FULL/);
    // Room again: the store's probe finds it within a few checkpoint ticks.
    db.pragma("max_page_count = 1073741823");
    await world.until("health back to ok", async () => (await world.bot.health()).ok);
    expect((await world.bot.health()).disk).toBeUndefined();
    expect((await world.says("/top volume 1d 25")).markup).toBeDefined();
  }, 60_000);

  it.runIf(canMount)(
    "a real full disk (tmpfs): the checkpoint fails and the process goes on; alerts wait, a restart starts, and all resume once there is room",
    async () => {
      const uncaught = uncaughtErrors();
      const dir = mountSmallDisk(24, cleanups);
      const world = await startWorld(join(dir, "data"));
      await world.subscribed();
      // 2 MiB committed to the write-ahead log (what a busy bot writes in a while), then the disk
      // filled, in one turn of the event loop: no checkpoint runs in between, and the next must
      // grow the database file by as much, and finds no room.
      sqliteDbOf(world.bot)
        .prepare("INSERT INTO kv (key, value) VALUES ('test:ballast', zeroblob(2 * 1024 * 1024))")
        .run();
      const freeRoom = fillDisk(dir);
      const address = world.mintCollection();
      // Several checkpoint ticks and poll rounds on the full disk.
      await new Promise((resolve) => setTimeout(resolve, 3_000));
      expect(uncaught).toEqual([]);
      expect((await world.bot.health()).disk).toMatch(/disk full: SQLITE_FULL/);
      expect((await world.bot.health()).ok).toBe(false);
      expect((await world.says("/help")).text).toMatch(/\/top/);
      expect(world.alerted(address)).toBe(false);
      // A restart on the still-full disk starts, and says why it is not healthy.
      const logged = world.lines.length;
      await world.restart();
      const told = world.lines.slice(logged).filter((line) => line.includes("full disk"));
      expect(told).toHaveLength(1);
      expect(told[0]).toMatch(/starting on a full disk \(disk full/);
      expect((await world.bot.health()).disk).toMatch(/disk full/);
      expect((await world.says("/help")).text).toMatch(/\/top/);
      // Room again: the alert minted meanwhile goes out, and health is ok.
      freeRoom();
      await world.until("the alert minted on the full disk", () => world.alerted(address), 30_000);
      await world.until("health back to ok", async () => (await world.bot.health()).ok);
      expect(uncaught).toEqual([]);
    },
    90_000,
  );

  it.runIf(canMount)(
    "a real full disk (tmpfs): the spam-report worker starts though it cannot mark what a stopped bot left mid-call",
    async () => {
      const dir = mountSmallDisk(8, cleanups);
      const store = openSqliteStore(join(dir, "data"));
      cleanups.push(() => store.close());
      await store.reports.create(aReport(), 0);
      // A full log and a full disk, in one turn: the worker's first write finds no room.
      store.db
        .prepare("INSERT INTO kv (key, value) VALUES ('test:ballast', zeroblob(1024 * 1024))")
        .run();
      fillDisk(dir);
      const worker = new ReportRetryWorker({
        reports: store.reports,
        api: undefined as never,
        logger: silentLogger(),
        isLeader: () => false,
        intervalMs: 60_000,
        callMaxMs: 1_000,
      });
      await worker.start();
      await worker.stop();
      expect(store.diskFull()).toMatch(/disk full: SQLITE_FULL/);
    },
  );

  it.runIf(canMount)(
    "a real full disk (tmpfs): a start that must migrate opens the database as it is, reads answer, and the migrations run once there is room",
    async () => {
      const dir = mountSmallDisk(8, cleanups);
      const dataDir = join(dir, "data");
      openDatabase(dataDir, "bot.sqlite", SQLITE_MIGRATIONS - 1).close();
      const freeRoom = fillDisk(dir);
      // The tools' open (npm run migrate-store) still says it cannot, and why.
      expect(() => openDatabase(dataDir)).toThrow(
        /Cannot migrate the database .*bot\.sqlite: the disk is full \(SQLITE_[A-Z_]+\); free space under DATA_DIR/,
      );
      const store = openSqliteStore(dataDir, { checkpointEveryMs: 50 });
      cleanups.push(() => store.close());
      expect(store.waiting?.()).toMatch(
        new RegExp(
          `migrations \\(${SQLITE_MIGRATIONS - 1} of ${SQLITE_MIGRATIONS} applied\\) wait for room`,
        ),
      );
      expect(store.diskFull()).toMatch(/disk full/);
      expect(store.db.prepare("SELECT count(*) AS n FROM subscriptions").get()).toEqual({ n: 0 });
      // Their retry is the store's first chore, a job the bot starts before the others.
      const migrations = store.chores?.().find((chore) => chore.name === "migrations");
      expect(migrations?.first).toBe(true);
      expect(migrations?.run()).toBe(false);
      expect(store.waiting?.()).toMatch(/wait for room/);
      freeRoom();
      expect(migrations?.run()).toBe(true);
      await store.ready?.();
      expect(store.waiting?.()).toBeUndefined();
      expect(store.db.pragma("user_version", { simple: true })).toBe(SQLITE_MIGRATIONS);
    },
  );
});
