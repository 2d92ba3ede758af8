import { mkdtempSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { Writable } from "node:stream";
import pg from "pg";
import { buildDist } from "../../scripts/build.mjs";
import { NFT_CONTRACT_TYPES } from "../../src/api/schemas.ts";
import { createBot } from "../../src/bot.ts";
import { parseConfig } from "../../src/config.ts";
import { createLogger } from "../../src/log.ts";
import { startSimulator } from "../../src/simulator/index.ts";
import { openDatabase } from "../../src/store/sqlite/index.ts";
import { ROOT } from "../compiled.ts";
import { startFakeDiscord } from "../fakes/discord/index.ts";
import { startFakeTelegram, TELEGRAM_RATE_LIMITS } from "../fakes/telegram/index.ts";
import { sqliteDbOf } from "../helpers.ts";
import { deleteKeys, testPrefix } from "../redis-helpers.ts";
import {
  acceptedSends,
  type Cluster,
  DISCORD_LIMITS,
  type Instance,
  leaseHolder,
  mintNft,
  peakPerSecond,
  rateLimited,
  seedSubscriptions,
  startInstance,
  tally,
  waitDelivered,
} from "../scale-out-cluster.ts";
import { POSTGRES_URL } from "../services.ts";
import { dropSchema, freshSchemaName } from "../store/backends.ts";
import { rssOf } from "./process.bench.ts";
import type { BenchRow } from "./report.ts";

const sleep = (ms: number) => new Promise((resolve) => setTimeout(resolve, ms));

/** Discord's documented limits: 50 requests/s per bot, 5 messages per 5 s per channel. */
const DISCORD_GLOBAL_PER_SECOND = 50;
const DISCORD_PER_CHANNEL = { limit: 5, windowMs: 5000 };
const TELEGRAM_GLOBAL_PER_SECOND = TELEGRAM_RATE_LIMITS.globalPerSecond;

export interface FanOutOptions {
  telegramChats: number;
  discordChannels: number;
  /**
   * The order the subscriptions were made in: "interleaved" (as people subscribe over time, one
   * platform after the other) or "by-platform" (every Telegram chat, then every Discord channel).
   */
  order: "interleaved" | "by-platform";
  /** Extra settings (e.g. DELIVERY_CONCURRENCY) for what-if runs. */
  env?: Record<string, string>;
  timeoutMs?: number;
}

interface Accepted {
  channel: string;
  at: number;
}

function spanRate(sends: Accepted[]): { first: number; last: number; perSecond: number } {
  const times = sends.map((send) => send.at).sort((a, b) => a - b);
  const first = times[0] ?? Number.NaN;
  const last = times.at(-1) ?? Number.NaN;
  // n sends span n - 1 gaps between the first and the last.
  const perSecond = times.length > 1 ? ((times.length - 1) * 1000) / (last - first) : Number.NaN;
  return { first, last, perSecond };
}

/** "n" or "n: message ×count, …" from pino's JSON lines. */
function describeWarnings(lines: string[]): string {
  const byMessage = new Map<string, number>();
  for (const line of lines) {
    let message = line.trim();
    try {
      message = String((JSON.parse(line) as { msg?: unknown }).msg);
    } catch {}
    byMessage.set(message, (byMessage.get(message) ?? 0) + 1);
  }
  if (byMessage.size === 0) return "0";
  const kinds = [...byMessage].map(([message, n]) => `"${message}" ×${n}`).join(", ");
  return `${lines.length}: ${kinds}`;
}

/**
 * One mint fanned out to N Telegram chats and M Discord channels through the whole bot
 * (createBot: poller, outbox, delivery worker, both adapters) against fakes that enforce the
 * platforms' limits with 429s. Measures the achieved send rate of each platform as a fraction of
 * its limit, duplicates and losses (per channel, from what the fakes accepted), and peak RSS.
 */
export async function benchAlertFanOut(options: FanOutOptions): Promise<BenchRow[]> {
  const { telegramChats, discordChannels, order } = options;
  const sim = await startSimulator({ mintIntervalMs: 0, apiKey: "bench-key" });
  const telegram = await startFakeTelegram({ rateLimits: true });
  const discord = await startFakeDiscord({
    rateLimits: { perChannel: DISCORD_PER_CHANNEL, globalPerSecond: DISCORD_GLOBAL_PER_SECOND },
  });
  const dataDir = mkdtempSync(join(tmpdir(), "bench-alerts-"));

  // Subscriptions straight into SQLite, and the Discord channels into the fake.
  const telegramIds = Array.from({ length: telegramChats }, (_, i) => String(100_000_001 + i));
  const discordIds = Array.from(
    { length: discordChannels },
    (_, i) => discord.addChannel({ name: `alerts-${i}` }).id,
  );
  const subscriptions: { platform: "telegram" | "discord"; chatId: string }[] = [];
  if (order === "by-platform") {
    for (const chatId of telegramIds) subscriptions.push({ platform: "telegram", chatId });
    for (const chatId of discordIds) subscriptions.push({ platform: "discord", chatId });
  } else {
    for (let i = 0; i < Math.max(telegramChats, discordChannels); i++) {
      const tg = telegramIds[i];
      const dc = discordIds[i];
      if (tg !== undefined) subscriptions.push({ platform: "telegram", chatId: tg });
      if (dc !== undefined) subscriptions.push({ platform: "discord", chatId: dc });
    }
  }
  const setup = openDatabase(dataDir);
  // One transaction for them all (the store's upsert commits each one).
  const insert = setup.prepare(
    "INSERT INTO subscriptions (platform, chat_id, chain, types, created_by, created_at) VALUES (?, ?, 'ethereum', 'all', 'bench', ?)",
  );
  setup.transaction(() => {
    for (const subscription of subscriptions)
      insert.run(subscription.platform, subscription.chatId, Date.now());
  })();
  setup.close();

  const warnings: string[] = [];
  const logger = createLogger({
    level: "warn",
    destination: new Writable({
      write(chunk, _encoding, callback) {
        warnings.push(String(chunk));
        callback();
      },
    }),
  });
  const bot = await createBot(
    parseConfig({
      API_BASE_URL: sim.url,
      API_KEY: sim.apiKey,
      DATA_DIR: dataDir,
      TELEGRAM_BOT_TOKEN: telegram.token,
      TELEGRAM_API_ROOT: telegram.apiRoot,
      DISCORD_TOKEN: discord.token,
      DISCORD_API_URL: discord.apiBase,
      POLL_INTERVAL_S: "1",
      DELIVERY_TICK_MS: "50",
      LOG_LEVEL: "warn",
      ...options.env,
    }),
    { logger },
  );
  await bot.start();

  let peakRss = process.memoryUsage().rss;
  const baseRss = peakRss;
  const sampler = setInterval(() => {
    peakRss = Math.max(peakRss, process.memoryUsage().rss);
  }, 50);

  const telegramSends = () =>
    telegram.sent
      .filter((call) => call.method === "sendMessage")
      .map((call) => ({ channel: String(call.params.chat_id), at: call.at, ok: call.ok }));
  const discordSends = () =>
    discord
      .requestsOf("createMessage")
      .map((r) => ({ channel: r.params.channelId ?? "", at: r.at, status: r.status }));

  const expected = subscriptions.length;
  const timeoutMs = options.timeoutMs ?? 180_000;
  let mintedAt = 0;
  let timedOut = false;
  try {
    // The first poll sets the cursor to now; a mint before it would not be alerted.
    const kv = sqliteDbOf(bot).prepare<[], { n: number }>(
      "SELECT COUNT(*) AS n FROM kv WHERE key = 'poll_cursor:ethereum'",
    );
    while ((kv.get()?.n ?? 0) === 0) await sleep(20);
    // One NFT contract (about 10% of mints are fungible and never alerted).
    for (;;) {
      const [contract] = sim.mint(1);
      if (contract?.types.some((type) => (NFT_CONTRACT_TYPES as readonly string[]).includes(type)))
        break;
    }
    mintedAt = Date.now();
    const delivered = sqliteDbOf(bot).prepare<[], { n: number }>(
      "SELECT COUNT(*) AS n FROM deliveries",
    );
    const outbox = sqliteDbOf(bot).prepare<[], { n: number }>("SELECT COUNT(*) AS n FROM outbox");
    while ((delivered.get()?.n ?? 0) < expected || (outbox.get()?.n ?? 0) > 0) {
      if (Date.now() - mintedAt > timeoutMs) {
        timedOut = true;
        break;
      }
      await sleep(50);
    }
    await sleep(500); // a stray re-send would show up here
  } finally {
    clearInterval(sampler);
    await bot.stop();
    await telegram.close();
    await discord.close();
    await sim.close();
    rmSync(dataDir, { recursive: true, force: true });
  }

  const tgAll = telegramSends();
  const dcAll = discordSends();
  const tgOk = tgAll.filter((send) => send.ok);
  const dcOk = dcAll.filter((send) => send.status >= 200 && send.status < 300);
  const countsOf = (sends: Accepted[]) => {
    const counts = new Map<string, number>();
    for (const send of sends) counts.set(send.channel, (counts.get(send.channel) ?? 0) + 1);
    return counts;
  };
  const tg = { ...spanRate(tgOk), ...tally(telegramIds, countsOf(tgOk)) };
  const dc = { ...spanRate(dcOk), ...tally(discordIds, countsOf(dcOk)) };
  const tg429 = tgAll.filter((send) => !send.ok).length;
  const dc429 = dcAll.filter((send) => send.status === 429).length;
  const seconds = (ms: number) => `${(ms / 1000).toFixed(1)} s`;
  const mb = (bytes: number) => `${(bytes / 2 ** 20).toFixed(0)} MB`;
  const idealMs = Math.max(
    (telegramChats / TELEGRAM_GLOBAL_PER_SECOND) * 1000,
    (discordChannels / DISCORD_GLOBAL_PER_SECOND) * 1000,
  );
  const label = `${telegramChats} TG + ${discordChannels} DC, ${order}`;
  const stats = bot.delivery.stats;
  return [
    {
      name: `Telegram send rate / limit ${TELEGRAM_GLOBAL_PER_SECOND}/s (${label}; goal >= 0.93)`,
      value: `${(tg.perSecond / TELEGRAM_GLOBAL_PER_SECOND).toFixed(3)} (${tg.perSecond.toFixed(1)}/s over ${seconds(tg.last - tg.first)})`,
    },
    {
      name: `Discord send rate / limit ${DISCORD_GLOBAL_PER_SECOND}/s (${label}; goal >= 0.9)`,
      value: `${(dc.perSecond / DISCORD_GLOBAL_PER_SECOND).toFixed(3)} (${dc.perSecond.toFixed(1)}/s over ${seconds(dc.last - dc.first)})`,
    },
    {
      name: `mint to last send, both platforms (${label}; ideal ${seconds(idealMs)})`,
      value: timedOut
        ? `timed out after ${seconds(timeoutMs)}`
        : seconds(Math.max(tg.last, dc.last) - mintedAt),
    },
    {
      name: `mint to first send: Telegram / Discord (${label})`,
      value: `${seconds(tg.first - mintedAt)} / ${seconds(dc.first - mintedAt)}`,
    },
    {
      name: `duplicates / lost, Telegram (${label}; goal 0 / 0)`,
      value: `${tg.duplicates} / ${tg.lost}`,
    },
    {
      name: `duplicates / lost, Discord (${label}; goal 0 / 0)`,
      value: `${dc.duplicates} / ${dc.lost}`,
    },
    {
      name: `429s answered: Telegram / Discord (${label}; goal 0 / 0)`,
      value: `${tg429} / ${dc429}`,
    },
    {
      name: `delivery worker: messages / retries / paused (${label})`,
      value: `${stats.messages} / ${stats.retries} / ${stats.paused}`,
    },
    {
      name: `peak RSS, bot + fakes + simulator in one process (${label})`,
      value: `${mb(peakRss)} (${mb(baseRss)} before the mint)`,
    },
    {
      name: `bot warnings logged (${label})`,
      value: describeWarnings(warnings),
    },
  ];
}

export interface ScaleOutFanOutOptions {
  telegramChats: number;
  discordChannels: number;
  instances: number;
  /**
   * Once 45% of the Telegram chats have their alert (not at a 500-alert round's end), the
   * instance holding the poller lease is killed (SIGKILL), or stopped (SIGSTOP, killed at the end):
   * stopped, it is not known dead, as an instance on another host would not be, so the others
   * wait out its lease and its claims.
   */
  stopLeader?: "kill" | "stop";
  timeoutMs?: number;
}

/**
 * One mint fanned out by N compiled bot processes on one PostgreSQL schema and one Redis (Discord
 * over HTTP interactions, Telegram on a webhook), as issue 16 deploys them, against fakes that
 * enforce the platforms' limits with 429s. The subscriptions are written straight into the
 * schema (interleaved); the figures come from what the fakes accepted. With `killLeader`, the
 * delivering instance is killed (SIGKILL) half way and another takes over.
 */
export async function benchScaleOutFanOut(options: ScaleOutFanOutOptions): Promise<BenchRow[]> {
  const { telegramChats, discordChannels, instances } = options;
  await buildDist(ROOT);
  const sim = await startSimulator({ mintIntervalMs: 0, apiKey: "bench-key" });
  const telegram = await startFakeTelegram({ rateLimits: true });
  const discord = await startFakeDiscord({ rateLimits: DISCORD_LIMITS });
  const cluster: Cluster = {
    sim,
    telegram,
    discord,
    schema: freshSchemaName(),
    prefix: testPrefix("bench-fanout"),
  };
  const db = new pg.Pool({
    connectionString: POSTGRES_URL,
    max: 2,
    options: `-c search_path=${cluster.schema}`,
  });
  const running: Instance[] = [];
  const telegramIds = Array.from({ length: telegramChats }, (_, i) => String(100_000_001 + i));
  const discordIds = Array.from(
    { length: discordChannels },
    (_, i) => discord.addChannel({ name: `alerts-${i}` }).id,
  );
  const expected = telegramChats + discordChannels;
  const timeoutMs = options.timeoutMs ?? 180_000;
  let mintedAt = 0;
  let done = false;
  let killed: { at: number; index: number; takeoverMs: number; sentBefore: number } | undefined;
  const rss: number[] = [];
  let stopped: Instance | undefined;
  let unfinished = "";
  try {
    const started = await Promise.allSettled(
      Array.from({ length: instances }, (_, i) => startInstance(cluster, i + 1)),
    );
    for (const result of started) if (result.status === "fulfilled") running.push(result.value);
    for (const result of started) if (result.status === "rejected") throw result.reason;
    const subscriptions: { platform: "telegram" | "discord"; chatId: string }[] = [];
    for (let i = 0; i < Math.max(telegramChats, discordChannels); i++) {
      const tg = telegramIds[i];
      const dc = discordIds[i];
      if (tg !== undefined) subscriptions.push({ platform: "telegram", chatId: tg });
      if (dc !== undefined) subscriptions.push({ platform: "discord", chatId: dc });
    }
    await seedSubscriptions(db, subscriptions);
    // The leader's first poll sets the cursor; a mint before it would not be alerted.
    for (;;) {
      const { rows } = await db.query("SELECT 1 FROM kv WHERE key = 'poll_cursor:ethereum'");
      if (rows.length > 0) break;
      await sleep(50);
    }
    mintedAt = Date.now();
    const contract = mintNft(sim);
    if (options.stopLeader) {
      while (acceptedSends(cluster, mintedAt).tg.size < telegramChats * 0.45) await sleep(20);
      const { holder, instance } = await leaseHolder(db, running);
      if (!instance) throw new Error(`the lease holder ${holder} is none of the instances`);
      const at = Date.now();
      const sentBefore = acceptedSends(cluster, mintedAt).tgTimes.length;
      if (options.stopLeader === "kill") {
        instance.child.kill("SIGKILL");
        await instance.exited;
      } else instance.child.kill("SIGSTOP");
      while ((await leaseHolder(db, running)).holder === holder) await sleep(50);
      killed = { at, index: instance.index, takeoverMs: Date.now() - at, sentBefore };
      if (options.stopLeader === "stop") stopped = instance;
    }
    done = await waitDelivered(db, contract, expected, timeoutMs);
    if (!done) {
      // What is left, and whether a stopped instance's open transaction holds it.
      const left = await db.query<{ n: number }>("SELECT COUNT(*)::int AS n FROM outbox");
      const open = await db.query<{ n: number }>(
        "SELECT COUNT(*)::int AS n FROM pg_stat_activity WHERE state = 'idle in transaction'",
      );
      const delivered = await db.query<{ n: number }>(
        "SELECT COUNT(*)::int AS n FROM deliveries WHERE contract = $1",
        [contract],
      );
      unfinished = `${delivered.rows[0]?.n} of ${expected} marked delivered, ${left.rows[0]?.n} left in the outbox, ${open.rows[0]?.n} sessions idle in a transaction`;
    }
    await sleep(1000); // a stray re-send would show up here
    for (const instance of running)
      if (
        instance.child.exitCode === null &&
        instance.child.signalCode === null &&
        instance !== stopped
      )
        rss.push(rssOf(instance.child.pid ?? 0));
  } finally {
    // SIGKILL ends a stopped process too.
    for (const instance of running) await instance.close();
    await db.end();
    await dropSchema(cluster.schema);
    await deleteKeys(cluster.prefix);
    await telegram.close();
    await discord.close();
    await sim.close();
  }

  const sends = acceptedSends(cluster, mintedAt);
  const tg = {
    ...spanRate(sends.tgTimes.map((at) => ({ channel: "", at }))),
    ...tally(telegramIds, sends.tg),
  };
  const dc = {
    ...spanRate(sends.dcTimes.map((at) => ({ channel: "", at }))),
    ...tally(discordIds, sends.dc),
  };
  const limited = rateLimited(cluster);
  const seconds = (ms: number) => `${(ms / 1000).toFixed(1)} s`;
  const how = {
    kill: ", leader killed (SIGKILL) mid fan-out",
    stop: ", leader stopped (SIGSTOP) mid fan-out",
  };
  const label = `${telegramChats} TG + ${discordChannels} DC, ${instances} compiled instances on PostgreSQL + Redis${options.stopLeader ? how[options.stopLeader] : ""}`;
  const idealMs = Math.max(
    (telegramChats / TELEGRAM_GLOBAL_PER_SECOND) * 1000,
    (discordChannels / DISCORD_GLOBAL_PER_SECOND) * 1000,
  );
  const rows: BenchRow[] = [
    {
      name: `Telegram send rate / limit ${TELEGRAM_GLOBAL_PER_SECOND}/s (${label})`,
      value: `${(tg.perSecond / TELEGRAM_GLOBAL_PER_SECOND).toFixed(3)} (${tg.perSecond.toFixed(1)}/s over ${seconds(tg.last - tg.first)})`,
    },
    {
      name: `Discord send rate / limit ${DISCORD_GLOBAL_PER_SECOND}/s (${label})`,
      value: `${(dc.perSecond / DISCORD_GLOBAL_PER_SECOND).toFixed(3)} (${dc.perSecond.toFixed(1)}/s over ${seconds(dc.last - dc.first)})`,
    },
    {
      name: `mint to last send, both platforms (${label}; ideal ${seconds(idealMs)})`,
      value: done
        ? seconds(Math.max(tg.last, dc.last) - mintedAt)
        : `not all delivered after ${seconds(timeoutMs)}: ${unfinished}`,
    },
    {
      name: `peak sends in any rolling second, as the fakes received them: Telegram / Discord (${label}; goal at most 30 / 50)`,
      value: `${peakPerSecond(sends.tgTimes)} / ${peakPerSecond(sends.dcTimes)}`,
    },
    {
      name: `429s answered: Telegram / Discord (${label}; goal 0 / 0)`,
      value: `${limited.telegram} / ${limited.discord}`,
    },
    {
      name: `duplicates / lost, Telegram (${label}; goal 0 / 0${killed ? ", at most 1 duplicate per kill" : ""})`,
      value: `${tg.duplicates} / ${tg.lost}`,
    },
    {
      name: `duplicates / lost, Discord (${label}; goal 0 / 0)`,
      value: `${dc.duplicates} / ${dc.lost}`,
    },
    {
      name: `RSS of each instance after the fan-out (${label})`,
      value: rss.map((bytes) => `${(bytes / 2 ** 20).toFixed(0)} MB`).join(", "),
    },
  ];
  if (killed) {
    const { tgTimes, dcTimes } = acceptedSends(cluster, killed.at + 100);
    rows.push({
      name: `leader (instance ${killed.index}) ${options.stopLeader === "stop" ? "stopped" : "killed"} after ${killed.sentBefore} Telegram sends: lease taken over / first send after (${label}; goal < 10 s)`,
      value: `${seconds(killed.takeoverMs)} / ${seconds(Math.min(...tgTimes, ...dcTimes) - killed.at)}`,
    });
  }
  return rows;
}
