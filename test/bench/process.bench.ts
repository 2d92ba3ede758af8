import { type ChildProcess, execFileSync, spawn } from "node:child_process";
import { mkdtempSync, readFileSync, rmSync } from "node:fs";
import { createServer } from "node:net";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { buildDist } from "../../scripts/build.mjs";
import { parseConfig } from "../../src/config.ts";
import { type Simulator, startSimulator } from "../../src/simulator/index.ts";
import { openDatabase } from "../../src/store/sqlite/index.ts";
import { COMPILED_BOT, ROOT } from "../compiled.ts";
import { type FakeDiscord, startFakeDiscord } from "../fakes/discord/index.ts";
import {
  type FakeTelegram,
  privateChat,
  startFakeTelegram,
  user,
} from "../fakes/telegram/index.ts";
import { benchChartLoad } from "./chart-load.bench.ts";
import { buildCheckout, type Checkout, checkoutsToCompare, sideBySide } from "./checkouts.ts";
import type { BenchRow } from "./report.ts";

/**
 * The compiled bot as production runs it (`node --max-semi-space-size=4 --max-old-space-size=256 dist/main.js`), each figure
 * from a fresh child process: start to first answer, idle RSS, and RSS with 10,000 subscriptions
 * and a full cache. RSS is read from outside (`ps`), as a supervisor or the kernel sees it.
 */

const RUNS = 7;
/** The chart painter's child exits after 60 s idle (src/render/charts.ts); a few seconds more for V8. */
const SETTLE_MS = 66_000;
export const sleep = (ms: number) => new Promise((resolve) => setTimeout(resolve, ms));
export const median = (values: number[]) =>
  [...values].sort((a, b) => a - b)[Math.floor(values.length / 2)] ?? Number.NaN;
export const mb = (bytes: number) => `${(bytes / 1e6).toFixed(1)} MB`;

export function baseEnv(dataDir: string): Record<string, string> {
  const env: Record<string, string> = {};
  for (const key of ["PATH", "HOME"]) if (process.env[key]) env[key] = process.env[key];
  // BENCH_CHILD_NODE_OPTIONS: Node options for the bot only (e.g. --heap-prof), to see where
  // its time or memory goes.
  const options = process.env.BENCH_CHILD_NODE_OPTIONS;
  return {
    ...env,
    ...(options ? { NODE_OPTIONS: options } : {}),
    DATA_DIR: dataDir,
    LOG_LEVEL: "info",
    // BENCH_CHILD_ENV: settings for the bot as JSON (e.g. '{"CACHE_MAX_BYTES":"1048576"}'), to
    // see what one changes.
    ...(JSON.parse(process.env.BENCH_CHILD_ENV ?? "{}") as Record<string, string>),
  };
}

/**
 * The resident set of a process, in bytes, as `ps` reports it: from /proc (a small read, cheap
 * enough to sample every 100 ms), else from `ps`.
 */
export function rssOf(pid: number): number {
  try {
    const kb = /^VmRSS:\s+(\d+) kB/m.exec(readFileSync(`/proc/${pid}/status`, "utf8"))?.[1];
    if (kb) return Number(kb) * 1024;
  } catch {
    // No /proc: ask ps.
  }
  return Number(execFileSync("ps", ["-o", "rss=", "-p", String(pid)], { encoding: "utf8" })) * 1024;
}

/** The peak RSS of a process, sampled every 100 ms from outside until `stop()`. */
export function sampleRss(pid: number): { stop(): number } {
  let peak = rssOf(pid);
  const timer = setInterval(() => {
    try {
      peak = Math.max(peak, rssOf(pid));
    } catch {
      // The process is gone: the peak stands.
    }
  }, 100);
  return {
    stop() {
      clearInterval(timer);
      return peak;
    },
  };
}

export async function freePort(): Promise<number> {
  const server = createServer();
  await new Promise<void>((resolve) => server.listen(0, "127.0.0.1", resolve));
  const { port } = server.address() as { port: number };
  await new Promise<void>((resolve) => server.close(() => resolve()));
  return port;
}

export interface Child {
  child: ChildProcess;
  output: () => string;
  stop(): Promise<void>;
}

