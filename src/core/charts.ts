import type { Logger } from "../log.ts";
import type { ChartSpec, ReplyImage } from "./reply.ts";

/**
 * Where a reply's chart spec becomes a picture. The core only asks; the drawing (a canvas, a
 * child process, a cache of pictures) lives on the render side, which implements this port.
 */
export interface ChartDrawer {
  /**
   * The chart as a PNG image of the reply, its title as the image's text; undefined when it cannot
   * be drawn (the drawer logs why): the answer goes without its picture rather than not at all.
   */
  draw(spec: ChartSpec, logger: Logger): Promise<ReplyImage | undefined>;
}

/**
 * A chart shows how values compare or change: one dot on an empty plot, or one bar, says nothing
 * the text does not. Below this many points a command answers in text and says why.
 */
export const MIN_CHART_POINTS = 2;

/**
 * What the painter draws of a "lines" or "compare" chart at most: more lines than colours tell
 * apart, more bar pairs than 400 pixels hold, more days than points a reader can see (the latest
 * are kept); names longer than `name` characters are cut. The rest is left out, not refused.
 */
export const CHART_LIMITS = { series: 8, rows: 20, labels: 60, name: 28 } as const;

/** The points (owner counts, bars with a value, days with a value) a chart would plot. */
export function chartPoints(spec: ChartSpec): number {
  switch (spec.kind) {
    case "owners-history":
      return spec.points.length;
    case "ranking":
      return spec.items.filter((item) => item.value !== undefined).length;
    case "audience":
      return spec.rows.length;
    case "lines": {
      // Counted over what the painter draws: days beyond its window, or series beyond its cap,
      // would otherwise make a chart of empty days look worth drawing.
      const start = Math.max(0, spec.labels.length - CHART_LIMITS.labels);
      const series = spec.series.slice(0, CHART_LIMITS.series);
      let days = 0;
      for (let i = start; i < spec.labels.length; i++)
        if (series.some((line) => Number.isFinite(line.values[i]))) days++;
      return days;
    }
    case "compare":
      return spec.rows
        .slice(0, CHART_LIMITS.rows)
        .filter((row) => row.values.some((value) => Number.isFinite(value))).length;
  }
}

/** Whether the spec has enough points to be worth a picture. */
export function chartable(spec: ChartSpec): boolean {
  return chartPoints(spec) >= MIN_CHART_POINTS;
}
