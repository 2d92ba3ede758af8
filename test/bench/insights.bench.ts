import { spawn } from "node:child_process";
import { createHash } from "node:crypto";
import { setFlagsFromString } from "node:v8";
import { runInNewContext } from "node:vm";
import type { Bot } from "../../src/bot.ts";
import type { Invocation } from "../../src/core/command.ts";
import type { RenderableReply } from "../../src/core/reply.ts";
import { newInvocationId } from "../../src/core/runtime.ts";
import { renderConsole } from "../../src/render/console.ts";
import { sqliteDbOf } from "../helpers.ts";
import type { BenchRow } from "./report.ts";
import { type ChildSimulator, productionBot, WIRING } from "./runtime.bench.ts";

const sleep = (ms: number) => new Promise((resolve) => setTimeout(resolve, ms));

const quantile = (sorted: number[], q: number) =>
  sorted[Math.min(sorted.length - 1, Math.floor(q * sorted.length))] ?? Number.NaN;

const MEMBERS = 10_000;
const WALLETS = 15_000;
/** The community the members proved in (a Discord server nobody runs here). */
const GUILD = "bench-guild";
/** The job's share: 60,000 calls a minute (20,000 wallets), the client's budget to match. */
const CALLS_PER_MINUTE = 60_000;
const BUDGET_PER_SECOND = 1_500;
/** One warm command every this many ms (a busy chat load), with the reads idle and running. */
const PACE_MS = 10;
/** A cold command (its own upstream calls) every this many ms. */
const COLD_PACE_MS = 100;
const IDLE_WINDOW_MS = 15_000;
/** Gives up on the reads after this long (the whole bench stays within some 8 minutes). */
const READS_WITHIN_MS = 6 * 60_000;

/** The simulator in another process, with its wallets and a count of the requests it answered. */
interface InsightsSimulator extends ChildSimulator {
  wallets: string[];
  count(): Promise<{ requests: number; byPath: Record<string, number> }>;
}

function startInsightsSimulator(): Promise<InsightsSimulator> {
  return new Promise((resolve, reject) => {
    const child = spawn(process.execPath, ["--import", "tsx", "test/bench/insights-sim-child.ts"], {
      env: process.env,
      stdio: ["pipe", "pipe", "inherit"],
    });
    const counted: ((n: { requests: number; byPath: Record<string, number> }) => void)[] = [];
    let buffer = "";
    child.stdout.on("data", (chunk) => {
      buffer += chunk;
      for (let at = buffer.indexOf("\n"); at >= 0; at = buffer.indexOf("\n")) {
        const message = JSON.parse(buffer.slice(0, at)) as {
          requests?: number;
          byPath?: Record<string, number>;
          url: string;
          apiKey: string;
          fixtures: ChildSimulator["fixtures"];
          wallets: string[];
        };
        buffer = buffer.slice(at + 1);
        if (message.requests !== undefined) {
          counted.shift()?.({ requests: message.requests, byPath: message.byPath ?? {} });
          continue;
        }
        resolve({
          url: message.url,
          apiKey: message.apiKey,
          fixtures: message.fixtures,
          wallets: message.wallets,
          mint: () => Promise.reject(new Error("this simulator does not mint")),
          count: () =>
            new Promise((resolveCount) => {
              counted.push(resolveCount);
              child.stdin.write("count\n");
            }),
          close: () => child.kill("SIGTERM"),
        });
      }
    });
    child.on("error", reject);
  });
}

/** The person at the console (who manages its one chat). */
function atConsole(): Invocation {
  return {
    id: newInvocationId(),
    platform: "console",
    user: { id: "console-user", name: "you" },
    chat: { id: "console", kind: "private" },
    canManageChannel: async () => true,
  };
}

/** A manager of the bench's server, in one of its channels. */
function manager(): Invocation {
  return {
    id: newInvocationId(),
    platform: "discord",
    user: { id: "bench-manager", name: "manager" },
    chat: { id: "bench-channel", kind: "group" },
    guild: { id: GUILD },
    canManageChannel: async () => true,
  };
}

