import { spawn } from "node:child_process";
import { monitorEventLoopDelay } from "node:perf_hooks";
import { startFakeDiscord } from "../fakes/discord/index.ts";
import { startFakeTelegram } from "../fakes/telegram/index.ts";
import { sqliteDbOf } from "../helpers.ts";
import type { BenchRow } from "./report.ts";
import { command, productionBot, startChildSimulator, WIRING } from "./runtime.bench.ts";

const sleep = (ms: number) => new Promise((resolve) => setTimeout(resolve, ms));

const quantile = (sorted: number[], q: number) =>
  sorted[Math.min(sorted.length - 1, Math.floor(q * sorted.length))] ?? Number.NaN;

/** Discord's documented limits, as in the fan-out bench. */
const DISCORD_LIMITS = { perChannel: { limit: 5, windowMs: 5000 }, globalPerSecond: 50 };

/** The rate-limited fakes, where the bot finds them and how many messages they accepted. */
interface Platforms {
  env: Record<string, string>;
  discordIds: string[];
  sends(): Promise<number>;
  close(): Promise<void>;
}

async function fakesHere(discordChannels: number): Promise<Platforms> {
  const telegram = await startFakeTelegram({ rateLimits: true });
  const discord = await startFakeDiscord({ rateLimits: DISCORD_LIMITS });
  const discordIds = Array.from(
    { length: discordChannels },
    (_, i) => discord.addChannel({ name: `alerts-${i}` }).id,
  );
  return {
    env: {
      TELEGRAM_BOT_TOKEN: telegram.token,
      TELEGRAM_API_ROOT: telegram.apiRoot,
      DISCORD_TOKEN: discord.token,
      DISCORD_API_URL: discord.apiBase,
    },
    discordIds,
    sends: async () =>
      telegram.sent.filter((call) => call.method === "sendMessage" && call.ok).length +
      discord.requestsOf("createMessage", (r) => r.status >= 200 && r.status < 300).length,
    async close() {
      await telegram.close();
      await discord.close();
    },
  };
}

/** The same fakes in another process (test/bench/fakes-child.ts). */
function fakesInChild(discordChannels: number): Promise<Platforms> {
  return new Promise((resolve, reject) => {
    const child = spawn(process.execPath, ["--import", "tsx", "test/bench/fakes-child.ts"], {
      env: { ...process.env, BENCH_DISCORD_CHANNELS: String(discordChannels) },
      stdio: ["pipe", "pipe", "inherit"],
    });
    const counted: ((n: number) => void)[] = [];
    let buffer = "";
    child.stdout.on("data", (chunk) => {
      buffer += chunk;
      for (let at = buffer.indexOf("\n"); at >= 0; at = buffer.indexOf("\n")) {
        const message = JSON.parse(buffer.slice(0, at)) as {
          sends?: number;
          telegram: { token: string; apiRoot: string };
          discord: { token: string; apiBase: string };
          discordIds: string[];
        };
        buffer = buffer.slice(at + 1);
        if (message.sends !== undefined) {
          counted.shift()?.(message.sends);
          continue;
        }
        resolve({
          env: {
            TELEGRAM_BOT_TOKEN: message.telegram.token,
            TELEGRAM_API_ROOT: message.telegram.apiRoot,
            DISCORD_TOKEN: message.discord.token,
            DISCORD_API_URL: message.discord.apiBase,
          },
          discordIds: message.discordIds,
          sends: () =>
            new Promise((resolveSends) => {
              counted.push(resolveSends);
              child.stdin.write("sends\n");
            }),
          close: () =>
            new Promise((resolveClose) => {
              child.once("exit", () => resolveClose());
              child.kill("SIGTERM");
            }),
        });
      }
    });
    child.on("error", reject);
  });
}

interface Window {
  latencies: number[];
  /** Event-loop delay over the window (ms): p99 and max. */
  loopP99: number;
  loopMax: number;
  elapsedMs: number;
  /** CPU time the bot's process used over the window (ms, user + system). */
  cpuMs: number;
  /** Sends the fakes accepted at the window's start and end. */
  sendsAt: [number, number];
}

