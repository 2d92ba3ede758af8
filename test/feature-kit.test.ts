/**
 * Issue 35's test of the feature kit: a feature defined only here (a command, a job, a migration,
 * a health check, a route) is added to a bot by its one line in `features`, with no change to the
 * kernel, and works on SQLite and on PostgreSQL alike, its store written once in the query layer.
 */
import { mkdtempSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { PassThrough } from "node:stream";
import { afterEach, describe, expect, it } from "vitest";
import { createBot } from "../src/bot.ts";
import { parseConfig } from "../src/config.ts";
import { defineCommand } from "../src/core/command.ts";
import { opt } from "../src/core/options.ts";
import type { Feature } from "../src/kernel/feature.ts";
import { silentLogger } from "../src/log.ts";
import type { SqlLayer } from "../src/store/sql.ts";
import { freePort, testInvocation } from "./helpers.ts";
import { POSTGRES_URL, postgresAvailable } from "./services.ts";
import { dropSchema, freshSchemaName } from "./store/backends.ts";
import { startTestSimulator } from "./test-simulator.ts";

const cleanups: (() => Promise<void> | void)[] = [];
afterEach(async () => {
  for (const cleanup of cleanups.splice(0).reverse()) await cleanup();
});

type TallyTables = {
  tallies: { chat_id: string; word: string; at: number };
  tally_ticks: { id: number; at: number };
};

/** The layer with the feature's own tables typed. */
const layer = (sql: SqlLayer | undefined) => {
  if (!sql) throw new Error("the commands' store has no query layer");
  return { sql, q: sql.q.withTables<TallyTables>() };
};

/** The feature: `/tally word` counts words per chat; a job ticks; a check reads a flag. */
function tallyFeature(state: { healthy: boolean; tickMs: number; ticks: number }): Feature {
  const tally = defineCommand({
    name: "tally",
    description: "Count a word in this chat",
    options: { word: opt.string("The word", { required: true }) },
    examples: ["/tally gm"],
    chainless: true,
    async run(ctx, { word }) {
      const { sql, q } = layer(ctx.store.sql);
      const chat = ctx.invocation.chat.id;
      // A read after a write in one transaction, written once for both databases.
      const row = await sql.transaction(function* (tx) {
        yield* tx.run(q.insertInto("tallies").values({ chat_id: chat, word, at: Date.now() }));
        return yield* tx.first(
          q
            .selectFrom("tallies")
            .select((eb) => eb.fn.countAll<number>().as("n"))
            .where("chat_id", "=", chat)
            .where("word", "=", word),
        );
      });
      return { text: `${word}: ${Number(row?.n)}` };
    },
  });
  return {
    name: "tally",
    commands: [tally],
    migrations: {
      "001-tallies": {
        async up(db) {
          await db.schema
            .createTable("tallies")
            .addColumn("chat_id", "text", (c) => c.notNull())
            .addColumn("word", "text", (c) => c.notNull())
            .addColumn("at", "bigint", (c) => c.notNull())
            .execute();
        },
      },
      "002-ticks": {
        async up(db) {
          await db.schema
            .createTable("tally_ticks")
            .addColumn("id", "integer", (c) => c.primaryKey())
            .addColumn("at", "bigint", (c) => c.notNull())
            .execute();
        },
      },
    },
    build(kernel) {
      let timer: NodeJS.Timeout | undefined;
      let inFlight: Promise<void> = Promise.resolve();
      const tick = async () => {
        const { sql, q } = layer(kernel.store.sql);
        state.ticks++;
        await sql.run(q.insertInto("tally_ticks").values({ id: state.ticks, at: kernel.now() }));
      };
      return {
        jobs: [
          {
            name: "tally ticks",
            start: () => {
              timer = setInterval(() => {
                inFlight = inFlight.then(tick);
              }, state.tickMs);
            },
            stop: async () => {
              clearInterval(timer);
              await inFlight;
            },
            checks: () => [],
          },
        ],
        checks: () => [
          { name: "tally", ok: state.healthy, ...(state.healthy ? {} : { reason: "tally: sad" }) },
        ],
        routes: [
          {
            path: "/tally",
            handle: async (_req, res) => {
              res.writeHead(200, { "content-type": "text/plain" }).end(`ticks ${state.ticks}`);
            },
          },
        ],
      };
    },
  };
}

async function backends(): Promise<[string, () => Promise<Record<string, string>>][]> {
  const sqlite: [string, () => Promise<Record<string, string>>] = [
    "SQLite",
    async () => {
      const dataDir = mkdtempSync(join(tmpdir(), "feature-kit-"));
      cleanups.push(() => rmSync(dataDir, { recursive: true, force: true }));
      return { DATA_DIR: dataDir };
    },
  ];
  const postgres: [string, () => Promise<Record<string, string>>] = [
    "PostgreSQL",
    async () => {
      const dataDir = mkdtempSync(join(tmpdir(), "feature-kit-"));
      cleanups.push(() => rmSync(dataDir, { recursive: true, force: true }));
      const schema = freshSchemaName();
      cleanups.push(() => dropSchema(schema));
      return { DATA_DIR: dataDir, DATABASE_URL: POSTGRES_URL, DATABASE_SCHEMA: schema };
    },
  ];
  return (await postgresAvailable()) ? [sqlite, postgres] : [sqlite];
}

describe.each(await backends())("a feature defined in a test, on %s", (_name, storeEnv) => {
  it("its migration, command, job, route and health check work, and its migrations run once", async () => {
    const sim = await startTestSimulator();
    cleanups.push(() => sim.close());
    const env = {
      API_BASE_URL: sim.url,
      API_KEY: sim.apiKey,
      HTTP_PORT: String(await freePort()),
      ...(await storeEnv()),
    };
    const state = { healthy: true, tickMs: 20, ticks: 0 };
    const feature = tallyFeature(state);
    const start = async () => {
      const bot = await createBot(parseConfig(env), {
        logger: silentLogger(),
        input: new PassThrough(),
        output: new PassThrough(),
        features: [feature],
      });
      cleanups.push(() => bot.stop());
      return bot;
    };
    const bot = await start();
    await bot.start();

    // The command, listed in /help, writing and reading its own table.
    const chat = testInvocation({ chat: { id: "chat-7", kind: "group" } });
    expect((await bot.runtime.runText(chat, "tally", "gm")).text).toBe("gm: 1");
    expect((await bot.runtime.runText(chat, "tally", "gm")).text).toBe("gm: 2");
    expect((await bot.runtime.runText(chat, "help", "")).text).toContain("/tally");
    // A bad input is refused like any command's.
    expect((await bot.runtime.runText(chat, "tally", "")).text).toMatch(
      /^Missing text\. Usage: \/tally/,
    );

    // The job runs once the bot has started, and its route is on the HTTP host.
    await expect.poll(() => ticks(bot), { timeout: 5_000 }).toBeGreaterThan(2);
    const page = await fetch(`http://127.0.0.1:${bot.http.port}/tally`);
    expect(await page.text()).toMatch(/^ticks [1-9]\d*$/);

    // Its health check is in /healthz.
    expect((await bot.health()).checks).toContainEqual({ name: "tally", ok: true });
    state.healthy = false;
    const health = await bot.health();
    expect(health.ok).toBe(false);
    expect(health.checks).toContainEqual({ name: "tally", ok: false, reason: "tally: sad" });
    state.healthy = true;

    // Stopped with the bot: no tick after stop(), and every tick is a row.
    await bot.stop();
    const stoppedAt = state.ticks;
    await new Promise((resolve) => setTimeout(resolve, 100));
    expect(state.ticks).toBe(stoppedAt);

    // A second start on the same database: the migrations are not run again, the rows are there.
    const again = await start();
    expect(await ticks(again)).toBe(stoppedAt);
    await again.start();
    expect((await again.runtime.runText(chat, "tally", "gm")).text).toBe("gm: 3");
    await again.stop();
  });
});

/** The job's ticks, read from the database the bot's store uses. */
async function ticks(bot: { store: { sql: SqlLayer } }): Promise<number> {
  const { sql, q } = layer(bot.store.sql);
  const row = await sql.first(
    q.selectFrom("tally_ticks").select((eb) => eb.fn.countAll<number>().as("n")),
  );
  return Number(row?.n);
}

describe("a feature's migration that fails", () => {
  it("fails the start naming the migration, and leaves nothing open", async () => {
    const sim = await startTestSimulator();
    cleanups.push(() => sim.close());
    const dataDir = mkdtempSync(join(tmpdir(), "feature-kit-"));
    cleanups.push(() => rmSync(dataDir, { recursive: true, force: true }));
    const port = await freePort();
    const config = parseConfig({
      API_BASE_URL: sim.url,
      API_KEY: sim.apiKey,
      DATA_DIR: dataDir,
      HTTP_PORT: String(port),
    });
    const broken: Feature = {
      name: "broken",
      migrations: {
        "001-fine": {
          async up(db) {
            await db.schema.createTable("broken_rows").addColumn("id", "integer").execute();
          },
        },
        "002-bad": {
          async up(db) {
            await db.schema.createTable("broken_rows").addColumn("id", "integer").execute();
          },
        },
      },
    };
    const deps = { logger: silentLogger(), input: new PassThrough(), output: new PassThrough() };
    await expect(createBot(config, { ...deps, features: [broken] })).rejects.toThrow(
      /the migration broken\/002-bad failed: .*broken_rows/,
    );
    // The store was closed again: the same database opens and the bot starts without the feature.
    const bot = await createBot(config, deps);
    cleanups.push(() => bot.stop());
    await bot.start();
    expect(bot.http.port).toBe(port);
  });

  it("a migration that fails half-way on SQLite leaves nothing of itself: the next start runs it whole", async () => {
    const sim = await startTestSimulator();
    cleanups.push(() => sim.close());
    const dataDir = mkdtempSync(join(tmpdir(), "feature-kit-"));
    cleanups.push(() => rmSync(dataDir, { recursive: true, force: true }));
    const config = parseConfig({ API_BASE_URL: sim.url, API_KEY: sim.apiKey, DATA_DIR: dataDir });
    const deps = { logger: silentLogger(), input: new PassThrough(), output: new PassThrough() };
    // As a full disk would cut it: the first statement done, the second failing.
    let failing = true;
    const half: Feature = {
      name: "half",
      migrations: {
        "001-two": {
          async up(db) {
            await db.schema.createTable("half_rows").addColumn("id", "integer").execute();
            if (failing) throw new Error("SQLITE_FULL: database or disk is full");
            await db.schema.createTable("half_more").addColumn("id", "integer").execute();
          },
        },
      },
    };
    await expect(createBot(config, { ...deps, features: [half] })).rejects.toThrow(/SQLITE_FULL/);
    failing = false;
    const bot = await createBot(config, { ...deps, features: [half] });
    cleanups.push(() => bot.stop());
    await bot.start();
    expect(bot.http.port).toBeGreaterThan(0);
  });
});

describe("the feature list", () => {
  it("refuses two features of one name, a name that cannot name a migration, and two deciders of join requests", async () => {
    const sim = await startTestSimulator();
    cleanups.push(() => sim.close());
    const dataDir = mkdtempSync(join(tmpdir(), "feature-kit-"));
    cleanups.push(() => rmSync(dataDir, { recursive: true, force: true }));
    const config = parseConfig({ API_BASE_URL: sim.url, API_KEY: sim.apiKey, DATA_DIR: dataDir });
    const deps = { logger: silentLogger(), input: new PassThrough(), output: new PassThrough() };
    await expect(createBot(config, { ...deps, features: [{ name: "alerts" }] })).rejects.toThrow(
      'two features are named "alerts"',
    );
    await expect(createBot(config, { ...deps, features: [{ name: "Bad/Name" }] })).rejects.toThrow(
      /lowercase letters, digits and dashes/,
    );
    // Join requests have one decider: a second feature taking them is refused, naming both.
    const taker: Feature = {
      name: "doorman",
      setup: () => ({ onJoinRequest: async () => {} }),
    };
    await expect(createBot(config, { ...deps, features: [taker] })).rejects.toThrow(
      "the features gates and doorman both decide join requests",
    );
  });
});
