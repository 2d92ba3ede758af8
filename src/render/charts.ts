import { createHash } from "node:crypto";
import { Worker } from "node:worker_threads";
import type { ReplyImage } from "../core/reply.ts";
import type { Logger } from "../log.ts";
import type {
  audienceChart as drawAudience,
  ownersHistoryChart as drawOwners,
  rankingChart as drawRanking,
} from "./chart-drawing.ts";
import type { ChartRequest, ChartResponse } from "./chart-worker.ts";

export { CHART_HEIGHT, CHART_WIDTH, plotValue } from "./chart-drawing.ts";

/**
 * Server-side charts, drawn off the main thread. Chart.js on @napi-rs/canvas (chart-drawing.ts)
 * runs in a worker thread, so a 10–20 ms draw never stalls other people's commands, and the
 * worker is replaced after a number of charts and stopped when idle: Skia keeps memory for every
 * text it rasterizes on a thread until that thread ends (measured with @napi-rs/canvas 1.0.11 and
 * 1.1.1: about 0.1 MB per chart, 60 MB after 600 charts drawn on one thread; a thread that ends
 * gives it all back). Neither library loads in a bot that never draws a chart.
 */

export interface ChartPainterOptions {
  /** Charts one worker draws before a fresh one takes over. */
  drawsPerWorker: number;
  /** A worker with nothing to draw for this long stops, and its memory goes with it. */
  idleMs: number;
  /** A draw that takes longer fails, and its worker is replaced. */
  timeoutMs: number;
}

interface Job {
  resolve(png: Buffer): void;
  reject(error: Error): void;
  timer: NodeJS.Timeout;
}

interface PainterThread {
  worker: Worker;
  pending: Map<number, Job>;
  sent: number;
  idle: NodeJS.Timeout | undefined;
}

/**
 * A chart needs little heap (Chart.js and one chart's objects): a small young generation keeps
 * the worker from reserving V8's default 32 MB of it, and the old-generation cap turns a runaway
 * draw into a failed chart instead of a process out of memory.
 */
const WORKER_LIMITS = { maxYoungGenerationSizeMb: 4, maxOldGenerationSizeMb: 128 };

/** Where the worker's code is: dist/chart-worker.js when built, else the TypeScript source. */
function startWorker(): Worker {
  const here = import.meta.url;
  if (here.endsWith(".ts")) {
    // From the sources (tests, `npm run dev`): Node 20 does not pass tsx's loader on to a worker,
    // so the worker registers it before importing its entry.
    const tsx = import.meta.resolve("tsx/esm/api");
    const entry = new URL("./chart-worker.ts", here).href;
    const code = `import(${JSON.stringify(tsx)}).then((tsx) => { tsx.register(); return import(${JSON.stringify(entry)}); })`;
    return new Worker(code, { eval: true, resourceLimits: WORKER_LIMITS });
  }
  // The build bundles this module into dist/main.js or into a chunk in dist/chunks/.
  const inChunk = /\/chunks\/[^/]+$/.test(new URL(here).pathname);
  return new Worker(new URL(inChunk ? "../chart-worker.js" : "./chart-worker.js", here), {
    resourceLimits: WORKER_LIMITS,
  });
}

export class ChartPainter {
  private current: PainterThread | undefined;
  private nextId = 1;
  /** Workers started so far (for tests and metrics). */
  started = 0;
  /** Workers alive now: the current one, and a replaced one finishing its last charts. */
  running = 0;

  constructor(
    private readonly options: ChartPainterOptions = {
      drawsPerWorker: 50,
      idleMs: 60_000,
      timeoutMs: 30_000,
    },
  ) {}

  draw(request: DistributiveOmit<ChartRequest, "id">): Promise<Buffer> {
    const thread = this.thread();
    const id = this.nextId++;
    thread.sent++;
    if (thread.idle) clearTimeout(thread.idle);
    thread.idle = undefined;
    return new Promise<Buffer>((resolve, reject) => {
      const timer = setTimeout(() => {
        this.fail(thread, new Error(`the chart took longer than ${this.options.timeoutMs} ms`));
      }, this.options.timeoutMs);
      timer.unref();
      thread.pending.set(id, { resolve, reject, timer });
      thread.worker.ref();
      thread.worker.postMessage({ ...request, id } as ChartRequest);
    });
  }

  /** Stops every worker; draws in progress fail. */
  async close(): Promise<void> {
    const thread = this.current;
    this.current = undefined;
    if (thread) await this.stop(thread, new Error("the chart painter was closed"));
  }

  private thread(): PainterThread {
    const current = this.current;
    if (current && current.sent < this.options.drawsPerWorker) return current;
    if (current) this.retire(current);
    const worker = startWorker();
    this.started++;
    this.running++;
    const thread: PainterThread = { worker, pending: new Map(), sent: 0, idle: undefined };
    worker.on("message", (response: ChartResponse) => this.settle(thread, response));
    worker.on("error", (error) => this.fail(thread, error));
    worker.on("exit", (code) => {
      this.running--;
      if (thread.pending.size > 0)
        this.fail(thread, new Error(`the chart worker exited (${code})`));
      if (this.current === thread) this.current = undefined;
    });
    worker.unref();
    this.current = thread;
    return thread;
  }

  private settle(thread: PainterThread, response: ChartResponse): void {
    const job = thread.pending.get(response.id);
    if (!job) return;
    thread.pending.delete(response.id);
    clearTimeout(job.timer);
    if ("png" in response)
      job.resolve(
        Buffer.from(response.png.buffer, response.png.byteOffset, response.png.byteLength),
      );
    else job.reject(new Error(response.error));
    if (thread.pending.size > 0) return;
    thread.worker.unref();
    if (this.current !== thread) {
      void thread.worker.terminate();
      return;
    }
    thread.idle = setTimeout(() => {
      if (this.current === thread && thread.pending.size === 0) {
        this.current = undefined;
        void thread.worker.terminate();
      }
    }, this.options.idleMs);
    thread.idle.unref();
  }

  /** A worker that has drawn its share finishes what it has, then stops. */
  private retire(thread: PainterThread): void {
    if (thread.idle) clearTimeout(thread.idle);
    if (thread.pending.size === 0) void thread.worker.terminate();
  }

  private fail(thread: PainterThread, error: Error): void {
    if (this.current === thread) this.current = undefined;
    void this.stop(thread, error);
  }

  private async stop(thread: PainterThread, error: Error): Promise<void> {
    if (thread.idle) clearTimeout(thread.idle);
    const jobs = [...thread.pending.values()];
    thread.pending.clear();
    for (const job of jobs) {
      clearTimeout(job.timer);
      job.reject(error);
    }
    await thread.worker.terminate();
  }
}

type DistributiveOmit<T, K extends keyof T> = T extends unknown ? Omit<T, K> : never;

/** The process's painter: one worker at a time, started on the first chart. */
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
    private readonly maxBytes = 4 * 1024 * 1024,
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
