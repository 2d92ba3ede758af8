import type { Check } from "../jobs/liveness.ts";
import type { Metrics } from "../ops/metrics.ts";
import { within } from "../within.ts";
import type { HttpRoute, RouteHandler } from "./host.ts";

/** What /healthz says about a chain's poller (src/alerts/poller.ts fills it). */
export interface PollerHealth {
  /** Whether this process holds the lease; a process that does not poll is not judged. */
  leader: boolean;
  /** Seconds without a successful poll: since the last one, or since the lease was taken. */
  lagSeconds: number | null;
  /** Seconds since the last successful poll; null when none succeeded in this process. */
  lastSuccessAgoSeconds: number | null;
  healthy: boolean;
  reason?: string;
}

export interface Health {
  ok: boolean;
  adapters: Record<string, boolean>;
  database: boolean;
  /** Why the store's writes fail for lack of room (a full disk); absent while they do not. */
  disk?: string;
  /** Why the logs' destination (DATA_DIR/bot.log, stderr) is not written; absent while it is. */
  log?: string;
  /** The default chain's poller (absent in a bot without the alerts feature). */
  poller?: PollerHealth;
  /** With several chains: each chain's poller, by chain id (ok only when all are healthy). */
  pollers?: Record<string, PollerHealth>;
  /**
   * Only with REDIS_URL. "degraded": Redis is unreachable and this instance runs on its own cache
   * and limits; it still serves, so this alone keeps the status 200.
   */
  redis?: "ok" | "degraded";
  /** Why Redis is treated as down (unreachable, or its breaker open after repeated timeouts). */
  redisDown?: { reason: string; since?: string | undefined };
  /**
   * Every part's verdict (adapters, the database, each background job or its lease); `ok` is
   * false when one is not, and its reason says why. A new part adds its check here.
   */
  checks: Check[];
  /** With insights: the background's failed rounds and snapshots since start, and its pace. */
  insights?: { failures: number; walletsPerMinute: number };
  /** With gates (/gate): gates, paused ones, members by status, and the counts since start. */
  gates?: {
    gates: number;
    paused: number;
    granted: number;
    grace: number;
    pending: number;
    passes: number;
    grants: number;
    removals: number;
    deferred: number;
    failures: number;
  };
}

/** /healthz answers within this however long the checks take (they should never be this slow). */
export const HEALTH_ANSWER_MS = 1_000;

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
        const answered = await within(options.health(), HEALTH_ANSWER_MS);
        const health = answered.done
          ? answered.value
          : {
              ok: false,
              checks: [
                {
                  name: "health",
                  ok: false,
                  reason: `the checks did not complete within ${HEALTH_ANSWER_MS} ms`,
                },
              ],
            };
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
