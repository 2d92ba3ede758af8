import { createServer, type Server } from "node:http";
import type { PollerHealth } from "../alerts/poller.ts";
import type { Logger } from "../log.ts";
import type { Metrics } from "./metrics.ts";

export interface Health {
  ok: boolean;
  adapters: Record<string, boolean>;
  database: boolean;
  poller: PollerHealth;
}

/**
 * Optional HTTP for operators: GET /healthz (200 when healthy, else 503, with the details as
 * JSON) and GET /metrics (Prometheus text). Nothing else is served.
 */
export async function startOpsServer(options: {
  port: number;
  host: string;
  metrics: Metrics;
  health: () => Promise<Health>;
  logger: Logger;
}): Promise<Server> {
  const server = createServer((req, res) => {
    void (async () => {
      const path = (req.url ?? "/").split("?")[0];
      if (req.method !== "GET" && req.method !== "HEAD") {
        res.writeHead(405, { allow: "GET, HEAD" }).end();
        return;
      }
      if (path === "/healthz") {
        const health = await options.health();
        res
          .writeHead(health.ok ? 200 : 503, { "content-type": "application/json" })
          .end(JSON.stringify(health));
        return;
      }
      if (path === "/metrics") {
        const body = await options.metrics.registry.metrics();
        res.writeHead(200, { "content-type": options.metrics.registry.contentType }).end(body);
        return;
      }
      res.writeHead(404, { "content-type": "text/plain" }).end("not found\n");
    })().catch((error: unknown) => {
      options.logger.error({ err: error }, "ops request failed");
      if (!res.headersSent) res.writeHead(500).end();
    });
  });
  await new Promise<void>((resolve, reject) => {
    server.once("error", reject);
    server.listen(options.port, options.host, () => resolve());
  });
  options.logger.info({ host: options.host, port: options.port }, "health and metrics listening");
  return server;
}
