/**
 * One fresh process for the chart memory figures: draws CHARTS distinct owner-count charts, and
 * prints as JSON its resident set before and after (MB), the first chart's time (ms, from nothing
 * loaded) and the median chart's time after it. Modes:
 * - `inline`: all on the main thread, as the bot did before issue 14;
 * - `worker`: in a worker thread replaced every 50 charts, as the bot did before issue 28 (kept
 *   here, small, to compare in one run);
 * - `painter`: the production painter, a child process (its own resident set is printed too).
 */
import { readFileSync } from "node:fs";
import { Worker } from "node:worker_threads";
import * as drawing from "../../src/render/chart-drawing.ts";
import { chartPainter, ownersHistoryChart } from "../../src/render/charts.ts";

const mode = process.argv[2] ?? "painter";
const charts = Number(process.argv[3] ?? 400);
const rss = () => process.memoryUsage().rss / 1e6;
/** Another process's resident set (MB), and its file-backed part (Skia's library), from /proc. */
function rssOf(pid: number): { rss: number; file: number } {
  const status = readFileSync(`/proc/${pid}/status`, "utf8");
  const kb = (field: string) =>
    Number(new RegExp(`${field}:\\s+(\\d+)`).exec(status)?.[1] ?? Number.NaN) / 1e3;
  return { rss: kb("VmRSS"), file: kb("RssFile") };
}

type Draw = (...args: Parameters<typeof drawing.ownersHistoryChart>) => Promise<unknown>;

/** The bot's painter before issue 28: a worker thread drawing in order, replaced every 50. */
function workerThreadPainter(): { draw: Draw; close: () => Promise<void> } {
  const tsx = import.meta.resolve("tsx/esm/api");
  const entry = new URL("../../src/render/chart-drawing.ts", import.meta.url).href;
  const code = `import(${JSON.stringify(tsx)}).then(async (tsx) => {
    tsx.register();
    const drawing = await import(${JSON.stringify(entry)});
    const { parentPort } = await import("node:worker_threads");
    parentPort.on("message", async (args) => {
      const png = await drawing.ownersHistoryChart(...args);
      const out = new Uint8Array(png.byteLength);
      out.set(png);
      parentPort.postMessage(out, [out.buffer]);
    });
  })`;
  const limits = { maxYoungGenerationSizeMb: 4, maxOldGenerationSizeMb: 128 };
  let worker: Worker | undefined;
  let drawn = 0;
  return {
    draw: async (...args) => {
      if (drawn++ % 50 === 0) {
        await worker?.terminate();
        worker = new Worker(code, { eval: true, resourceLimits: limits });
      }
      const current = worker as Worker;
      const answer = new Promise((resolve) => current.once("message", resolve));
      current.postMessage(args);
      return answer;
    },
    close: async () => {
      await worker?.terminate();
    },
  };
}

const painter =
  mode === "inline"
    ? { draw: drawing.ownersHistoryChart as Draw, close: async () => {} }
    : mode === "worker"
      ? workerThreadPainter()
      : { draw: ownersHistoryChart as Draw, close: () => chartPainter.close() };

const base = rss();
let started = performance.now();
await painter.draw("warm-up", []);
const first = performance.now() - started;
const before = rss();
const times: number[] = [];
for (let i = 0; i < charts; i++) {
  const points = Array.from({ length: i % 2 ? 365 : 30 }, (_, d) => ({
    timestamp: new Date(Date.UTC(2025, 0, 1) + d * 86_400_000).toISOString(),
    count: String(1000 + ((d * 7919 + i * 31) % 500)),
  }));
  started = performance.now();
  await painter.draw(`Collection ${i}, owners`, points);
  times.push(performance.now() - started);
}
const after = rss();
const child = chartPainter.pid;
const childRss = mode === "painter" && child ? rssOf(child) : undefined;
const file = rssOf(process.pid).file;
await painter.close();
times.sort((a, b) => a - b);
const warm = times[Math.floor(times.length / 2)];
process.stdout.write(`${JSON.stringify({ base, before, after, file, childRss, first, warm })}\n`);
