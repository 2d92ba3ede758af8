import { createHash } from "node:crypto";
import { mkdtempSync, readdirSync, readFileSync, rmSync } from "node:fs";
import { loadavg, tmpdir } from "node:os";
import { join } from "node:path";
import type { Simulator } from "../../src/simulator/index.ts";
import { COMPILED_BOT } from "../compiled.ts";
import type { Checkout } from "./checkouts.ts";
import { sideBySide } from "./checkouts.ts";
import { uniquePages } from "./pages.ts";
import { painterDigest } from "./painter-digest.ts";
import type { BenchRow } from "./report.ts";

/**
 * Issue 34, item 10: the host's memory while the compiled console bot answers 240 chart-heavy
 * commands (distinct /owners 365d, /owners 30d and /audience pictures, none from the chart cache).
 * Every 100 ms, from outside (/proc/<pid>/smaps_rollup), the bot's memory, its chart painter's (the
 * bot's child processes, if any), and their sum; the peak of each, and the sum's own peak (not the
 * sum of the peaks). Three measures: RSS counts a page in every process that maps it, so the node
 * binary's pages, which the bot and a child painter share in the page cache, are in both; PSS
 * divides each shared page between them, so the PSS sum is what the host spends; the anonymous part
 * (heaps, Skia's and the allocator's memory) belongs to its process alone. The pictures are hashed,
 * so two checkouts' runs show whether they drew byte-identical pictures. As root, the pages of
 * the pair are also counted once each (pages.ts): PSS on a shared machine divides the node binary
 * with every other node process there, which a host of its own would not.
 */

export const CHART_COMMANDS = 240;
const SAMPLE_MS = 100;
/** The pages of the pair, each once (pages.ts), read less often: a read takes some 50 ms. */
const UNIQUE_EVERY = 5;
/** Idle is read 1 s after the last picture, then again 70 s after it (the painter's quiet minute). */
const AFTER_MS = 1000;
const SETTLED_MS = 70_000;

const sleep = (ms: number) => new Promise((resolve) => setTimeout(resolve, ms));

/**
 * A process's memory (bytes), from /proc/<pid>/smaps_rollup; zeros once it is gone:
 * - `rss`: every page it maps, shared ones whole (the node binary's, in the bot and its painter);
 * - `pss`: each page divided among the processes that map it, so PSS adds up across processes to
 *   what the host spends;
 * - `anon`: its anonymous pages (heaps, Skia's and the allocator's memory), its own.
 */
export interface Memory {
  rss: number;
  pss: number;
  anon: number;
}

const NONE: Memory = { rss: 0, pss: 0, anon: 0 };

export function memoryOf(pid: number): Memory {
  try {
    const rollup = readFileSync(`/proc/${pid}/smaps_rollup`, "utf8");
    const kb = (field: string) =>
      Number(new RegExp(`^${field}:\\s+(\\d+) kB`, "m").exec(rollup)?.[1] ?? 0) * 1024;
    return { rss: kb("Rss"), pss: kb("Pss"), anon: kb("Anonymous") };
  } catch {
    return NONE;
  }
}

const add = (a: Memory, b: Memory): Memory => ({
  rss: a.rss + b.rss,
  pss: a.pss + b.pss,
  anon: a.anon + b.anon,
});
const max = (a: Memory, b: Memory): Memory => ({
  rss: Math.max(a.rss, b.rss),
  pss: Math.max(a.pss, b.pss),
  anon: Math.max(a.anon, b.anon),
});

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

/** The bot, its painter (its children, if any) and their sum, read once. */
export interface TreeMemory {
  bot: Memory;
  painter: Memory;
  sum: Memory;
  /** The physical pages of the bot and its painter, each counted once (pages.ts; root only). */
  unique?: number | undefined;
}

export function treeMemory(pid: number, unique = true): TreeMemory {
  const children = childrenOf(pid);
  const bot = memoryOf(pid);
  const painter = children.map(memoryOf).reduce(add, NONE);
  return {
    bot,
    painter,
    sum: add(bot, painter),
    unique: unique ? uniquePages([pid, ...children]) : undefined,
  };
}

/**
 * Samples the bot and its children every 100 ms until `stop()`: the peak of each figure of each,
 * and the peak of each sum (taken at one instant: not the sum of the peaks).
 */