async function run(bot: Bot, who: Invocation, name: string, text: string, refusable = false) {
  const at = performance.now();
  const reply: RenderableReply = await bot.runtime.runText(who, name, text);
  const ms = performance.now() - at;
  const refused = reply.tone === "error" || reply.tone === "warning";
  if (refused && !refusable) throw new Error(`/${name} ${text}: unexpected reply: ${reply.text}`);
  return { reply, ms, refused, text: renderConsole(reply).text };
}

/** A V8 full collection, when the flag can be set at run time (it can on Node 20). */
function collector(): (() => void) | undefined {
  try {
    setFlagsFromString("--expose-gc");
    return runInNewContext("gc") as () => void;
  } catch {
    return undefined;
  }
}

/** Latencies of a paced probe, each with when it started (performance.now()). */
type Samples = { at: number; ms: number; refused: boolean }[];

/**
 * Runs `probe` every `paceMs` until `stop` says so, one at a time. Each run is due at a fixed
 * cadence and timed from when it was due, not from when it could start: a stall of the event loop
 * (or a slow run) delays every run due meanwhile, as it delays people's commands arriving then.
 */
async function paced(
  probe: (i: number) => Promise<{ refused: boolean }>,
  paceMs: number,
  samples: Samples,
  stop: () => boolean,
): Promise<void> {
  let due = performance.now();
  for (let i = 0; !stop(); i++) {
    const wait = due - performance.now();
    if (wait > 0) await sleep(wait);
    const { refused } = await probe(i);
    samples.push({ at: due, ms: performance.now() - due, refused });
    due += paceMs;
  }
}

/** The latencies of the samples that ran wholly within [from, to], sorted. */
function within(samples: Samples, from: number, to: number): { sorted: number[]; refused: number } {
  const inside = samples.filter((s) => s.at >= from && s.at + s.ms <= to);
  return {
    sorted: inside.map((s) => s.ms).sort((a, b) => a - b),
    refused: inside.filter((s) => s.refused).length,
  };
}

/**
 * 10,000 members of one Discord server with 15,000 proved wallets between them (every wallet the
 * simulator knows, some 3,000, and made-up addresses for the rest: the service knows nothing of
 * those, and they cost the same three reads), inserted into the store's tables as proofs from that
 * server would leave them; through the production wiring (`productionBot`: createBot, SQLite in a
 * temp dir, the jobs running), a manager asks /insights: the day's aggregates are read in batches
 * of 500, and the background job reads every wallet within its share of the budget. The simulator
 * runs in its own process and counts the requests it answered; the bot's RSS is sampled every
 * 100 ms. Two probes at the console run throughout, timed with the reads idle (before anyone
 * asks), while the first /insights is answered, while the reads run, and once every wallet is
 * read (the job's rounds go on every 10 s, finding nothing to read): a warm /top volume 1d every
 * 10 ms (no upstream call), and a cold /whois of another of the simulator's wallets every 100 ms
 * (its own upstream calls, in line with the reads' for the client's budget).
 */
