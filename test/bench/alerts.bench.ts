import { mkdtempSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { Writable } from "node:stream";
import { NFT_CONTRACT_TYPES } from "../../src/api/schemas.ts";
import { createBot } from "../../src/bot.ts";
import { parseConfig } from "../../src/config.ts";
import { createLogger } from "../../src/log.ts";
import { startSimulator } from "../../src/simulator/index.ts";
import { openDatabase } from "../../src/store/sqlite/index.ts";
import { startFakeDiscord } from "../fakes/discord/index.ts";
import { startFakeTelegram, TELEGRAM_RATE_LIMITS } from "../fakes/telegram/index.ts";
import { sqliteDbOf } from "../helpers.ts";
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
    "INSERT INTO subscriptions (platform, chat_id, types, created_by, created_at) VALUES (?, ?, 'all', 'bench', ?)",
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
  const tally = (ids: string[], sends: Accepted[]) => {
    const counts = new Map<string, number>();
    for (const send of sends) counts.set(send.channel, (counts.get(send.channel) ?? 0) + 1);
    let duplicates = 0;
    let lost = 0;
    for (const id of ids) {
      const n = counts.get(id) ?? 0;
      if (n === 0) lost++;
      else duplicates += n - 1;
    }
    return { duplicates, lost };
  };
  const tg = { ...spanRate(tgOk), ...tally(telegramIds, tgOk) };
  const dc = { ...spanRate(dcOk), ...tally(discordIds, dcOk) };
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