function sampleTree(pid: number): { stop(): TreeMemory } {
  let peaks: TreeMemory = { bot: NONE, painter: NONE, sum: NONE };
  let samples = 0;
  const sample = () => {
    const now = treeMemory(pid, samples++ % UNIQUE_EVERY === 0);
    const unique =
      now.unique === undefined ? peaks.unique : Math.max(peaks.unique ?? 0, now.unique);
    peaks = {
      bot: max(peaks.bot, now.bot),
      painter: max(peaks.painter, now.painter),
      sum: max(peaks.sum, now.sum),
      unique,
    };
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

export interface ChartLoad {
  peak: TreeMemory;
  pictures: number;
  seconds: number;
  /** One digest of every picture, in the order asked: equal digests are byte-identical pictures. */
  digest: string;
  /** A second after the last answer. */
  after: TreeMemory;
  /** 70 s after it: the painter has exited after its quiet minute. */
  settled: TreeMemory;
  /** The load average (1 minute) at the start and at the end of the commands. */
  load: [number, number];
}

/** The pictures the console saved, in the order it printed them, hashed into one digest. */
function picturesDigest(output: string): string {
  const hash = createHash("sha256");
  for (const [, path] of output.matchAll(/^Picture: (.+\.png)$/gm))
    hash.update(
      createHash("sha256")
        .update(readFileSync(path as string))
        .digest(),
    );
  return hash.digest("hex").slice(0, 16);
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
    const loadBefore = loadavg()[0] ?? 0;
    const started = performance.now();
    // Lines are answered one after another, in order: all of them queued at once, then a last
    // /whois, whose answer says that every chart command before it has been answered.
    const addresses = () => (bot.output().match(/^Address: 0x/gm) ?? []).length;
    bot.child.stdin?.write(`${lines.join("\n")}\n/whois vitalik.eth\n`);
    await until(`${lines.length} answers`, () => addresses() >= 2, 900_000);
    const seconds = (performance.now() - started) / 1000;
    const peak = sampler.stop();
    const load: [number, number] = [loadBefore, loadavg()[0] ?? 0];
    await sleep(AFTER_MS);
    const after = treeMemory(pid);
    await sleep(SETTLED_MS - AFTER_MS);
    const settled = treeMemory(pid);
    const digest = picturesDigest(bot.output());
    return { peak, pictures: pictures(), seconds, digest, after, settled, load };
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

/** Bot · painter · sum of one figure. */
const triple = (tree: TreeMemory, figure: keyof Memory) =>
  `bot ${mb(tree.bot[figure])} · painter ${mb(tree.painter[figure])} · sum ${mb(tree.sum[figure])}`;

const uniqueOf = (tree: TreeMemory) =>
  tree.unique === undefined ? "not readable (root only)" : mb(tree.unique);

/**
 * The rows: for each checkout (this one and BENCH_COMPARE_DIR's), the peaks of the bot, of the
 * painter and of their sum, in RSS (the issue's measure, the shared node binary counted in both),
 * PSS (shared pages divided: what the host spends) and anonymous memory; then the same a second
 * and 70 s after the last picture; the pictures' digest and the load average.
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
  const rows: BenchRow[] = [];
  for (const [figure, what] of [
    ["rss", "RSS (the issue's measure; goal: sum ≤ 150 MB, painter ≤ 50 MB)"],
    ["pss", "PSS (shared pages divided between the processes: the host's real cost)"],
    ["anon", "anonymous memory (heaps, Skia's and the allocator's; no file pages)"],
  ] as const)
    rows.push({
      name: `${label}: peak ${what}, bot · painter · their sum (sampled every ${SAMPLE_MS} ms)`,
      value: sideBySide(checkouts, (c) => triple(of(c).peak, figure)),
    });
  rows.push({
    name: `${label}: peak of the pair's physical pages, each counted once (/proc/<pid>/pagemap, every ${(SAMPLE_MS * UNIQUE_EVERY) / 1000} s): what bot and painter cost a host of their own`,
    value: sideBySide(checkouts, (c) => uniqueOf(of(c).peak)),
  });
  for (const [when, at] of [
    ["after", AFTER_MS],
    ["settled", SETTLED_MS],
  ] as const)
    rows.push({
      name: `${label}: ${at / 1000} s after the last picture, RSS · PSS · anonymous (bot · painter · sum), the pair's pages once`,
      value: sideBySide(checkouts, (c) =>
        (["rss", "pss", "anon"] as const)
          .map((figure) => `${figure} ${triple(of(c)[when], figure)}`)
          .concat(`pages once ${uniqueOf(of(c)[when])}`)
          .join("; "),
      ),
    });
  const digests = new Map<Checkout, string>();
  for (const checkout of checkouts) digests.set(checkout, await painterDigest(checkout.dir));
  rows.push({
    name: "the same 240 chart requests to each checkout's painter: the pictures' digest (equal: byte-identical pictures)",
    value: sideBySide(checkouts, (c) => digests.get(c) ?? ""),
  });
  rows.push({
    name: `${label}: pictures, their time, the digest of the bot's pictures (it follows the bot's clock) and the load average (1 min) at start → end`,
    value: sideBySide(checkouts, (c) => {
      const r = of(c);
      return `${r.pictures} pictures in ${r.seconds.toFixed(0)} s, digest ${r.digest}, load ${r.load[0].toFixed(2)} → ${r.load[1].toFixed(2)}`;
    }),
  });
  return rows;
}
