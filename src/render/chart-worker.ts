import { parentPort } from "node:worker_threads";
import { audienceChart, ownersHistoryChart, rankingChart } from "./chart-drawing.ts";

/**
 * The chart worker's entry (see ChartPainter in charts.ts): draws one chart per message, in order,
 * and posts the PNG back, its memory transferred rather than copied.
 */

export type ChartRequest =
  | { id: number; kind: "owners"; args: Parameters<typeof ownersHistoryChart> }
  | { id: number; kind: "ranking"; args: Parameters<typeof rankingChart> }
  | { id: number; kind: "audience"; args: Parameters<typeof audienceChart> };

export type ChartResponse = { id: number; png: Uint8Array } | { id: number; error: string };

function drawOne(request: ChartRequest): Promise<Buffer> {
  switch (request.kind) {
    case "owners":
      return ownersHistoryChart(...request.args);
    case "ranking":
      return rankingChart(...request.args);
    case "audience":
      return audienceChart(...request.args);
  }
}

const port = parentPort;
if (port) {
  port.on("message", async (request: ChartRequest) => {
    let response: ChartResponse;
    try {
      const png = await drawOne(request);
      // A copy the size of the PNG, whose memory can move to the main thread: Node's small
      // Buffers share one pooled ArrayBuffer, which cannot be transferred.
      const out = new Uint8Array(png.byteLength);
      out.set(png);
      response = { id: request.id, png: out };
      port.postMessage(response, [out.buffer]);
      return;
    } catch (error) {
      response = { id: request.id, error: error instanceof Error ? error.message : String(error) };
    }
    port.postMessage(response);
  });
}
