import type { PollerHealth } from "../alerts/poller.ts";
import type { Metrics } from "../ops/metrics.ts";
import type { HttpRoute, RouteHandler } from "./host.ts";

export interface Health {
  ok: boolean;
  adapters: Record<string, boolean>;
  database: boolean;
  /** Why the store's writes fail for lack of room (a full disk); absent while they do not. */
  disk?: string;
  /** The default chain's poller. */
  poller: PollerHealth;
  /** With several chains: each chain's poller, by chain id (ok only when all are healthy). */
  pollers?: Record<string, PollerHealth>;
  /**
   * Only with REDIS_URL. "degraded": Redis is unreachable and this instance runs on its own cache
   * and limits; it still serves, so this alone keeps the status 200.
   */
  redis?: "ok" | "degraded";
}

/** Operators read; nothing else is allowed. */
function readOnly(handle: RouteHandler): RouteHandler {
  return (req, res, body) => {
    if (req.method !== "GET" && req.method !== "HEAD") {
      req.resume();
      res.writeHead(405, { allow: "GET, HEAD" }).end();
      return;
    }
    return handle(req, res, body);
  };
}

/**
 * GET /healthz (200 when healthy, else 503, with the details as JSON) and GET /metrics
 * (Prometheus text).
 */
export function opsRoutes(options: {
  metrics: Metrics;
  health: () => Promise<Health>;
}): HttpRoute[] {
  return [
    {
      path: "/healthz",
      handle: readOnly(async (_req, res) => {
        const health = await options.health();
        res
          .writeHead(health.ok ? 200 : 503, { "content-type": "application/json" })
          .end(JSON.stringify(health));
      }),
    },
    {
      path: "/metrics",
      handle: readOnly(async (_req, res) => {
        const body = await options.metrics.registry.metrics();
        res.writeHead(200, { "content-type": options.metrics.registry.contentType }).end(body);
      }),
    },
  ];
}
