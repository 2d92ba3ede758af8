/**
 * Issue 16's proof, end to end: three compiled bot processes, as production runs them, on one
 * PostgreSQL schema and one Redis, Discord over HTTP interactions and Telegram on a webhook, all
 * against loopback fakes that enforce the platforms' limits with 429s and one simulated data
 * service. The processes are started once and shared by the tests below, in order: the command
 * tests need all three alive; the fan-out kills one.
 */
import { type ChildProcess, spawn } from "node:child_process";
import { mkdtempSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import pg from "pg";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { NFT_CONTRACT_TYPES } from "../src/api/schemas.ts";
import type { Simulator } from "../src/simulator/index.ts";
import { COMPILED_BOT, ROOT } from "./compiled.ts";
import {
  type FakeDiscord,
  PERMISSION,
  type RecordedRequest,
  startFakeDiscord,
} from "./fakes/discord/index.ts";
import { type FakeTelegram, privateChat, startFakeTelegram, user } from "./fakes/telegram/index.ts";
import { freePort } from "./helpers.ts";
import { deleteKeys, testPrefix } from "./redis-helpers.ts";
import { POSTGRES_URL, postgresAvailable, REDIS_URL, redisAvailable } from "./services.ts";
import { dropSchema, freshSchemaName } from "./store/backends.ts";
import { startTestSimulator } from "./test-simulator.ts";

const sleep = (ms: number) => new Promise((resolve) => setTimeout(resolve, ms));

/** Discord's documented limits, as test/bench/alerts.bench.ts has the fake enforce them. */
const DISCORD_LIMITS = { perChannel: { limit: 5, windowMs: 5000 }, globalPerSecond: 50 };
const WEBHOOK_SECRET = "scale-out-secret";
/** A person's allowance, small so the test reaches it (per minute as much: no refill meanwhile). */
const BURST = 3;
const TELEGRAM_CHATS = 1000;
const DISCORD_CHANNELS = 1000;

interface Instance {
  index: number;
  child: ChildProcess;
  base: string;
  output: string[];
  exited: Promise<unknown>;
}

const servers = (await postgresAvailable()) && (await redisAvailable());

describe.runIf(servers)("three compiled bot processes on one PostgreSQL and one Redis", () => {
  const cleanups: (() => Promise<unknown> | unknown)[] = [];
  const schema = freshSchemaName();
  const prefix = testPrefix("scale-out");
  let sim: Simulator;
  let telegram: FakeTelegram;
  let discord: FakeDiscord;
  let db: pg.Pool;
  const bots: Instance[] = [];
  let nextUpdateId = 1_000;

  const query = async <T extends pg.QueryResultRow>(sql: string, values: unknown[] = []) =>
    (await db.query<T>(sql, values)).rows;
  const count = async (sql: string, values: unknown[] = []) =>
    Number((await query<{ n: string }>(sql, values))[0]?.n ?? 0);
  const interactions = (bot: Instance) => `${bot.base}/discord/interactions`;

  async function startInstance(index: number): Promise<Instance> {
    const port = await freePort();
    const dataDir = mkdtempSync(join(tmpdir(), `scale-out-${index}-`));
    cleanups.push(() => rmSync(dataDir, { recursive: true, force: true }));
    const env: Record<string, string> = {};
    for (const key of ["PATH", "HOME"]) if (process.env[key]) env[key] = process.env[key] as string;
    const child = spawn(process.execPath, COMPILED_BOT, {
      cwd: ROOT,
      env: {
        ...env,
        DATA_DIR: dataDir,
        DATABASE_URL: POSTGRES_URL,
        DATABASE_SCHEMA: schema,
        REDIS_URL,
        REDIS_KEY_PREFIX: prefix,
        API_BASE_URL: sim.url,
        API_KEY: sim.apiKey,
        DISCORD_TOKEN: discord.token,
        DISCORD_PUBLIC_KEY: discord.publicKey,
        DISCORD_API_URL: discord.apiBase,
        DISCORD_GUILD_ID: discord.guildId,
        DISCORD_REGISTER_ON_START: index === 1 ? "true" : "false",
        TELEGRAM_BOT_TOKEN: telegram.token,
        TELEGRAM_API_ROOT: telegram.apiRoot,
        TELEGRAM_WEBHOOK_URL: "https://bot.example.com/telegram",
        TELEGRAM_WEBHOOK_SECRET: WEBHOOK_SECRET,
        HTTP_PORT: String(port),
        HTTP_HOST: "127.0.0.1",
        POLL_INTERVAL_S: "1",
        DELIVERY_TICK_MS: "200",
        COLLECTION_INDEX_REFRESH_S: "0",
        RATE_LIMIT_BURST: String(BURST),
        RATE_LIMIT_PER_MINUTE: String(BURST),
        LOG_LEVEL: "warn",
      },
      stdio: ["ignore", "pipe", "pipe"],
    });
    const output: string[] = [];
    child.stdout?.on("data", (chunk: Buffer) => output.push(String(chunk)));
    child.stderr?.on("data", (chunk: Buffer) => output.push(String(chunk)));
    const exited = new Promise((resolve) => child.once("exit", resolve));
    cleanups.push(async () => {
      if (child.exitCode === null && child.signalCode === null) child.kill("SIGKILL");
      await exited;
    });
    const instance = { index, child, base: `http://127.0.0.1:${port}`, output, exited };
    const deadline = Date.now() + 45_000;
    for (;;) {
      if (child.exitCode !== null) throw new Error(`bot ${index} exited: ${output.join("")}`);
      const health = await fetch(`${instance.base}/healthz`).catch(() => undefined);
      if (health?.status === 200) return instance;
      if (Date.now() > deadline) throw new Error(`bot ${index} not healthy: ${output.join("")}`);
      await sleep(100);
    }
  }

  beforeAll(async () => {
    cleanups.push(() => dropSchema(schema));
    cleanups.push(() => deleteKeys(prefix));
    sim = await startTestSimulator();
    cleanups.push(() => sim.close());
    telegram = await startFakeTelegram({ rateLimits: true });
    cleanups.push(() => telegram.close());
    discord = await startFakeDiscord({ rateLimits: DISCORD_LIMITS });
    cleanups.push(() => discord.close());
    // The test's own look at the shared schema (the bots create it).
    db = new pg.Pool({
      connectionString: POSTGRES_URL,
      max: 2,
      options: `-c search_path=${schema}`,
    });
    cleanups.push(() => db.end());
    // Started together: the migrations run once, under their lock.
    bots.push(...(await Promise.all([1, 2, 3].map((index) => startInstance(index)))));
    // Instance 1 registered the commands before it was healthy.
    if (discord.commands(discord.guildId).length === 0)
      throw new Error("no slash commands were registered");
  }, 90_000);

  afterAll(async () => {
    for (const cleanup of cleanups.splice(0).reverse()) {
      try {
        await cleanup();
      } catch (error) {
        console.warn("cleanup failed", error);
      }
    }
  }, 30_000);

  /** The answer an interaction got: its HTTP response, or the edit of a deferred one. */
  async function answerOf(
    bot: Instance,
    interaction: ReturnType<FakeDiscord["slashCommand"]> | ReturnType<FakeDiscord["buttonClick"]>,
  ): Promise<Record<string, unknown>> {
    const delivered = await discord.postInteraction(interactions(bot), interaction);
    expect(delivered.status).toBe(200);
    const body = delivered.body as { type: number; data?: Record<string, unknown> };
    if (body.type === 5 || body.type === 6) {
      const edit = await discord.waitForOriginalEdit(interaction, 20_000);
      return edit.body as Record<string, unknown>;
    }
    return body.data ?? {};
  }

  const discordUser = (n: number) => ({ id: String(300_000_000_000_000_000n + BigInt(n)) });

  it("a button made on one instance is pressed on another", async () => {
    const asker = { user: discordUser(1) };
    const answer = await answerOf(
      bots[1] as Instance,
      discord.slashCommand("top", { metric: "volume", duration: "1d", limit: 3 }, asker),
    );
    const next = ((answer.components ?? []) as { components: { custom_id: string }[] }[])
      .flatMap((row) => row.components)
      .find((button) => /next/i.test(JSON.stringify(button)));
    expect(next, JSON.stringify(answer)).toBeDefined();
    // Pressed on instance 3: the action is found in the shared store and runs there.
    const pressed = await answerOf(
      bots[2] as Instance,
      discord.buttonClick(next?.custom_id ?? "", asker),
    );
    expect(JSON.stringify(pressed)).toMatch(/Page 2/);
  });

  it("a person's rate limit holds across instances, not per instance", async () => {
    const who = { user: discordUser(2) };
    const texts: string[] = [];
    // 2 × BURST commands, round robin: each instance alone would allow them all.
    for (let i = 0; i < 2 * BURST; i++) {
      const bot = bots[i % bots.length] as Instance;
      texts.push(JSON.stringify(await answerOf(bot, discord.slashCommand("help", {}, who))));
    }
    const refused = texts.map((text) => /sending commands quickly/.test(text));
    expect(refused).toEqual([
      ...Array.from({ length: BURST }, () => false),
      ...Array.from({ length: BURST }, () => true),
    ]);
  });

  it("50 identical concurrent commands across the three instances make one upstream call", async () => {
    const path = "/collections/v1beta2/top/METRIC_SALES_QUANTITY/DURATION_30_DAYS";
    const before = sim.countRequests(path);
    const answers = await Promise.all(
      Array.from({ length: 50 }, (_, i) =>
        answerOf(
          bots[i % bots.length] as Instance,
          discord.slashCommand(
            "top",
            { metric: "sales", duration: "30d", limit: 5 },
            { user: discordUser(100 + i) },
          ),
        ),
      ),
    );
    for (const answer of answers) expect(JSON.stringify(answer)).toMatch(/Top collections/);
    expect(sim.countRequests(path) - before).toBe(1);
  }, 60_000);

  // ---- alerts ------------------------------------------------------------------------------

  /** Telegram's accepted sendMessage per chat since `from`; Discord's messages per channel. */
  function accepted(from: number, to = Number.POSITIVE_INFINITY) {
    const tg = new Map<string, number>();
    for (const call of telegram.sent)
      if (call.method === "sendMessage" && call.ok && call.at >= from && call.at < to) {
        const chat = String(call.params.chat_id);
        tg.set(chat, (tg.get(chat) ?? 0) + 1);
      }
    // A create answered from Discord's nonce memory is the message made before, not a new one.
    const dcIds = new Map<string, Set<string>>();
    for (const request of discord.requestsOf("createMessage"))
      if (request.status >= 200 && request.status < 300 && request.at >= from && request.at < to) {
        const channel = request.params.channelId ?? "";
        const id = String((request.response as { id?: string } | undefined)?.id);
        dcIds.set(channel, (dcIds.get(channel) ?? new Set()).add(id));
      }
    const dc = new Map([...dcIds].map(([channel, ids]) => [channel, ids.size]));
    return { tg, dc };
  }

  /** Duplicates (sends past the first) and chats that got nothing, of `ids`. */
  function tally(ids: readonly string[], counts: Map<string, number>) {
    let duplicates = 0;
    let lost = 0;
    for (const id of ids) {
      const n = counts.get(id) ?? 0;
      if (n === 0) lost++;
      else duplicates += n - 1;
    }
    return { duplicates, lost };
  }

  async function mintNft(): Promise<string> {
    for (;;) {
      const [contract] = sim.mint(1);
      if (contract?.types.some((type) => (NFT_CONTRACT_TYPES as readonly string[]).includes(type)))
        return contract.address.toLowerCase();
    }
  }

  /** Until every alert of `contract` is delivered and the outbox is empty. */
  async function waitDelivered(contract: string, expected: number, timeoutMs: number) {
    await expect
      .poll(
        async () =>
          (await count("SELECT COUNT(*) AS n FROM deliveries WHERE contract = $1", [contract])) ===
            expected && (await count("SELECT COUNT(*) AS n FROM outbox")) === 0,
        { timeout: timeoutMs, interval: 250 },
      )
      .toBe(true);
  }

  const telegramChats: string[] = [];
  const discordChannels: string[] = [];

  it("a subscription made through instance 1 and 1,998 seeded: one mint reaches each of the 2,000 chats exactly once", async () => {
    const one = bots[0] as Instance;

    // Subscribed for real, through instance 1: a Discord /subscribe and a Telegram /subscribe.
    const subscribed = await answerOf(
      one,
      discord.slashCommand("subscribe", {}, { memberPermissions: PERMISSION.ManageChannels }),
    );
    expect(JSON.stringify(subscribed)).toMatch(/Subscribed: new collections/);
    discordChannels.push(discord.channelId);
    const owner = user(5_001);
    const update = {
      update_id: nextUpdateId++,
      ...telegram.message(privateChat(owner), owner, "/subscribe"),
    };
    const posted = await fetch(`${one.base}/telegram`, {
      method: "POST",
      headers: {
        "content-type": "application/json",
        "x-telegram-bot-api-secret-token": WEBHOOK_SECRET,
      },
      body: JSON.stringify(update),
    });
    expect(posted.status).toBe(200);
    await telegram.waitFor(
      (call) =>
        call.method === "sendMessage" &&
        Number(call.params.chat_id) === owner.id &&
        /Subscribed/.test(String(call.params.text)),
      10_000,
    );
    telegramChats.push(String(owner.id));
    expect(await count("SELECT COUNT(*) AS n FROM subscriptions")).toBe(2);

    // The rest straight into the shared schema, in one transaction.
    for (let i = 1; i < TELEGRAM_CHATS; i++) telegramChats.push(String(100_000_000 + i));
    for (let i = 1; i < DISCORD_CHANNELS; i++)
      discordChannels.push(discord.addChannel({ name: `alerts-${i}` }).id);
    const client = await db.connect();
    try {
      await client.query("BEGIN");
      await client.query(
        `INSERT INTO subscriptions (platform, chat_id, types, created_by, created_at)
         SELECT p, c, 'all', 'seed', $3 FROM unnest($1::text[], $2::text[]) AS t (p, c)`,
        [
          [
            ...telegramChats.slice(1).map(() => "telegram"),
            ...discordChannels.slice(1).map(() => "discord"),
          ],
          [...telegramChats.slice(1), ...discordChannels.slice(1)],
          Date.now(),
        ],
      );
      await client.query("COMMIT");
    } finally {
      client.release();
    }
    expect(await count("SELECT COUNT(*) AS n FROM subscriptions")).toBe(
      TELEGRAM_CHATS + DISCORD_CHANNELS,
    );

    // The leader's first poll sets the cursor; a mint before it would not be alerted.
    await expect
      .poll(() => count("SELECT COUNT(*) AS n FROM kv WHERE key = 'poll_cursor'"), {
        timeout: 10_000,
      })
      .toBe(1);
    const mintedAt = Date.now();
    const contract = await mintNft();
    await waitDelivered(contract, TELEGRAM_CHATS + DISCORD_CHANNELS, 90_000);
    await sleep(1_000); // a stray second send would show up here
    const { tg, dc } = accepted(mintedAt);
    const seconds = (Date.now() - mintedAt) / 1000;
    console.info(
      `fan-out: ${tg.size} Telegram chats, ${dc.size} Discord channels in ${seconds.toFixed(1)} s`,
    );
    expect(tally(telegramChats, tg)).toEqual({ duplicates: 0, lost: 0 });
    expect(tally(discordChannels, dc)).toEqual({ duplicates: 0, lost: 0 });
    // Nothing sent anywhere else.
    expect(tg.size).toBe(TELEGRAM_CHATS);
    expect(dc.size).toBe(DISCORD_CHANNELS);
  }, 120_000);

  it("kill -9 of the delivering instance mid fan-out: another continues within 10 s, one duplicate at most, nothing lost", async () => {
    expect(telegramChats).toHaveLength(TELEGRAM_CHATS);
    // A smaller fan-out (200 + 200) keeps the file short: the rest are paused.
    const keepTg = telegramChats.slice(0, 200);
    const keepDc = discordChannels.slice(0, 200);
    await db.query(
      `UPDATE subscriptions SET paused_at = $1, pause_reason = 'test'
        WHERE NOT (platform = 'telegram' AND chat_id = ANY($2::text[]))
          AND NOT (platform = 'discord' AND chat_id = ANY($3::text[]))`,
      [Date.now(), keepTg, keepDc],
    );
    const leaderOf = async () =>
      (
        await query<{ holder: string }>("SELECT holder FROM leases WHERE name = $1", [
          "new-contract-poller",
        ])
      )[0]?.holder;
    const holder = await leaderOf();
    const pid = Number(holder?.split(":")[1]);
    const leader = bots.find((bot) => bot.child.pid === pid);
    expect(leader, `lease holder ${holder}`).toBeDefined();

    const mintedAt = Date.now();
    const contract = await mintNft();
    // Mid fan-out on both platforms.
    await expect
      .poll(
        () => {
          const { tg, dc } = accepted(mintedAt);
          return tg.size >= 50 && dc.size >= 50;
        },
        { timeout: 20_000, interval: 20 },
      )
      .toBe(true);
    const killedAt = Date.now();
    leader?.child.kill("SIGKILL");
    await leader?.exited;
    const atKill = accepted(mintedAt);
    console.info(
      `killed the leader (bot ${leader?.index}) after ${atKill.tg.size} Telegram and ${atKill.dc.size} Discord sends`,
    );
    expect(atKill.tg.size).toBeLessThan(keepTg.length);

    // Another instance takes the lease, and sending resumes, within 10 s.
    await expect
      .poll(async () => (await leaderOf()) !== holder, { timeout: 10_000, interval: 100 })
      .toBe(true);
    const successorPid = Number((await leaderOf())?.split(":")[1]);
    const successor = bots.find((bot) => bot.child.pid === successorPid);
    expect(successor).toBeDefined();
    expect(successor).not.toBe(leader);
    const takenOverMs = Date.now() - killedAt;
    await waitDelivered(contract, keepTg.length + keepDc.length, 60_000);
    await sleep(1_000);
    // The first send after the kill (past what the dead process had on the wire).
    const after = [
      ...telegram.sent.filter((call) => call.method === "sendMessage" && call.ok),
      ...discord.requestsOf("createMessage", (request) => request.status < 300),
    ]
      .map((entry) => entry.at)
      .filter((at) => at > killedAt + 100)
      .sort((a, b) => a - b);
    const resumedMs = (after[0] ?? Number.POSITIVE_INFINITY) - killedAt;
    console.info(
      `lease taken over within ${takenOverMs} ms; first send ${resumedMs} ms after kill`,
    );
    expect(resumedMs).toBeLessThan(10_000);

    const { tg, dc } = accepted(mintedAt);
    const tgTally = tally(keepTg, tg);
    const dcTally = tally(keepDc, dc);
    console.info(
      `after the kill: Telegram ${JSON.stringify(tgTally)}, Discord ${JSON.stringify(dcTally)}`,
    );
    expect(tgTally.lost).toBe(0);
    expect(dcTally.lost).toBe(0);
    // One kill: at most one duplicate in all (Telegram's one send in flight; Discord's carry a nonce).
    expect(tgTally.duplicates + dcTally.duplicates).toBeLessThanOrEqual(1);
    expect(tg.size).toBe(keepTg.length);
    expect(dc.size).toBe(keepDc.length);
  }, 90_000);

  it("the combined sends of the instances stayed under each platform's limit: no 429 from either fake", () => {
    const tgSends = telegram.sent.filter((call) => call.method === "sendMessage");
    const tg429 = tgSends.filter((call) => call.error?.error_code === 429);
    const dc429 = discord.requests.filter((request: RecordedRequest) => request.status === 429);
    const peak = (times: number[]) => {
      const sorted = [...times].sort((a, b) => a - b);
      let most = 0;
      for (let i = 0, j = 0; i < sorted.length; i++) {
        while ((sorted[j] ?? 0) <= (sorted[i] ?? 0) - 1000) j++;
        most = Math.max(most, i - j + 1);
      }
      return most;
    };
    console.info(
      `peak sends in a rolling second: Telegram ${peak(tgSends.filter((c) => c.ok).map((c) => c.at))}/30, Discord ${peak(discord.requestsOf("createMessage", (r) => r.status < 300).map((r) => r.at))}/50`,
    );
    expect(tgSends.length).toBeGreaterThan(TELEGRAM_CHATS);
    expect(tg429.map((call) => call.error?.description)).toEqual([]);
    expect(dc429.map((request) => `${request.method} ${request.path}`)).toEqual([]);
  });
});
