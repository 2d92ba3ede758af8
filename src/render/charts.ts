import { type ChildProcess, type ForkOptions, fork } from "node:child_process";
import { createHash } from "node:crypto";
import { fileURLToPath } from "node:url";
import type { ReplyImage } from "../core/reply.ts";
import type { Logger } from "../log.ts";
import type {
  audienceChart as drawAudience,
  compareChart as drawCompare,
  linesChart as drawLines,
  ownersHistoryChart as drawOwners,
  rankingChart as drawRanking,
} from "./chart-drawing.ts";
import type { ChartRequest, ChartResponse } from "./chart-process.ts";

export { CHART_HEIGHT, CHART_WIDTH, plotValue } from "./chart-drawing.ts";

/**
 * Server-side charts, drawn in a child process. Chart.js on @napi-rs/canvas (chart-drawing.ts)
 * runs there, so a 10–20 ms draw never stalls other people's commands, and Skia's library and
 * pages (some 50 to 70 MB, file-backed, kept once loaded) are never part of the bot's own memory:
 * the child starts on the first chart and exits after a quiet minute. A thread that drew for long
 * once grew by some 0.1 MB a chart (Skia's memory for the text it rasterizes, @napi-rs/canvas
 * 1.0.11 and 1.1.1, the worker thread of issue 14); the child, with its own small heap and its
 * collection after each chart (CHILD_LIMITS), stays near 80 MB resident, 24 MB of it its own
 * (anonymous) memory, so it is replaced only every 500 charts, as a guard that costs one start
 * (some 300 ms) in 500 charts. A child that crashes or hangs costs the charts
 * it had, never an answer. Neither library loads in a bot that never draws a chart.
 */

export interface ChartPainterOptions {
  /** Charts one child draws before a fresh one takes over. */
  drawsPerWorker: number;
  /** A child with nothing to draw for this long exits, and its memory goes with it. */
  idleMs: number;
  /**
   * A draw not answered in this long fails and its child is killed (hung): below the command's
   * deadline, so the answer still goes out, without its picture.
   */
  timeoutMs: number;
  /** Charts sent to a child and not yet answered; more fail at once rather than queue. */
  maxWaiting?: number;
}

interface Job {
  resolve(png: Buffer): void;
  reject(error: Error): void;
  timer: NodeJS.Timeout;
}

interface PainterChild {
  child: ChildProcess;
  pending: Map<number, Job>;
  sent: number;
  idle: NodeJS.Timeout | undefined;
  exited: Promise<void>;
}

/**
 * The painter's own Node flags, for its memory (issue 34: a painter of 95 to 104 MB beside a bot
 * of 102 MB on a 256 MB host; `npm run bench -- chart-load`, and docs/operations.md, for where it
 * goes). A chart needs little heap (Chart.js and one chart's objects, some 10 MB):
 * - a 1 MB young generation and a 32 MB old one: V8 reserves less, and a runaway draw fails its
 *   chart rather than growing the process;
 * - `--lite-mode`: no optimizing compiler, so none of its code or of the node binary's compiler
 *   pages (some 8 MB at the peak, for draws some 10 ms slower);
 * - `--single-threaded`: no V8 helper threads, their stacks or their malloc arenas (a painter draws
 *   one chart at a time; its collections run between charts);
 * - `--expose-gc`: the child collects after each chart it has sent (chart-process.ts), so the
 *   garbage of one chart, and the Skia buffers it held, go before the next (some 6 MB at the peak);
 * - `--no-expose-wasm`: lite mode and WebAssembly conflict, and Node says so on stderr otherwise.
 * Node itself (some 40 MB resident, 30 MB of it the node binary's pages, shared with the bot) and
 * Skia's library (some 12 MB of file pages and 9 MB of its own, from its loading) stay: no flag
 * takes them out of a Node painter (a 12 or 8 MB old generation measured the same as 32). Axis
 * numbers are written without Intl (chart-numbers.ts), whose first number format loaded ICU's data
 * (some 5.5 MB of the node binary's pages the bot does not otherwise touch).
 *
 * A worker thread in the bot instead (issue 34, measured side by side, `npm run bench --
 * chart-load`): at the peak the pair's pages counted once were about the same (147 MB in the bot
 * alone against 142 to 156 MB for bot and child), but once idle the bot kept some 20 MB more for
 * good (Skia's library stays loaded after its thread ends, and the allocator keeps what Skia
 * freed), and a fault in Skia's native code would end the bot itself. The child stays.
 */