/** The compiled bot (or, with `args` and `cwd`, another entry of another checkout) as a child. */
export function startChild(
  env: Record<string, string>,
  args: readonly string[] = COMPILED_BOT,
  cwd = ROOT,
): Child {
  const child = spawn(process.env.BENCH_NODE ?? process.execPath, args, {
    cwd,
    env,
    stdio: "pipe",
  });
  let output = "";
  child.stdout?.on("data", (chunk) => {
    output += chunk;
  });
  child.stderr?.on("data", (chunk) => {
    output += chunk;
  });
  const exited = new Promise<void>((resolve) => child.once("exit", () => resolve()));
  return {
    child,
    output: () => output,
    async stop() {
      if (child.exitCode === null && child.signalCode === null) child.kill("SIGTERM");
      await exited;
    },
  };
}

export async function until(
  what: string,
  done: () => boolean | Promise<boolean>,
  timeoutMs = 30_000,
) {
  const deadline = Date.now() + timeoutMs;
  while (!(await done())) {
    if (Date.now() > deadline) throw new Error(`timed out waiting for ${what}`);
    await sleep(10);
  }
}

/** Start of `node -e 0` to its exit, median of RUNS. */
async function bareNodeStart(): Promise<number> {
  const samples: number[] = [];
  for (let i = 0; i < RUNS; i++) {
    const started = performance.now();
    const child = spawn(process.execPath, ["-e", "0"], { stdio: "ignore" });
    await new Promise((resolve) => child.once("exit", resolve));
    samples.push(performance.now() - started);
  }
  return median(samples);
}

interface FirstAnswer {
  ms: number;
  idleRss: number;
}

/**
 * Console mode against the data service (here the simulator, out of process): spawn to answer,
 * then the RSS 1 s later. With BENCH_COMPARE_DIR, that checkout's dist/ too (built first), the
 * starts taking turns so that a busy machine weighs on both alike.
 */
async function firstAnswers(
  sim: Simulator,
  checkouts: readonly Checkout[],
): Promise<Map<Checkout, FirstAnswer>> {
  const samples = new Map<Checkout, { ms: number[]; rss: number[] }>(
    checkouts.map((checkout) => [checkout, { ms: [], rss: [] }]),
  );
  for (let i = 0; i < RUNS; i++)
    for (const checkout of checkouts) {
      const mine = samples.get(checkout) ?? { ms: [], rss: [] };
      const dataDir = mkdtempSync(join(tmpdir(), "bench-process-"));
      const started = performance.now();
      const bot = startChild(
        { ...baseEnv(dataDir), API_BASE_URL: sim.url, API_KEY: sim.apiKey },
        COMPILED_BOT,
        checkout.dir,
      );
      try {
        bot.child.stdin?.write("/whois vitalik.eth\n");
        await until("the /whois answer", () => /^Address: 0x/m.test(bot.output()));
        mine.ms.push(performance.now() - started);
        await sleep(1000);
        mine.rss.push(rssOf(bot.child.pid ?? 0));
      } finally {
        bot.child.stdin?.end();
        await bot.stop();
        rmSync(dataDir, { recursive: true, force: true });
      }
    }
  return new Map(
    checkouts.map((checkout) => {
      const mine = samples.get(checkout);
      return [checkout, { ms: median(mine?.ms ?? []), idleRss: median(mine?.rss ?? []) }];
    }),
  );
}

/** Bare node and the console bot's first answer (side by side with BENCH_COMPARE_DIR's). */
async function startRows(sim: Simulator, checkouts: readonly Checkout[]): Promise<BenchRow[]> {
  const bare = await bareNodeStart();
  const answers = await firstAnswers(sim, checkouts);
  const answer = (checkout: Checkout) => answers.get(checkout) ?? { ms: Number.NaN, idleRss: 0 };
  return [
    {
      name: `bare \`node -e 0\`, start to exit, median of ${RUNS}`,
      value: `${bare.toFixed(0)} ms`,
    },
    {
      name: `start to first answer, compiled, console (/whois vitalik.eth), median of ${RUNS} (goal ≤ 600 ms)`,
      value: sideBySide(
        checkouts,
        (checkout) =>
          `${answer(checkout).ms.toFixed(0)} ms (${(answer(checkout).ms / bare).toFixed(1)}× bare node)`,
      ),
    },
    {
      name: "idle RSS, console, 1 s after the first answer (goal ≤ 100 MB)",
      value: sideBySide(checkouts, (checkout) => mb(answer(checkout).idleRss)),
    },
  ];
}

/** This checkout and BENCH_COMPARE_DIR's, when set, its dist/ built. */
function comparedCheckouts(): Checkout[] {
  const checkouts = checkoutsToCompare();
  for (const checkout of checkouts) if (checkout.dir !== ROOT) buildCheckout(checkout.dir);
  return checkouts;
}

