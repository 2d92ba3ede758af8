import { mkdtempSync, readdirSync, readFileSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import type { Simulator } from "../../src/simulator/index.ts";
import { COMPILED_BOT } from "../compiled.ts";
import type { Checkout } from "./checkouts.ts";
import { sideBySide } from "./checkouts.ts";
import type { BenchRow } from "./report.ts";

/**
 * Issue 34, item 10: the host's memory while the compiled console bot answers 240 chart-heavy
 * commands (distinct /owners 365d, /owners 30d and /audience pictures, none from the chart cache).
 * Every 100 ms, from outside (/proc), the bot's resident set, its chart painter's (the bot's child
 * processes), and their sum; the peak of each, and the sum's own peak (not the sum of the peaks).
 * RSS counts a page in every process that maps it, so the node binary's pages, which the bot and
 * its painter share in the page cache, are in both: the painter's anonymous part (its heap,
 * Skia's and the allocator's memory; no other process holds it) is printed beside it.
 */

export const CHART_COMMANDS = 240;
const SAMPLE_MS = 100;
/** The painter exits after a quiet minute (src/render/charts.ts); a few seconds more for V8. */
const SETTLE_MS = 66_000;

const sleep = (ms: number) => new Promise((resolve) => setTimeout(resolve, ms));

/** A process's resident set and its anonymous part (bytes), from /proc; zeros once it is gone. */
export function memoryOf(pid: number): { rss: number; anon: number } {
  try {
    const status = readFileSync(`/proc/${pid}/status`, "utf8");
    const kb = (field: string) =>
      Number(new RegExp(`^${field}:\\s+(\\d+) kB`, "m").exec(status)?.[1] ?? 0);
    return { rss: kb("VmRSS") * 1024, anon: kb("RssAnon") * 1024 };
  } catch {
    return { rss: 0, anon: 0 };
  }
}

/** The ids of the processes whose parent is `pid` (the painter is the bot's only child). */
export function childrenOf(pid: number): number[] {
  const children: number[] = [];
  for (const name of readdirSync("/proc")) {
    if (!/^\d+$/.test(name)) continue;
    try {
      const stat = readFileSync(`/proc/${name}/stat`, "utf8");
      if (Number(stat.slice(stat.lastIndexOf(")") + 2).split(" ")[1]) === pid)
        children.push(Number(name));
    } catch {
      // Gone since the listing.
    }
  }
  return children;
}

interface Peaks {
  bot: number;
  painter: number;
  sum: number;
  botAnon: number;
  painterAnon: number;
  sumAnon: number;
}

/** Samples the bot and its children every 100 ms until `stop()`: the peak of each, and of sums. */
function sampleTree(pid: number): { stop(): Peaks } {
  const peaks: Peaks = { bot: 0, painter: 0, sum: 0, botAnon: 0, painterAnon: 0, sumAnon: 0 };
  const sample = () => {
    const bot = memoryOf(pid);
    const painter = { rss: 0, anon: 0 };
    for (const child of childrenOf(pid)) {
      const own = memoryOf(child);
      painter.rss += own.rss;
      painter.anon += own.anon;
    }
    peaks.bot = Math.max(peaks.bot, bot.rss);
    peaks.painter = Math.max(peaks.painter, painter.rss);
    peaks.sum = Math.max(peaks.sum, bot.rss + painter.rss);
    peaks.botAnon = Math.max(peaks.botAnon, bot.anon);
    peaks.painterAnon = Math.max(peaks.painterAnon, painter.anon);
    peaks.sumAnon = Math.max(peaks.sumAnon, bot.anon + painter.anon);
  };
  sample();
  const timer = setInterval(sample, SAMPLE_MS);
  return {
    stop() {
      clearInterval(timer);
      sample();
      return peaks;
    },
  };
}

/** Collections to chart, straight from the service. */
async function collections(sim: Simulator, count: number): Promise<string[]> {
  const found: string[] = [];
  for (let offset = 0; found.length < count; offset += 100) {
    const response = await fetch(
      `${sim.url}/foundational/v1beta2/contracts?limit=100&offset=${offset}`,
      { headers: { "x-api-key": sim.apiKey } },
    );
    const page = (await response.json()) as { contracts?: { address: string }[] };
    const addresses = (page.contracts ?? []).map((contract) => contract.address);
    found.push(...addresses);
    if (addresses.length < 100) break;
  }
  return found.slice(0, count);
}

export interface ChartLoad extends Peaks {
  pictures: number;
  seconds: number;
  /** The bot alone, then with the painter, a second after the last answer. */
  after: { bot: number; painter: number };
  /** A minute later: the painter has exited after its quiet minute. */
  settled: { bot: number; painter: number };
}

/** One checkout's compiled console bot through the 240 commands, sampled from outside. */
async function chartLoad(
  sim: Simulator,
  env: Record<string, string>,
  dir: string,
  lines: readonly string[],
  start: (env: Record<string, string>, args: readonly string[], cwd: string) => ChildLike,
): Promise<ChartLoad> {
  const dataDir = mkdtempSync(join(tmpdir(), "bench-charts-"));
  const bot = start(
    {
      ...env,
      DATA_DIR: dataDir,
      API_BASE_URL: sim.url,
      API_KEY: sim.apiKey,
      // One person asks everything: the per-person and per-chat limits would refuse most of it.
      RATE_LIMIT_BURST: "1000",
      RATE_LIMIT_PER_MINUTE: "100000",
      RATE_LIMIT_CHAT_BURST: "1000",
      RATE_LIMIT_CHAT_PER_MINUTE: "100000",
    },
    COMPILED_BOT,
    dir,
  );
  const pid = bot.child.pid ?? 0;
  const pictures = () => (bot.output().match(/^Picture: .+\.png$/gm) ?? []).length;
  try {
    bot.child.stdin?.write("/whois vitalik.eth\n");
    await until("the first answer", () => /^Address: 0x/m.test(bot.output()), 60_000);
    const sampler = sampleTree(pid);
    const started = performance.now();
    // Lines are answered one after another, in order: all of them queued at once, then a last
    // /whois, whose answer says that every chart command before it has been answered.
    const addresses = () => (bot.output().match(/^Address: 0x/gm) ?? []).length;
    bot.child.stdin?.write(`${lines.join("\n")}\n/whois vitalik.eth\n`);
    await until(`${lines.length} answers`, () => addresses() >= 2, 900_000);
    const seconds = (performance.now() - started) / 1000;
    const peaks = sampler.stop();
    await sleep(1000);
    const painterNow = () =>
      childrenOf(pid).reduce((total, child) => total + memoryOf(child).rss, 0);
    const after = { bot: memoryOf(pid).rss, painter: painterNow() };
    await sleep(SETTLE_MS);
    const settled = { bot: memoryOf(pid).rss, painter: painterNow() };
    return { ...peaks, pictures: pictures(), seconds, after, settled };
  } finally {
    bot.child.stdin?.end();
    await bot.stop();
    rmSync(dataDir, { recursive: true, force: true });
  }
}

interface ChildLike {
  child: import("node:child_process").ChildProcess;
  output(): string;
  stop(): Promise<void>;
}

async function until(what: string, done: () => boolean, timeoutMs: number): Promise<void> {
  const deadline = Date.now() + timeoutMs;
  while (!done()) {
    if (Date.now() > deadline) throw new Error(`timed out waiting for ${what}`);
    await sleep(20);
  }
}

const mb = (bytes: number) => `${(bytes / 1e6).toFixed(1)} MB`;

/**
 * The rows: for each checkout (this one and BENCH_COMPARE_DIR's), the peaks of the bot, of the
 * painter and of their sum, RSS and PSS, then the memory a second and a minute after the burst.
 */
export async function benchChartLoad(
  sim: Simulator,
  checkouts: readonly Checkout[],
  env: Record<string, string>,
  start: (env: Record<string, string>, args: readonly string[], cwd: string) => ChildLike,
): Promise<BenchRow[]> {
  const subjects = await collections(sim, CHART_COMMANDS / 3);
  const lines = subjects.flatMap((c) => [
    `/owners ${c} 365d`,
    `/owners ${c} 30d`,
    `/audience ${c}`,
  ]);
  const runs = new Map<Checkout, ChartLoad>();
  for (const checkout of checkouts)
    runs.set(checkout, await chartLoad(sim, env, checkout.dir, lines, start));
  const of = (checkout: Checkout) => runs.get(checkout) as ChartLoad;
  const label = `${lines.length} chart commands, compiled console bot`;
  return [
    {
      name: `${label}: peak RSS, bot · painter · their sum (sampled every ${SAMPLE_MS} ms; goal: sum ≤ 150 MB, painter ≤ 50 MB)`,
      value: sideBySide(checkouts, (c) => {
        const r = of(c);
        return `bot ${mb(r.bot)} · painter ${mb(r.painter)} · sum ${mb(r.sum)} (${r.pictures} pictures in ${r.seconds.toFixed(0)} s)`;
      }),
    },
    {
      name: `${label}: peak anonymous memory (RssAnon: heaps, Skia's and the allocator's; no file pages), bot · painter · their sum`,
      value: sideBySide(
        checkouts,
        (c) =>
          `bot ${mb(of(c).botAnon)} · painter ${mb(of(c).painterAnon)} · sum ${mb(of(c).sumAnon)}`,
      ),
    },
    {
      name: `${label}: RSS 1 s after the last picture, bot · painter; and ${SETTLE_MS / 1000} s later (the painter exited after its quiet minute)`,
      value: sideBySide(
        checkouts,
        (c) =>
          `${mb(of(c).after.bot)} · ${mb(of(c).after.painter)}; then ${mb(of(c).settled.bot)} · ${mb(of(c).settled.painter)}`,
      ),
    },
  ];
}
