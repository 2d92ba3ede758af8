import { execFileSync } from "node:child_process";
import { audienceChart, ownersHistoryChart, rankingChart } from "../../src/render/charts.ts";
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
  rows.push(...chartMemory());
  return rows;
}

/**
 * Resident memory of a fresh process after drawing 400 distinct charts: all on one thread, as
 * before, against the production painter (a worker thread replaced every 50 charts). Skia keeps
 * memory for the text it rasterizes on a thread until the thread ends.
 */
function chartMemory(): BenchRow[] {
  const CHARTS = 400;
  const run = (mode: string) =>
    JSON.parse(
      execFileSync(
        process.execPath,
        ["--import", "tsx", "test/bench/chart-memory-child.ts", mode, String(CHARTS)],
        { encoding: "utf8" },
      ),
    ) as { before: number; after: number };
  const inline = run("inline");
  const painter = run("painter");
  const growth = (r: { before: number; after: number }) =>
    `${(r.after - r.before).toFixed(0)} MB (${r.before.toFixed(0)} → ${r.after.toFixed(0)} MB)`;
  return [
    {
      name: `RSS growth over ${CHARTS} charts, all drawn on the main thread (before)`,
      value: growth(inline),
    },
    {
      name: `RSS growth over ${CHARTS} charts, production painter (worker replaced every 50)`,
      value: growth(painter),
    },
  ];
}
