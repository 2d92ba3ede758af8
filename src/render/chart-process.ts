import {
  audienceChart,
  compareChart,
  linesChart,
  ownersHistoryChart,
  rankingChart,
} from "./chart-drawing.ts";

/**
 * The chart painter's entry, a child process of the bot (see ChartPainter in charts.ts): draws one
 * chart per message, in order, and sends the PNG back over the IPC channel, whose 'advanced'
 * serialization moves its bytes as they are (JSON would spell each byte out as a number).
 */

export type ChartRequest =
  | { id: number; kind: "owners"; args: Parameters<typeof ownersHistoryChart> }
  | { id: number; kind: "ranking"; args: Parameters<typeof rankingChart> }
  | { id: number; kind: "audience"; args: Parameters<typeof audienceChart> }
  | { id: number; kind: "lines"; args: Parameters<typeof linesChart> }
  | { id: number; kind: "compare"; args: Parameters<typeof compareChart> };

export type ChartResponse = { id: number; png: Uint8Array } | { id: number; error: string };

function drawOne(request: ChartRequest): Promise<Buffer> {
  switch (request.kind) {
    case "owners":
      return ownersHistoryChart(...request.args);
    case "ranking":
      return rankingChart(...request.args);
    case "audience":
      return audienceChart(...request.args);
    case "lines":
      return linesChart(...request.args);
    case "compare":
      return compareChart(...request.args);
  }
}

const send = process.send?.bind(process);
if (send) {
  process.on("message", async (request: ChartRequest) => {
    let response: ChartResponse;
    try {
      response = { id: request.id, png: await drawOne(request) };
    } catch (error) {
      response = { id: request.id, error: error instanceof Error ? error.message : String(error) };
    }
    send(response);
    // The painter runs with --expose-gc (CHILD_LIMITS in charts.ts): the chart's garbage, and the
    // Skia buffers its objects hold, go now, between charts, rather than pile up until V8 decides.
    (globalThis as { gc?: () => void }).gc?.();
  });
  // The bot went (stopped, crashed or killed): a painter has nothing to do without it.
  process.on("disconnect", () => process.exit(0));
}