/**
 * `npm run bench -- chart-load`: the bot and its chart painter over 240 chart commands (side by side
 * with BENCH_COMPARE_DIR's), the part of `process` that item 10 of issue 34 is about.
 */
export async function benchChartLoadAlone(): Promise<BenchRow[]> {
  if (!process.env.BENCH_NO_BUILD) await buildDist(ROOT);
  // The data's clock stands still, so both checkouts' owner counts are read at the same instant.
  // (The bot's pictures still differed between runs, so byte-identity is checked on the painters
  // themselves: chart-load.bench.ts, painter-digest.ts.)
  const now = Date.now();
  const sim = await startSimulator({ mintIntervalMs: 0, apiKey: "bench-key", now: () => now });
  try {
    return await benchChartLoad(sim, comparedCheckouts(), baseEnv(""), startChild);
  } finally {
    await sim.close();
  }
}

/** `npm run bench -- first-answer`: the start figures alone, without the platforms' runs. */
export async function benchFirstAnswer(): Promise<BenchRow[]> {
  if (!process.env.BENCH_NO_BUILD) await buildDist(ROOT);
  const sim = await startSimulator({ mintIntervalMs: 0, apiKey: "bench-key" });
  try {
    return await startRows(sim, comparedCheckouts());
  } finally {
    await sim.close();
  }
}

export interface PlatformRun {
  bot: Child;
  metricsUrl: string;
  telegram: FakeTelegram;
  discord: FakeDiscord;
  /** The subscribed chats: Telegram chat ids and the fake's Discord channel ids. */
  subscribed: { telegram: string[]; discord: string[] };
  /** Which checkout's bot it is, for messages. */
  label: string;
  close(): Promise<void>;
}

/** The compiled bot (of `dir`'s checkout) with Discord and Telegram configured against the fakes. */
export async function startWithPlatforms(
  sim: Simulator,
  subscriptions: number,
  dir = ROOT,
): Promise<PlatformRun> {
  const telegram = await startFakeTelegram();
  const discord = await startFakeDiscord();
  const dataDir = mkdtempSync(join(tmpdir(), "bench-process-"));
  // Half Telegram chats, half Discord channels (which the fake must hold to accept messages).
  const subscribed = {
    telegram: Array.from({ length: Math.ceil(subscriptions / 2) }, (_, i) =>
      String(100_000_001 + i),
    ),
    discord: Array.from(
      { length: Math.floor(subscriptions / 2) },
      (_, i) => discord.addChannel({ name: `alerts-${i}` }).id,
    ),
  };
  if (subscriptions > 0) {
    const db = openDatabase(dataDir);
    // One transaction for them all (the store's upsert commits each one).
    const insert = db.prepare(
      "INSERT INTO subscriptions (platform, chat_id, chain, types, created_by, created_at) VALUES (?, ?, 'ethereum', 'all', 'bench', ?)",
    );
    db.transaction(() => {
      for (let i = 0; i < subscriptions; i++) {
        const [platform, ids] =
          i % 2 ? ["discord", subscribed.discord] : ["telegram", subscribed.telegram];
        insert.run(platform, ids[Math.floor(i / 2)], Date.now());
      }
    })();
    db.close();
  }
  const port = await freePort();
  const bot = startChild(
    {
      ...baseEnv(dataDir),
      API_BASE_URL: sim.url,
      API_KEY: sim.apiKey,
      TELEGRAM_BOT_TOKEN: telegram.token,
      TELEGRAM_API_ROOT: telegram.apiRoot,
      DISCORD_TOKEN: discord.token,
      DISCORD_API_URL: discord.apiBase,
      METRICS_PORT: String(port),
      // The cache is filled by many people at once: the upstream budget must not be the bottleneck.
      API_BUDGET_PER_SECOND: "2000",
      API_BUDGET_BURST: "2000",
    },
    COMPILED_BOT,
    dir,
  );
  const metricsUrl = `http://127.0.0.1:${port}`;
  await until(
    "the bot's health",
    async () => {
      try {
        return (await fetch(`${metricsUrl}/healthz`)).ok;
      } catch {
        return false;
      }
    },
    60_000,
  );
  return {
    bot,
    metricsUrl,
    telegram,
    discord,
    subscribed,
    label: dir,
    async close() {
      await bot.stop();
      await telegram.close();
      await discord.close();
      rmSync(dataDir, { recursive: true, force: true });
    },
  };
}

