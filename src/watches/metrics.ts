import type { Registry } from "prom-client";
import { countedCounter } from "../ops/metrics.ts";

/** The watch checker's counts since start (/watch), read when Prometheus scrapes. */
export function watchCounters(
  registry: Registry,
  stats: () => { checks: number; posts: number; deferred: number; failures: number },
): void {
  countedCounter(
    registry,
    "bot_watch_reads_total",
    "Upstream reads made by watches (at the data's freshness) since start",
    () => stats().checks,
  );
  countedCounter(
    registry,
    "bot_watch_posts_total",
    "Watch posts sent since start",
    () => stats().posts,
  );
  countedCounter(
    registry,
    "bot_watch_deferred_total",
    "Watch reads left for a later round: WATCH_CHECKS_PER_MINUTE was spent",
    () => stats().deferred,
  );
  countedCounter(
    registry,
    "bot_watch_failures_total",
    "Watch reads that failed (tried again within 5 minutes)",
    () => stats().failures,
  );
}
