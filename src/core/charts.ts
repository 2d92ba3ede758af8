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

/** The points (owner counts, bars with a value) a chart would plot. */
export function chartPoints(spec: ChartSpec): number {
  switch (spec.kind) {
    case "owners-history":
      return spec.points.length;
    case "ranking":
      return spec.items.filter((item) => item.value !== undefined).length;
    case "audience":
      return spec.rows.length;
  }
}

/** Whether the spec has enough points to be worth a picture. */
export function chartable(spec: ChartSpec): boolean {
  return chartPoints(spec) >= MIN_CHART_POINTS;
}
