import { execFileSync } from "node:child_process";
import { mkdtempSync, readFileSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { buildCheckout, type Checkout, checkoutsToCompare, sideBySide } from "./checkouts.ts";
import { baseEnv, mb, median, rssOf, sleep, startChild, until } from "./process.bench.ts";
import type { BenchRow } from "./report.ts";

/**
 * `npm start` with no settings, as built (compiled dist/, the console chat, the embedded
 * simulator on every chain), each figure from fresh processes: start to the first answer, RSS
 * 1 s and 15 s after it, and the processes left once it answered after building dist/ (a fresh
 * clone's start). With BENCH_COMPARE_DIR (another checkout with its own node_modules, e.g. a
 * `git worktree` of the main branch before a change), the same for it, in the same run, the
 * starts taking turns so that a busy machine weighs on both alike. It deletes and rebuilds each
 * checkout's dist/ (for the fresh clone's start).
 */

const RUNS = 5;
const LATER_MS = 15_000;

interface Start {
  ms: number;
  rss: number;
  rssLater: number;
  processes: number;
}

/** Every process under `pid` (children, theirs, and so on). */
function descendants(pid: number): number[] {
  let listed = "";
  try {
    listed = execFileSync("ps", ["-o", "pid=", "--ppid", String(pid)], { encoding: "utf8" });
  } catch {
    // ps exits 1 when no process matches.
    return [];
  }
  const children = listed
    .split("\n")
    .filter((line) => line.trim() !== "")
    .map(Number);
  return children.flatMap((child) => [child, ...descendants(child)]);
}

/** Node's arguments for `npm start` in a checkout: its package.json's start script, as written. */
function startArgs(dir: string): string[] {
  const pkg = JSON.parse(readFileSync(join(dir, "package.json"), "utf8")) as {
    scripts: { start: string };
  };
  const [command, ...args] = pkg.scripts.start.split(/\s+/);
  if (command !== "node") throw new Error(`${dir}: npm start runs ${command}, not node`);
  return args;
}

/** One `npm start` of a checkout (as npm runs it, npm aside), until a while after its first answer. */
async function oneStart(dir: string, laterMs: number): Promise<Start> {
  const dataDir = mkdtempSync(join(tmpdir(), "bench-embedded-"));
  const started = performance.now();
  const bot = startChild(baseEnv(dataDir), startArgs(dir), dir);
  try {
    bot.child.stdin?.write("/whois vitalik.eth\n");
    await until("the /whois answer", () => /^Address: 0x/m.test(bot.output()), 120_000);
    const ms = performance.now() - started;
    await sleep(1000);
    const pid = bot.child.pid ?? 0;
    const rss = rssOf(pid);
    const processes = 1 + descendants(pid).length;
    await sleep(laterMs - 1000);
    return { ms, rss, rssLater: rssOf(pid), processes };
  } finally {
    bot.child.stdin?.end();
    await bot.stop();
    rmSync(dataDir, { recursive: true, force: true });
  }
}

export async function benchEmbeddedStart(): Promise<BenchRow[]> {
  const checkouts = checkoutsToCompare();
  const starts = new Map<Checkout, Start[]>(checkouts.map((checkout) => [checkout, []]));
  const fresh = new Map<Checkout, Start>();
  for (const checkout of checkouts) {
    // A fresh clone's start: no dist/, so it builds first (and its processes are counted).
    rmSync(join(checkout.dir, "dist"), { recursive: true, force: true });
    fresh.set(checkout, await oneStart(checkout.dir, 2000));
    buildCheckout(checkout.dir);
  }
  for (let i = 0; i < RUNS; i++)
    for (const checkout of checkouts)
      starts.get(checkout)?.push(await oneStart(checkout.dir, LATER_MS));

  const side = (figure: (checkout: Checkout) => string) => sideBySide(checkouts, figure);
  const of = (checkout: Checkout, pick: (start: Start) => number) =>
    median((starts.get(checkout) ?? []).map(pick));
  return [
    {
      name: `start to first answer (/whois vitalik.eth), as built, median of ${RUNS} (goal ≤ 1,000 ms)`,
      value: side((checkout) => `${of(checkout, (start) => start.ms).toFixed(0)} ms`),
    },
    {
      name: "idle RSS 1 s after the first answer, median (goal ≤ 160 MB)",
      value: side((checkout) => mb(of(checkout, (start) => start.rss))),
    },
    {
      name: `RSS ${LATER_MS / 1000} s after the first answer, median`,
      value: side((checkout) => mb(of(checkout, (start) => start.rssLater))),
    },
    {
      name: "processes once it answered, after building dist/ first (a fresh clone's start; goal 1)",
      value: side((checkout) => String(fresh.get(checkout)?.processes ?? "?")),
    },
    {
      name: "start to first answer, building dist/ first (a fresh clone's start, one run)",
      value: side((checkout) => `${(fresh.get(checkout)?.ms ?? Number.NaN).toFixed(0)} ms`),
    },
  ];
}
