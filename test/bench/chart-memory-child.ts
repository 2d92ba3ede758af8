/**
 * One fresh process for the chart memory figure: draws CHARTS distinct owner-count charts, either
 * all on the main thread (`inline`, as the bot did before issue 14) or through the production
 * painter (`painter`: a worker replaced every 50 charts), and prints its resident set before and
 * after, in MB, as JSON.
 */
import * as drawing from "../../src/render/chart-drawing.ts";
import { chartPainter, ownersHistoryChart } from "../../src/render/charts.ts";

const mode = process.argv[2] === "inline" ? "inline" : "painter";
const charts = Number(process.argv[3] ?? 400);
const draw = mode === "inline" ? drawing.ownersHistoryChart : ownersHistoryChart;
const rss = () => process.memoryUsage().rss / 1e6;

await draw("warm-up", []);
const before = rss();
for (let i = 0; i < charts; i++) {
  const points = Array.from({ length: i % 2 ? 365 : 30 }, (_, d) => ({
    timestamp: new Date(Date.UTC(2025, 0, 1) + d * 86_400_000).toISOString(),
    count: String(1000 + ((d * 7919 + i * 31) % 500)),
  }));
  await draw(`Collection ${i}, owners`, points);
}
const after = rss();
await chartPainter.close();
process.stdout.write(`${JSON.stringify({ before, after })}\n`);