const CHILD_LIMITS = [
  "--max-semi-space-size=1",
  "--max-old-space-size=32",
  "--lite-mode",
  "--single-threaded",
  "--expose-gc",
  "--no-expose-wasm",
];

/**
 * The painter's whole environment: an allow-list, not the bot's environment minus the secrets it
 * knows of. A deny-list let through whatever it did not name (PGPASSWORD, an RPC key under the
 * operator's own name, a cloud credential), and the painter needs none of the bot's variables:
 * - it runs `process.execPath` with its flags given on the command line, so no PATH or
 *   NODE_OPTIONS (the bot's own Node options reach it through execArgv, below);
 * - it draws from the figures it is sent: no URL, key or token;
 * - its charts pin their number format to en-US (chart-drawing.ts), like every other figure the
 *   bot writes, so the host's LANG/LC_* does not change a picture; it formats no date (the axis
 *   labels arrive as text), so no TZ;
 * - its only fonts are those shipped in dejavu-fonts-ttf and twemoji-colr-font, registered by
 *   path (chart-fonts.ts): no font settings.
 * The one variable it gets is glibc's: a painter draws on one thread, and at most two malloc
 * arenas keep the arenas Skia's and Node's helper threads would each open (some 6 MB of a
 * 100 MB painter, `npm run bench -- process`) out of its resident set.
 */
export function childEnv(): NodeJS.ProcessEnv {
  return { MALLOC_ARENA_MAX: "2" };
}

/** Where the child's code is: dist/chart-process.js when built, else the TypeScript source. */
function startChild(): ChildProcess {
  const here = import.meta.url;
  const options: ForkOptions = {
    serialization: "advanced",
    env: childEnv(),
    stdio: ["ignore", "ignore", "inherit", "ipc"],
  };
  if (here.endsWith(".ts")) {
    // From the sources (tests, `npm run dev`): tsx compiles the entry in the child too.
    const entry = fileURLToPath(new URL("./chart-process.ts", here));
    return fork(entry, [], {
      ...options,
      execArgv: ["--import", import.meta.resolve("tsx/esm"), ...CHILD_LIMITS],
    });
  }
  // The build bundles this module into dist/main.js or into a chunk in dist/chunks/. The child
  // runs with the bot's own Node options (source maps, a test's loader hooks), then its limits;
  // not a debugger's, whose port the bot already holds.
  const inChunk = /\/chunks\/[^/]+$/.test(new URL(here).pathname);
  const entry = fileURLToPath(
    new URL(inChunk ? "../chart-process.js" : "./chart-process.js", here),
  );
  return fork(entry, [], {
    ...options,
    execArgv: [...process.execArgv.filter((arg) => !arg.startsWith("--inspect")), ...CHILD_LIMITS],
  });
}

/** Holds, or lets go of, the bot's event loop for the child: only while it has charts to draw. */
function hold(child: ChildProcess, held: boolean): void {
  if (held) {
    child.ref();
    child.channel?.ref();
  } else {
    child.unref();
    child.channel?.unref();
  }
}

export class ChartPainter {
  private current: PainterChild | undefined;
  private nextId = 1;
  /** Children started so far (for tests and metrics). */
  started = 0;
  /** Children alive now: the current one, and a replaced one finishing its last charts. */
  running = 0;

  constructor(
    private readonly options: ChartPainterOptions = {
      drawsPerWorker: 500,
      idleMs: 60_000,
      timeoutMs: 10_000,
    },
  ) {}