async function cacheBytes(metricsUrl: string): Promise<number> {
  const text = await (await fetch(`${metricsUrl}/metrics`)).text();
  return Number(/^bot_cache_bytes (\d+)/m.exec(text)?.[1] ?? 0);
}

/** Collections and owner wallets to ask about, straight from the service. */
async function subjects(sim: Simulator): Promise<{ collections: string[]; wallets: string[] }> {
  const get = async (path: string) =>
    (await (await fetch(`${sim.url}${path}`, { headers: { "x-api-key": sim.apiKey } })).json()) as {
      contracts?: { address: string }[];
      owner?: { address: string }[];
    };
  const collections: string[] = [];
  for (let offset = 0; offset < 1000; offset += 100) {
    const page = await get(`/foundational/v1beta2/contracts?limit=100&offset=${offset}`);
    collections.push(...(page.contracts ?? []).map((contract) => contract.address));
    if ((page.contracts ?? []).length < 100) break;
  }
  const wallets = new Set<string>();
  for (const collection of collections.slice(0, 50)) {
    const page = await get(`/collections/v1beta2/${collection}/owners_list?limit=100`);
    for (const owner of page.owner ?? []) wallets.add(owner.address);
  }
  return { collections, wallets: [...wallets] };
}

/**
 * Distinct commands from distinct people (each in their own private chat, so no rate limit
 * applies) until the cache holds at least 95% of CACHE_MAX_BYTES or the commands run out.
 */
export async function fillCache(
  run: PlatformRun,
  sim: Simulator,
  maxBytes: number,
): Promise<number> {
  const { collections, wallets } = await subjects(sim);
  const lines = [
    ...collections.flatMap((c) => [
      `/owners ${c} 365d`,
      `/owners ${c} 30d`,
      `/audience ${c}`,
      `/stats ${c}`,
      `/common ${c}`,
    ]),
    ...wallets.flatMap((w) => [`/wallet ${w}`, `/walletstats ${w}`, `/whois ${w}`]),
  ];
  const replied = new Set<number>();
  const answered = (from: number) => {
    for (let i = from; i < run.telegram.sent.length; i++) {
      const call = run.telegram.sent[i];
      if (call?.method.startsWith("send")) replied.add(Number(call.params.chat_id));
    }
    return run.telegram.sent.length;
  };
  let seen = 0;
  let bytes = 0;
  const batch = 25;
  for (let i = 0; i < lines.length && bytes < maxBytes * 0.95; i += batch) {
    const ids: number[] = [];
    for (const [j, line] of lines.slice(i, i + batch).entries()) {
      const id = 500_000 + i + j;
      ids.push(id);
      const person = user(id);
      run.telegram.pushUpdate(run.telegram.message(privateChat(person), person, line));
    }
    await until("the batch's answers", () => {
      seen = answered(seen);
      return ids.every((id) => replied.has(id));
    });
    bytes = await cacheBytes(run.metricsUrl);
  }
  return bytes;
}

/**
 * One mint, posted to every subscribed chat: from the mint to the last send, the bot's RSS sampled
 * every 100 ms, then once more 10 s after.
 */
async function fanOutAll(
  run: PlatformRun,
  sim: Simulator,
): Promise<{ peak: number; seconds: number; sent: number; settled: number }> {
  const pid = run.bot.child.pid ?? 0;
  const telegramChats = new Set(run.subscribed.telegram);
  const discordChannels = new Set(run.subscribed.discord);
  const sent = () => {
    const telegram = new Set<string>();
    for (const call of run.telegram.sent)
      if (call.method.startsWith("send") && telegramChats.has(String(call.params.chat_id)))
        telegram.add(String(call.params.chat_id));
    const discord = new Set<string>();
    for (const request of run.discord.requestsOf("createMessage"))
      if (request.status < 300 && discordChannels.has(String(request.params.channelId)))
        discord.add(String(request.params.channelId));
    return telegram.size + discord.size;
  };
  const all = telegramChats.size + discordChannels.size;
  const sampler = sampleRss(pid);
  const started = performance.now();
  sim.mint(1);
  // The poller finds the mint within its 30 s; Telegram's 30 messages a second make 5,000 chats
  // take some three minutes more.
  let done = 0;
  await until(
    `the fan-out's last send (${run.label})`,
    async () => {
      await sleep(1000);
      const now = sent();
      // Progress on stderr every 10%, so a stall says where it stopped.
      if (Math.floor((10 * now) / all) > Math.floor((10 * done) / all))
        process.stderr.write(`fan-out (${run.label}): ${now} of ${all} chats\n`);
      done = now;
      return done >= all;
    },
    600_000,
  );
  const seconds = (performance.now() - started) / 1000;
  const peak = sampler.stop();
  await sleep(10_000);
  return { peak, seconds, sent: done, settled: rssOf(pid) };
}