/**
 * Warm commands, 16 in flight, while one mint fans out to 1,000 Telegram chats and 1,000 Discord
 * channels (issue 28's goal: p99 <= 15 ms), through the production wiring (`productionBot`:
 * SQLite, logs at info to a file, metrics on) with both adapters against the rate-limited fakes.
 * The same mix with no fan-out is measured in the same run before the mint and after the last
 * send, so the figures compare side by side. The simulator runs in its own process; the fakes
 * share the bot's process (their share of the loop is reported from a window with the fan-out
 * but no commands).
 */
export async function benchDispatchDuringFanOut(
  fakes: "child" | "in-process",
): Promise<BenchRow[]> {
  const telegramChats = 1000;
  const discordChannels = 1000;
  const windowMs = 8000;
  const inFlight = 16;
  const sim = await startChildSimulator(0);
  const platforms =
    fakes === "child" ? await fakesInChild(discordChannels) : await fakesHere(discordChannels);
  const { discordIds, sends } = platforms;
  const telegramIds = Array.from({ length: telegramChats }, (_, i) => String(100_000_001 + i));
  const { bot, close } = await productionBot(sim, {
    ...platforms.env,
    POLL_INTERVAL_S: "1",
    DELIVERY_TICK_MS: "50",
  });
  const db = sqliteDbOf(bot);
  // Subscribed interleaved, as people subscribe over time; one transaction for them all.
  const insert = db.prepare(
    "INSERT INTO subscriptions (platform, chat_id, chain, types, created_by, created_at) VALUES (?, ?, 'ethereum', 'all', 'bench', ?)",
  );
  db.transaction(() => {
    for (let i = 0; i < Math.max(telegramChats, discordChannels); i++) {
      const tg = telegramIds[i];
      const dc = discordIds[i];
      if (tg !== undefined) insert.run("telegram", tg, Date.now());
      if (dc !== undefined) insert.run("discord", dc, Date.now());
    }
  })();
  const expected = telegramChats + discordChannels;

  const f = sim.fixtures;
  const mix = [
    ["top", "volume 1d 10"],
    ["audience", f.collection],
    ["nft", `${f.token.contract} ${f.token.tokenId}`],
    ["whois", f.walletEns],
    ["wallet", f.wallet],
    ["owners", `${f.collection} 7d`],
  ] as const;
  const loop = monitorEventLoopDelay({ resolution: 1 });
  /** `inFlight` workers running the mix for `ms` (none with inFlight 0: the loop alone). */
  const measure = async (ms: number, workers = inFlight): Promise<Window> => {
    const latencies: number[] = [];
    const sendsBefore = await sends();
    loop.reset();
    loop.enable();
    const cpu = process.cpuUsage();
    const started = performance.now();
    const until = started + ms;
    await Promise.all(
      Array.from({ length: workers }, async (_, worker) => {
        for (let i = 0; performance.now() < until; i++) {
          const [name, text] = mix[(worker + i) % mix.length] ?? mix[0];
          const at = performance.now();
          await command(bot, name, text);
          latencies.push(performance.now() - at);
        }
      }),
    );
    if (workers === 0) await sleep(ms);
    loop.disable();
    return {
      latencies,
      loopP99: loop.percentile(99) / 1e6,
      loopMax: loop.max / 1e6,
      elapsedMs: performance.now() - started,
      cpuMs: ((used) => (used.user + used.system) / 1000)(process.cpuUsage(cpu)),
      sendsAt: [sendsBefore, await sends()],
    };
  };

  let before: Window;
  let during: Window;
  let alone: Window;
  let after: Window;
  let idle: Window;
  let mintedAt = 0;
  let lastSendMs = Number.NaN;
  let sentInAll = 0;
  try {
    // The first poll sets the cursor to now; a mint before it would not be alerted.
    const cursor = db.prepare<[], { n: number }>(
      "SELECT COUNT(*) AS n FROM kv WHERE key = 'poll_cursor:ethereum'",
    );
    while ((cursor.get()?.n ?? 0) === 0) await sleep(20);
    // As many as benchDispatch runs before its 16 in flight, so the code is as warm.
    for (let i = 0; i < 2200; i++) for (const [name, text] of mix) await command(bot, name, text);
    before = await measure(windowMs);
    await sim.mint();
    mintedAt = performance.now();
    while ((await sends()) === 0) await sleep(5);
    during = await measure(windowMs);
    // The fan-out going on with no commands: the loop delay and CPU it causes alone.
    alone = await measure(5000, 0);
    const outbox = db.prepare<[], { n: number }>("SELECT COUNT(*) AS n FROM outbox");
    while ((await sends()) < expected || (outbox.get()?.n ?? 0) > 0) {
      if (performance.now() - mintedAt > 180_000) break;
      await sleep(50);
    }
    lastSendMs = performance.now() - mintedAt;
    sentInAll = await sends();
    // Neither: what the bot's timers and long polls cost on their own.
    idle = await measure(5000, 0);
    after = await measure(windowMs);
  } finally {
    await close();
    await platforms.close();
    sim.close();
  }

  const p = (window: Window) => {
    const sorted = [...window.latencies].sort((a, b) => a - b);
    return `p50 ${quantile(sorted, 0.5).toFixed(3)} ms, p99 ${quantile(sorted, 0.99).toFixed(3)} ms, max ${(sorted.at(-1) ?? Number.NaN).toFixed(1)} ms (${sorted.length} commands, ${((sorted.length * 1000) / window.elapsedMs).toFixed(0)}/s)`;
  };
  const loopOf = (window: Window) =>
    `p99 ${window.loopP99.toFixed(1)} ms, max ${window.loopMax.toFixed(1)} ms`;
  const label = `${telegramChats} TG + ${discordChannels} DC`;
  return [
    {
      name: "production wiring",
      value: `${WIRING}, Telegram + Discord adapters on the rate-limited fakes (${fakes === "child" ? "in another process" : "in the bot's process"})`,
    },
    {
      name: `warm commands, ${inFlight} in flight, no fan-out (before the mint)`,
      value: p(before),
    },
    {
      name: `warm commands, ${inFlight} in flight, during the fan-out to ${label} (goal p99 <= 15 ms)`,
      value: p(during),
    },
    { name: "warm commands, 16 in flight, no fan-out (after the last send)", value: p(after) },
    {
      name: "fan-out progress over the window with commands: sends done at its start → end",
      value: `${during.sendsAt[0]} → ${during.sendsAt[1]} of ${expected} (${(during.elapsedMs / 1000).toFixed(1)} s)`,
    },
    {
      name: "event-loop delay: before / during the fan-out / after",
      value: `${loopOf(before)} / ${loopOf(during)} / ${loopOf(after)}`,
    },
    {
      name: `event-loop delay, fan-out with no commands (fakes ${fakes === "child" ? "in another process" : "in the bot's process"})`,
      value: `${loopOf(alone)}; sends ${alone.sendsAt[0]} → ${alone.sendsAt[1]}`,
    },
    {
      name: `CPU of the bot's process per message sent, fan-out with no commands, its idle CPU taken off (fakes ${fakes === "child" ? "in another process" : "in the bot's process"})`,
      value: `${((alone.cpuMs - (idle.cpuMs * alone.elapsedMs) / idle.elapsedMs) / (alone.sendsAt[1] - alone.sendsAt[0])).toFixed(2)} ms (${(alone.cpuMs / alone.elapsedMs).toFixed(2)} of a core over ${(alone.elapsedMs / 1000).toFixed(1)} s, idle ${(idle.cpuMs / idle.elapsedMs).toFixed(2)})`,
    },
    {
      name: `mint to last send (${label})`,
      value: `${(lastSendMs / 1000).toFixed(1)} s, ${sentInAll} of ${expected} sent`,
    },
  ];
}