  /**
   * Caps a chart's time (the bot's command deadline leaves room for the rest of the answer): a
   * hung child must fail its chart before the command itself runs out of time.
   */
  limitTime(ms: number): void {
    this.options.timeoutMs = Math.min(this.options.timeoutMs, ms);
  }

  /** The current child's process id, if one runs (for tests). */
  get pid(): number | undefined {
    return this.current?.child.pid;
  }

  draw(request: DistributiveOmit<ChartRequest, "id">): Promise<Buffer> {
    const waiting = this.current?.pending.size ?? 0;
    if (waiting >= (this.options.maxWaiting ?? 16))
      return Promise.reject(new Error(`too many charts waiting (${waiting})`));
    const painter = this.painter();
    const id = this.nextId++;
    painter.sent++;
    if (painter.idle) clearTimeout(painter.idle);
    painter.idle = undefined;
    return new Promise<Buffer>((resolve, reject) => {
      const timer = setTimeout(() => {
        this.fail(painter, new Error(`the chart took longer than ${this.options.timeoutMs} ms`));
      }, this.options.timeoutMs);
      timer.unref();
      painter.pending.set(id, { resolve, reject, timer });
      hold(painter.child, true);
      painter.child.send({ ...request, id } as ChartRequest, (error) => {
        if (error) this.fail(painter, error);
      });
    });
  }

  /** Stops every child; draws in progress fail. */
  async close(): Promise<void> {
    const painter = this.current;
    this.current = undefined;
    if (painter) await this.stop(painter, new Error("the chart painter was closed"));
  }

  private painter(): PainterChild {
    const current = this.current;
    if (current && current.sent < this.options.drawsPerWorker) return current;
    if (current) this.retire(current);
    const child = startChild();
    this.started++;
    this.running++;
    const exited = new Promise<void>((resolve) => child.once("exit", () => resolve()));
    const painter: PainterChild = { child, pending: new Map(), sent: 0, idle: undefined, exited };
    child.on("message", (response: ChartResponse) => this.settle(painter, response));
    // A child that cannot be started (or signalled) fails its charts; 'exit' may not follow.
    child.on("error", (error) => this.fail(painter, error));
    child.once("exit", (code, signal) => {
      this.running--;
      if (painter.pending.size > 0)
        this.fail(painter, new Error(`the chart painter exited (${signal ?? code})`));
      if (this.current === painter) this.current = undefined;
    });
    hold(child, false);
    this.current = painter;
    return painter;
  }

  private settle(painter: PainterChild, response: ChartResponse): void {
    const job = painter.pending.get(response.id);
    if (!job) return;
    painter.pending.delete(response.id);
    clearTimeout(job.timer);
    if ("png" in response)
      job.resolve(
        Buffer.from(response.png.buffer, response.png.byteOffset, response.png.byteLength),
      );
    else job.reject(new Error(response.error));
    if (painter.pending.size > 0) return;
    hold(painter.child, false);
    if (this.current !== painter) {
      painter.child.kill();
      return;
    }
    painter.idle = setTimeout(() => {
      if (this.current === painter && painter.pending.size === 0) {
        this.current = undefined;
        painter.child.kill();
      }
    }, this.options.idleMs);
    painter.idle.unref();
  }

  /** A child that has drawn its share finishes what it has, then stops. */
  private retire(painter: PainterChild): void {
    if (painter.idle) clearTimeout(painter.idle);
    if (painter.pending.size === 0) painter.child.kill();
  }

  private fail(painter: PainterChild, error: Error): void {
    if (this.current === painter) this.current = undefined;
    void this.stop(painter, error);
  }

  private async stop(painter: PainterChild, error: Error): Promise<void> {
    if (painter.idle) clearTimeout(painter.idle);
    const jobs = [...painter.pending.values()];
    painter.pending.clear();
    for (const job of jobs) {
      clearTimeout(job.timer);
      job.reject(error);
    }
    // SIGKILL: a hung child may not heed anything else, and a painter keeps nothing worth saving.
    if (painter.child.pid === undefined) return; // never started: no exit to wait for
    if (painter.child.exitCode === null && painter.child.signalCode === null) {
      // Held until it has exited, or a caller awaiting this could see the event loop end first.
      hold(painter.child, true);
      painter.child.kill("SIGKILL");
    }
    await painter.exited;
  }
}