export async function benchInsights(): Promise<BenchRow[]> {
  const gc = collector();
  const sim = await startInsightsSimulator();
  const startedAt = performance.now();
  const { bot, close } = await productionBot(sim, {
    INSIGHTS_CALLS_PER_MINUTE: String(CALLS_PER_MINUTE),
    API_BUDGET_PER_SECOND: String(BUDGET_PER_SECOND),
    API_BUDGET_BURST: String(BUDGET_PER_SECOND),
  });
  const memory = { rss: 0, heap: 0, rssReading: 0, heapReading: 0, reading: false };
  const sample = () => {
    const { rss, heapUsed } = process.memoryUsage();
    memory.rss = Math.max(memory.rss, rss);
    memory.heap = Math.max(memory.heap, heapUsed);
    if (!memory.reading) return;
    memory.rssReading = Math.max(memory.rssReading, rss);
    memory.heapReading = Math.max(memory.heapReading, heapUsed);
  };
  sample();
  const sampler = setInterval(sample, 100);
  sampler.unref();
  const live = () => {
    gc?.();
    return process.memoryUsage().heapUsed;
  };
  try {
    // The members and their wallets, as proofs from the server leave them.
    const known = sim.wallets;
    const madeUp = WALLETS - known.length;
    const addresses = [
      ...known,
      ...Array.from(
        { length: madeUp },
        (_, i) =>
          `0x${createHash("sha256").update(`insights-bench-${i}`).digest("hex").slice(0, 40)}`,
      ),
    ];
    if (new Set(addresses).size !== WALLETS) throw new Error("addresses collide");
    const db = sqliteDbOf(bot);
    const insertedAt = Date.now();
    const member = db.prepare(
      "INSERT INTO insight_members (platform, place, user_id, name, since, seen_at) VALUES ('discord', ?, ?, ?, ?, ?)",
    );
    const wallet = db.prepare(
      "INSERT INTO wallets (platform, user_id, address, chain, label, proved_at, message, signature, linked_at) VALUES ('discord', ?, ?, 'ethereum', ?, ?, 'signed message', '0x', ?)",
    );
    const hidden = db.prepare(
      "INSERT INTO insight_private (platform, user_id, since) VALUES ('discord', ?, ?)",
    );
    const insertFrom = performance.now();
    db.transaction(() => {
      for (let i = 0; i < MEMBERS; i++) {
        const userId = String(400_000_000_000_000_000n + BigInt(i));
        const since = insertedAt - (MEMBERS - i) * 60_000;
        member.run(GUILD, userId, `member${i}`, since, since);
        // Every member one wallet, the first 5,000 two: 15,000 in all.
        const own = i < WALLETS - MEMBERS ? [2 * i, 2 * i + 1] : [i + (WALLETS - MEMBERS)];
        for (const index of own) {
          const address = addresses[index] as string;
          wallet.run(userId, address, address, since, since);
        }
        // One in 50 keeps their wallets private.
        if (i % 50 === 49) hidden.run(userId, since);
      }
    })();
    const insertMs = performance.now() - insertFrom;
    const readCount = () =>
      (
        db.prepare("SELECT COUNT(*) AS n FROM insight_wallets WHERE chain = 'ethereum'").get() as {
          n: number;
        }
      ).n;

    // Past the start's own work (the collection index's first refresh at 5 s), warmed up.
    for (let i = 0; i < 300; i++) await run(bot, atConsole(), "top", "volume 1d");
    await sleep(Math.max(0, 12_000 - (performance.now() - startedAt)));
    const liveBefore = live();
    const rssBefore = process.memoryUsage().rss;

    // The event loop's stalls: gaps of over 50 ms between the turns of a 5 ms timer.
    const stalled: { at: number; ms: number }[] = [];
    let turn = performance.now();
    const gaps = setInterval(() => {
      const now = performance.now();
      if (now - turn > 50) stalled.push({ at: turn, ms: now - turn });
      turn = now;
    }, 5);
    // The probes run from here to the end.
    const warm: Samples = [];
    const cold: Samples = [];
    let stopProbes = false;
    const probes = Promise.all([
      paced(
        () => run(bot, atConsole(), "top", "volume 1d"),
        PACE_MS,
        warm,
        () => stopProbes,
      ),
      // Each time another wallet, so each is a cache miss.
      paced(
        (i) => run(bot, atConsole(), "whois", known[(i * 7) % known.length] as string, true),
        COLD_PACE_MS,
        cold,
        () => stopProbes,
      ),
    ]);

    // 1. The reads idle: nothing has asked for insights, the job's rounds find nothing to read.
    const idleFrom = performance.now();
    await sleep(IDLE_WINDOW_MS);
    const idleTo = performance.now();

    // 2. A manager asks: the aggregates now, every wallet in the background.
    const callsBefore = await sim.count();
    let firstReadAt = Number.NaN;
    let allReadAt = Number.NaN;
    let read = 0;
    const watch = setInterval(() => {
      read = readCount();
      if (read > 0 && Number.isNaN(firstReadAt)) firstReadAt = performance.now();
      if (read >= WALLETS && Number.isNaN(allReadAt)) allReadAt = performance.now();
    }, 100);
    memory.reading = true;
    const asked = performance.now();
    const first = await run(bot, manager(), "insights", "");
    const answered = performance.now();
    while (Number.isNaN(allReadAt) && performance.now() - asked < READS_WITHIN_MS) await sleep(100);
    clearInterval(watch);
    const readTo = performance.now();
    memory.reading = false;
    const callsAfter = await sim.count();

    // 3. Every wallet read (within the day): the job's rounds find nothing to read. Then the
    // probes end.
    const afterFrom = performance.now();
    await sleep(IDLE_WINDOW_MS);
    const afterTo = performance.now();
    stopProbes = true;
    await probes;
    clearInterval(gaps);

    // 4. With every wallet read: the overview, the holdings and the export.
    const after = await run(bot, manager(), "insights", "");
    const heldAnswer = await run(bot, manager(), "insights", "held");
    const exported = await run(bot, manager(), "insights", "export");
    const csv = exported.reply.files?.[0];
    const rssEnd = process.memoryUsage().rss;
    const liveEnd = live();

    const calls = callsAfter.requests - callsBefore.requests;
    const byPath = Object.entries(callsAfter.byPath)
      .map(([path, n]) => [path, n - (callsBefore.byPath[path] ?? 0)] as const)
      .filter(([, n]) => n > 0)
      .sort((a, b) => b[1] - a[1]);
    const mb = (bytes: number) => `${(bytes / 2 ** 20).toFixed(0)} MB`;
    const sec = (ms: number) => (Number.isNaN(ms) ? "not reached" : `${(ms / 1000).toFixed(1)} s`);
    const p = ({ sorted, refused }: { sorted: number[]; refused: number }) =>
      sorted.length === 0
        ? "no samples"
        : `p50 ${quantile(sorted, 0.5).toFixed(2)} ms, p99 ${quantile(sorted, 0.99).toFixed(2)} ms, max ${(sorted.at(-1) ?? 0).toFixed(1)} ms (${sorted.length} runs${refused > 0 ? `, ${refused} refused` : ""})`;
    const windows = (samples: Samples) => ({
      before: within(samples, idleFrom, idleTo),
      asking: within(samples, asked, answered),
      during: within(samples, answered, readTo),
      after: within(samples, afterFrom, afterTo),
    });
    const w = windows(warm);
    const c = windows(cold);
    const ratio = (x: { sorted: number[] }, y: { sorted: number[] }) =>
      `${(quantile(x.sorted, 0.99) / quantile(y.sorted, 0.99)).toFixed(2)}x`;
    const line = (text: string, pattern: RegExp) =>
      text
        .split("\n")
        .find((l) => pattern.test(l))
        ?.trim() ?? "";
    return [
      { name: "production wiring", value: `${WIRING}; the simulator in its own process` },
      {
        name: "community",
        value: `${MEMBERS.toLocaleString("en-US")} members (1 in 50 private) of one Discord server, ${WALLETS.toLocaleString("en-US")} proved wallets (5,000 members with 2): all ${known.length.toLocaleString("en-US")} wallets the simulator knows + ${madeUp.toLocaleString("en-US")} made-up addresses (unknown to it: no behavior, spend or holdings), inserted into insight_members + wallets (proved_at set) in ${insertMs.toFixed(0)} ms`,
      },
      {
        name: "settings",
        value: `INSIGHTS_CALLS_PER_MINUTE=${CALLS_PER_MINUTE}, API_BUDGET_PER_SECOND=${BUDGET_PER_SECOND} (burst the same), the job's round every 10 s`,
      },
      {
        name: "first /insights (people, today's aggregates: 30 batches of 500 × 5 calls, snapshot)",
        value: `${sec(answered - asked)}: "${line(first.text, /members with/)}"`,
      },
      {
        name: "/insights asked → the job's first wallet read",
        value: sec(firstReadAt - asked),
      },
      {
        name: `background reads of all ${WALLETS.toLocaleString("en-US")} wallets (first to last)`,
        value: Number.isNaN(allReadAt)
          ? `${read.toLocaleString("en-US")} of ${WALLETS.toLocaleString("en-US")} read in ${sec(READS_WITHIN_MS)}`
          : `${sec(allReadAt - firstReadAt)} (${((WALLETS / (allReadAt - firstReadAt)) * 1000).toFixed(0)} wallets/s, ${((3 * WALLETS * 1000) / (allReadAt - firstReadAt)).toFixed(0)} calls/s)`,
      },
      {
        name: "time to a complete snapshot (/insights asked → aggregates + every wallet read)",
        value: sec(allReadAt - asked),
      },
      {
        name: "upstream calls made from /insights to the last read (counted at the simulator)",
        value: `${calls.toLocaleString("en-US")}: ${byPath.map(([path, n]) => `${path} ${n.toLocaleString("en-US")}`).join("; ")}. Insights' own: 150 for the aggregates (30 batches × behaviors + 4 spend filters) + 3 × ${WALLETS.toLocaleString("en-US")} wallet reads = ${(150 + 3 * WALLETS).toLocaleString("en-US")}; the rest is the /whois probe's (ENS + behavior)`,
      },
      {
        name: "peak RSS of the bot's process (sampled every 100 ms), whole run",
        value: `${mb(memory.rss)} (heap used at most ${mb(memory.heap)})`,
      },
      {
        name: "RSS before the reads → peak while reading → at the end",
        value: `${mb(rssBefore)} → ${mb(memory.rssReading)} → ${mb(rssEnd)}`,
      },
      {
        name: "heap used: peak while reading; live after a full GC before the reads → at the end",
        value: `${mb(memory.heapReading)}; ${gc ? `${mb(liveBefore)} → ${mb(liveEnd)}` : "no GC to run"}`,
      },
      {
        name: `warm /top volume 1d at the console, one every ${PACE_MS} ms: reads idle (before)`,
        value: p(w.before),
      },
      { name: "… while the first /insights is answered", value: p(w.asking) },
      { name: "… while the reads run (after the first /insights)", value: p(w.during) },
      {
        name: "… after every wallet is read (the job's rounds, every 10 s, find nothing to read)",
        value: p(w.after),
      },
      {
        name: "warm p99: reads running / reads idle (before); all read / reads idle (before)",
        value: `${ratio(w.during, w.before)}; ${ratio(w.after, w.before)}`,
      },
      {
        name: `cold /whois <a simulator wallet>, one every ${COLD_PACE_MS} ms: reads idle (before)`,
        value: p(c.before),
      },
      { name: "… while the first /insights is answered", value: p(c.asking) },
      { name: "… while the reads run (after the first /insights)", value: p(c.during) },
      {
        name: "… after every wallet is read (the job's rounds, every 10 s, find nothing to read)",
        value: p(c.after),
      },
      {
        name: "cold p99: reads running / reads idle (before); all read / reads idle (before)",
        value: `${ratio(c.during, c.before)}; ${ratio(c.after, c.before)}`,
      },
      {
        name: "event-loop stalls (gaps over 50 ms of a 5 ms timer): reads idle → first /insights → reads running → all read",
        value: [
          [idleFrom, idleTo],
          [asked, answered],
          [answered, readTo],
          [afterFrom, afterTo],
        ]
          .map(([from = 0, to = 0]) => {
            // A stall belongs to the window it ends in (it began before the work that made it).
            const inside = stalled.filter((x) => x.at + x.ms >= from && x.at + x.ms < to);
            const longest = Math.max(0, ...inside.map((x) => x.ms));
            return inside.length === 0
              ? "none"
              : `${inside.length} (longest ${longest.toFixed(0)} ms)`;
          })
          .join(" → "),
      },
      {
        name: "/insights once all is read",
        value: `${sec(after.ms)}: "${/Holdings[^.]*\./.exec(after.text)?.[0] ?? ""}"`,
      },
      { name: "/insights held once all is read", value: sec(heldAnswer.ms) },
      {
        name: "/insights export",
        value: `${sec(exported.ms)}: "${line(exported.text, /listed/).slice(0, 70)}…", ${csv ? `${csv.name} ${(csv.data.byteLength / 1024).toFixed(0)} KB` : "no file"}`,
      },
    ];
  } finally {
    clearInterval(sampler);
    await close();
    sim.close();
  }
}