interface LoadFigures {
  filled: number;
  fillPeak: number;
  fullRss: number;
  settledRss: number;
  fanOut: { peak: number; seconds: number; sent: number; settled: number };
}

/**
 * One checkout's compiled bot with 10,000 subscriptions: distinct commands fill its cache, it
 * settles, then one mint fans out to every subscribed chat.
 */
export async function subscribedLoad(maxBytes: number, checkout: Checkout): Promise<LoadFigures> {
  // A simulator of its own: each checkout fans out the same first mint. On one shared simulator
  // the second checkout's fan-out never came (cause not found: with a simulator each, both end).
  const sim = await startSimulator({ mintIntervalMs: 0, apiKey: "bench-key" });
  const full = await startWithPlatforms(sim, 10_000, checkout.dir);
  const pid = full.bot.child.pid ?? 0;
  try {
    const sampler = sampleRss(pid);
    const filled = await fillCache(full, sim, maxBytes);
    const fillPeak = sampler.stop();
    await sleep(1000);
    const fullRss = rssOf(pid);
    // Once the burst is over: the chart painter's child has exited after its idle minute, and V8's
    // memory reducer has given back the heap the burst's garbage took.
    await sleep(SETTLE_MS);
    const settledRss = rssOf(pid);
    const fanOut = await fanOutAll(full, sim);
    return { filled, fillPeak, fullRss, settledRss, fanOut };
  } finally {
    await full.close();
    await sim.close();
  }
}

export async function benchProcess(): Promise<BenchRow[]> {
  if (!process.env.BENCH_NO_BUILD) await buildDist(ROOT);
  const sim = await startSimulator({ mintIntervalMs: 0, apiKey: "bench-key" });
  const maxBytes = parseConfig({}).cache.maxBytes;
  try {
    const checkouts = comparedCheckouts();
    const starts = await startRows(sim, checkouts);
    const charts = await benchChartLoad(sim, checkouts, baseEnv(""), startChild);

    const idlePlatformsRss = new Map<Checkout, number>();
    for (const checkout of checkouts) {
      const idle = await startWithPlatforms(sim, 0, checkout.dir);
      await sleep(1000);
      idlePlatformsRss.set(checkout, rssOf(idle.bot.child.pid ?? 0));
      await idle.close();
    }

    // The 10,000-subscription run, for each checkout in turn (issue 35: side by side).
    const loads = new Map<Checkout, LoadFigures>();
    for (const checkout of checkouts) loads.set(checkout, await subscribedLoad(maxBytes, checkout));
    const load = (read: (figures: LoadFigures) => string) =>
      sideBySide(checkouts, (checkout) => read(loads.get(checkout) as LoadFigures));
    return [
      ...starts,
      ...charts,
      {
        name: "idle RSS, Discord + Telegram configured, 1 s after start (goal ≤ 110 MB)",
        value: sideBySide(checkouts, (checkout) => mb(idlePlatformsRss.get(checkout) ?? 0)),
      },
      {
        name: "peak RSS, Discord + Telegram, 10,000 subscriptions, while distinct commands fill the cache (every 100 ms; goal ≤ 160 MB)",
        value: load(
          (f) => `${mb(f.fillPeak)} (cache ${mb(f.filled)} of CACHE_MAX_BYTES ${mb(maxBytes)})`,
        ),
      },
      {
        name: "RSS 1 s after the filling burst (goal ≤ 160 MB)",
        value: load((f) => mb(f.fullRss)),
      },
      {
        name: `the same process ${SETTLE_MS / 1000} s later, settled (chart painter exited, heap reduced; goal ≤ 130 MB)`,
        value: load((f) => mb(f.settledRss)),
      },
      {
        name: "then one mint fanned out to all 10,000 subscribed chats at the platforms' pace: peak RSS (every 100 ms, from the mint to the last send; goal ≤ 160 MB)",
        value: load(
          (f) =>
            `${mb(f.fanOut.peak)} (${f.fanOut.sent} sends in ${f.fanOut.seconds.toFixed(0)} s; RSS ${mb(f.fanOut.settled)} 10 s after the last)`,
        ),
      },
    ];
  } finally {
    await sim.close();
  }
}