type DistributiveOmit<T, K extends keyof T> = T extends unknown ? Omit<T, K> : never;

/** The process's painter: one child at a time, started on the first chart. */
export const chartPainter = new ChartPainter();

/** Owner count over time: a line, dates on the x axis. */
export function ownersHistoryChart(...args: Parameters<typeof drawOwners>): Promise<Buffer> {
  return chartPainter.draw({ kind: "owners", args });
}

/** Ranked collections: horizontal bars, highest on top. */
export function rankingChart(...args: Parameters<typeof drawRanking>): Promise<Buffer> {
  return chartPainter.draw({ kind: "ranking", args });
}

/** Behavior shares: one bar per category, labelled with its 30-day change, coloured by its sign. */
export function audienceChart(...args: Parameters<typeof drawAudience>): Promise<Buffer> {
  return chartPainter.draw({ kind: "audience", args });
}

/** Several series over the same days: a straight line each, with its points and a legend. */
export function linesChart(...args: Parameters<typeof drawLines>): Promise<Buffer> {
  return chartPainter.draw({ kind: "lines", args });
}

/** Two groups side by side per category: horizontal bar pairs, a legend for the two colours. */
export function compareChart(...args: Parameters<typeof drawCompare>): Promise<Buffer> {
  return chartPainter.draw({ kind: "compare", args });
}

/**
 * Rendered charts, kept for a while: a chart is keyed by what it shows (command, subject and a
 * hash of its data), so a cache hit is always the picture of the current data. Bounded.
 */
export class ChartCache {
  private readonly entries = new Map<string, { png: Buffer; expiresAt: number }>();
  /** PNG bytes held: the bound that matters, as a chart weighs 10 to 60 KiB. */
  bytes = 0;

  constructor(
    private readonly ttlMs = 15 * 60_000,
    private readonly maxEntries = 200,
    // A 256 MB host counts every MB: some 20 to 100 charts, the ones people ask for again.
    private readonly maxBytes = 1024 * 1024,
    /** Monotonic: the cache's lifetime is an in-process duration, not a date. */
    private readonly now: () => number = () => performance.now(),
  ) {}

  hits = 0;
  misses = 0;

  /**
   * The chart as a reply's picture, its title as the picture's text. The title is keyed with the
   * data: a name the bot learns later (a collection's) draws a new picture, not the cached one with
   * the address. A chart that cannot be drawn is logged and left out: the answer goes without its
   * picture rather than not at all.
   */
  async image(
    key: string,
    chart: { title: string; data: unknown },
    render: () => Promise<Buffer>,
    name: string,
    logger: Logger,
  ): Promise<ReplyImage | undefined> {
    try {
      return { kind: "png", data: await this.get(key, chart, render), name, alt: chart.title };
    } catch (error) {
      logger.warn(
        { err: error, chart: key },
        "chart could not be drawn: the reply goes without it",
      );
      return undefined;
    }
  }

  async get(key: string, data: unknown, render: () => Promise<Buffer>): Promise<Buffer> {
    const fullKey = `${key}#${createHash("sha1").update(JSON.stringify(data)).digest("base64url")}`;
    const cached = this.entries.get(fullKey);
    if (cached && cached.expiresAt > this.now()) {
      this.hits++;
      return cached.png;
    }
    this.misses++;
    const png = await render();
    this.remove(fullKey);
    this.entries.set(fullKey, { png, expiresAt: this.now() + this.ttlMs });
    this.bytes += png.byteLength;
    while (this.entries.size > this.maxEntries || this.bytes > this.maxBytes) {
      const oldest = this.entries.keys().next().value;
      if (oldest === undefined || oldest === fullKey) break;
      this.remove(oldest);
    }
    return png;
  }

  private remove(key: string): void {
    const entry = this.entries.get(key);
    if (!entry) return;
    this.bytes -= entry.png.byteLength;
    this.entries.delete(key);
  }
}
