import { execFileSync } from "node:child_process";
import {
  audienceChart,
  chartPainter,
  ownersHistoryChart,
  rankingChart,
} from "../../src/render/charts.ts";
import type { BenchRow } from "./report.ts";

const median = (values: number[]) =>
  [...values].sort((a, b) => a - b)[Math.floor(values.length / 2)] ?? Number.NaN;

/** Median render time of each chart at chat size (800x400), after a warm-up. */
export async function benchCharts(): Promise<BenchRow[]> {
  const year = Array.from({ length: 365 }, (_, i) => ({
    timestamp: new Date(Date.UTC(2025, 10, 22 + i)).toISOString(),
    count: String(5000 + Math.round(300 * Math.sin(i / 20)) + i),
  }));
  const ranking = Array.from({ length: 25 }, (_, i) => ({
    label: `Collection number ${i + 1}`,
    value: 10_000 / (i + 1),
  }));
  const shares = [
    "Whale",
    "Collector",
    "Flipper",
    "Newbie",
    "Explorer",
    "Patron",
    "Creator",
    "Advanced",
    "Tastemaker",
    "Inactive",
  ].map((label, i) => ({ label, share: 20 - i * 1.5, change: i % 2 ? `-${i}` : `+${i * 3}` }));
  const charts: [string, () => Promise<Buffer>][] = [
    ["owner-count line, 365 daily points", () => ownersHistoryChart("Owners, last 365 days", year)],
    [
      "owner-count line, 30 daily points",
      () => ownersHistoryChart("Owners, last 30 days", year.slice(-30)),
    ],
    [
      "top collections bars, 25 rows",
      () => rankingChart("Top collections by sales volume", "Sales volume (ETH)", ranking),
    ],
    ["audience shares bars, 10 categories", () => audienceChart("Audience", shares)],
    ["no-data picture", () => ownersHistoryChart("Owners", [])],
  ];
  const rows: BenchRow[] = [];
  for (const [name, render] of charts) {
    for (let i = 0; i < 5; i++) await render();
    const samples: number[] = [];
    let bytes = 0;
    for (let i = 0; i < 30; i++) {
      const started = performance.now();
      bytes = (await render()).byteLength;
      samples.push(performance.now() - started);
    }
    rows.push({
      name: `render ${name}, median (goal < 100 ms)`,
      value: `${median(samples).toFixed(1)} ms, ${(bytes / 1024).toFixed(0)} KiB`,
    });
  }
  // The painter's child from the timings above goes: the figures below start from nothing.
  await chartPainter.close();
  rows.push(...chartMemory());
  return rows;
}

/**
 * Resident memory of a fresh process after drawing 400 distinct charts, with the first chart's
 * time (from nothing loaded: the painter's start) and a warm chart's: all on the main thread (as
 * before issue 14), in a worker thread replaced every 50 charts (before issue 28), and through the
 * production painter, a child process whose memory is not the bot's (printed apart).
 */
function chartMemory(): BenchRow[] {
  const CHARTS = 400;
  type Run = {
    base: number;
    before: number;
    after: number;
    file: number;
    childRss?: { rss: number; file: number };
    first: number;
    warm: number;
  };
  const run = (mode: string) =>
    JSON.parse(
      execFileSync(
        process.execPath,
        ["--import", "tsx", "test/bench/chart-memory-child.ts", mode, String(CHARTS)],
        { encoding: "utf8" },
      ),
    ) as Run;
  const modes: [string, string][] = [
    ["inline", "all on the main thread (before issue 14)"],
    ["worker", "worker thread replaced every 50 (before issue 28)"],
    ["painter", "child-process painter (issue 28)"],
  ];
  const rows: BenchRow[] = [];
  for (const [mode, label] of modes) {
    const r = run(mode);
    rows.push(
      {
        name: `bot RSS after ${CHARTS} charts, ${label}`,
        value: `${r.after.toFixed(0)} MB (${r.base.toFixed(0)} MB before any chart, ${r.file.toFixed(0)} MB of it file-backed)`,
      },
      {
        name: `first chart (loads the painter) and a warm chart's median, ${label}`,
        value: `${r.first.toFixed(0)} ms, ${r.warm.toFixed(1)} ms`,
      },
    );
    if (r.childRss)
      rows.push({
        name: `the painter child's own RSS after ${CHARTS} charts (it exits after a quiet minute)`,
        value: `${r.childRss.rss.toFixed(0)} MB (${r.childRss.file.toFixed(0)} MB file-backed)`,
      });
  }
  return rows;
}
