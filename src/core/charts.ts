import type { Logger } from "../log.ts";
import type { ChartSpec, ReplyImage } from "./reply.ts";

/**
 * Where a reply's chart spec becomes a picture. The core only asks; the drawing (a canvas, a
 * worker thread, a cache of pictures) lives on the render side, which implements this port.
 */
export interface ChartDrawer {
  /**
   * The chart as a PNG image of the reply, its title as the image's text; undefined when it cannot
   * be drawn (the drawer logs why): the answer goes without its picture rather than not at all.
   */
  draw(spec: ChartSpec, logger: Logger): Promise<ReplyImage | undefined>;
}
