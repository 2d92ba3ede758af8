import type { ChartDrawer } from "../core/charts.ts";
import type { ChartSpec, ReplyImage } from "../core/reply.ts";
import type { Logger } from "../log.ts";
import {
  audienceChart,
  ChartCache,
  chartPainter,
  compareChart,
  linesChart,
  ownersHistoryChart,
  plotValue,
  rankingChart,
} from "./charts.ts";

/** The picture's file name, by the command that asks for each kind of chart. */
const FILE_NAMES: Record<ChartSpec["kind"], string> = {
  "owners-history": "owners.png",
  ranking: "top.png",
  audience: "audience.png",
  lines: "trend.png",
  compare: "compare.png",
};

/** The spec's data as the chart functions take it (the worker's drawing functions). */
function drawSpec(spec: ChartSpec): Promise<Buffer> {
  switch (spec.kind) {
    case "owners-history":
      return ownersHistoryChart(spec.title, spec.points);
    case "ranking":
      return rankingChart(spec.title, spec.axis, chartItems(spec.items));
    case "audience":
      return audienceChart(spec.title, spec.rows);
    case "lines":
      return linesChart(spec.title, spec.axis, spec.labels, spec.series);
    case "compare":
      return compareChart(spec.title, spec.axis, spec.groups, spec.rows);
  }
}

function chartItems(items: Extract<ChartSpec, { kind: "ranking" }>["items"]) {
  return items.map((item) => ({
    label: item.label,
    value: plotValue(item.value),
    ...(item.rank === undefined ? {} : { rank: item.rank }),
  }));
}

/** What the chart shows, keyed with its subject: the same title and data are one picture. */
function chartData(spec: ChartSpec): { title: string; data: unknown } {
  switch (spec.kind) {
    case "owners-history":
      return { title: spec.title, data: spec.points };
    case "ranking":
      return { title: spec.title, data: { axis: spec.axis, items: chartItems(spec.items) } };
    case "audience":
      return { title: spec.title, data: spec.rows };
    case "lines":
      return {
        title: spec.title,
        data: { axis: spec.axis, labels: spec.labels, series: spec.series },
      };
    case "compare":
      return { title: spec.title, data: { axis: spec.axis, groups: spec.groups, rows: spec.rows } };
  }
}

/**
 * Chart specs drawn by the chart painter's child process (charts.ts), the pictures kept in a
 * {@link ChartCache}: a picture asked for again (a second /top) costs no round trip to the child,
 * and the cache is bounded in bytes, so it stays worth its memory in the bot.
 */
export class CachedChartDrawer implements ChartDrawer {
  constructor(readonly cache: ChartCache = new ChartCache()) {}

  /** Stops the painter's child, if one runs (the bot's stop): no process is left behind. */
  close(): Promise<void> {
    return chartPainter.close();
  }

  /** Pictures served from the cache since start. */
  get hits(): number {
    return this.cache.hits;
  }

  /** Pictures drawn since start (each a miss of the cache). */
  get misses(): number {
    return this.cache.misses;
  }

  draw(spec: ChartSpec, logger: Logger): Promise<ReplyImage | undefined> {
    return this.cache.image(
      spec.subject,
      chartData(spec),
      () => drawSpec(spec),
      FILE_NAMES[spec.kind],
      logger,
    );
  }
}
