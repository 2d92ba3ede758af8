import { Counter, collectDefaultMetrics, Gauge, Histogram, Registry } from "prom-client";
import type { CacheStats } from "../api/cache.ts";
import type { OutcomeEvent } from "../core/outcome.ts";

/**
 * The bot's Prometheus metrics. Producers report through small hooks (the runtime's outcomes,
 * the transport's requests, delivery's sends); counts that already live elsewhere (cache stats,
 * outbox depth) are read when Prometheus scrapes.
 */
export interface Metrics {
  registry: Registry;
  onCommand(event: OutcomeEvent): void;
  onUpstream(event: { method: string; path: string; status: number | "error"; ms: number }): void;
  onDelivered(count: number, mintedAt: readonly (string | undefined)[], now: number): void;
  /** `chain`: the poller's chain, a label when the bot polls several. */
  onFutureMints(count: number, chain?: string): void;
  onAlertsDropped(count: number): void;
  /** Alerts not enqueued: minted by a bad actor, in a channel that hides them. */
  onAlertsHidden(count: number): void;
  /** Alerts not posted: members of the channel reported the contract as spam. */
  onAlertsSuppressed(count: number): void;
  /** A scheduled digest's slot: posted on time, posted late (the bot was down), or given up. */
  onDigest(outcome: "posted" | "late" | "failed"): void;
}

export interface MetricSources {
  cache: () => CacheStats;
  /** The chart cache: pictures served from it, and pictures drawn, since start. */
  charts: () => { hits: number; misses: number };
  /** The logs' destination: writes that failed and lines dropped since start, and whether now. */
  log?: () => { failing: string | undefined; failures: number; dropped: number };
}

/** Addresses, token ids and names become placeholders, so label values stay few. */
export function endpointTemplate(path: string): string {
  return path
    .replace(/\/ens\/by_name\/[^/]+/, "/ens/by_name/{name}")
    .replace(/0x[0-9a-fA-F]{40}/g, "{address}")
    .replace(/\/wallets\/v1beta2\/(?!ens\/)[^/]+\//, "/wallets/v1beta2/{wallet}/")
    .replace(/\/by_owner\/[^/]+/, "/by_owner/{wallet}")
    .replace(/\/\d+(?=\/|$)/g, "/{tokenId}");
}

/**
 * A counter whose count lives elsewhere (a job's own figures since start), read into it when
 * Prometheus scrapes: the features' metrics use it too.
 */
export function countedCounter(
  registry: Registry,
  name: string,
  help: string,
  read: () => number,
): Counter {
  return new Counter({
    name,
    help,
    registers: [registry],
    collect() {
      this.reset();
      this.inc(read());
    },
  });
}

export function createMetrics(sources: MetricSources): Metrics {
  const registry = new Registry();
  // The process's own figures (resident memory, heap spaces, event-loop lag, open handles), under
  // prom-client's standard names: what an operator looks at first when memory or latency grows.
  collectDefaultMetrics({ register: registry });
  const commands = new Counter({
    name: "bot_commands_total",
    help: "Commands and button presses answered, by command, kind, outcome and refusal code (none when not refused; the codes are src/error-codes.ts's closed set)",
    labelNames: ["command", "kind", "outcome", "code"] as const,
    registers: [registry],
  });
  const commandSeconds = new Histogram({
    name: "bot_command_duration_seconds",
    help: "Time to answer a command or button press",
    labelNames: ["command", "kind"] as const,
    buckets: [0.005, 0.025, 0.1, 0.25, 0.5, 1, 2.5, 5, 10, 20],
    registers: [registry],
  });
  const upstream = new Counter({
    name: "bot_upstream_requests_total",
    help: "Requests to the data service, by endpoint and status (each attempt counts)",
    labelNames: ["method", "endpoint", "status"] as const,
    registers: [registry],
  });
  const upstreamSeconds = new Histogram({
    name: "bot_upstream_request_duration_seconds",
    help: "Duration of one request to the data service",
    labelNames: ["method", "endpoint"] as const,
    buckets: [0.01, 0.05, 0.1, 0.25, 0.5, 1, 2.5, 5, 10],
    registers: [registry],
  });
  const deliveries = new Counter({
    name: "bot_alert_deliveries_total",
    help: "New-collection alerts delivered (a digest counts each alert in it)",
    registers: [registry],
  });
  const dropped = new Counter({
    name: "bot_alerts_dropped_total",
    help: "New-collection alerts given up on after ALERT_MAX_ATTEMPTS failed tries",
    registers: [registry],
  });
  const hidden = new Counter({
    name: "bot_alerts_hidden_total",
    help: "New-collection alerts not enqueued: the minter is labelled BEHAVIOR_BADACTOR and the channel hides bad actors",
    registers: [registry],
  });
  const suppressed = new Counter({
    name: "bot_alerts_suppressed_total",
    help: "New-collection alerts not posted: ALERT_SUPPRESS_REPORTS members of the channel reported the contract as spam",
    registers: [registry],
  });
  const digests = new Counter({
    name: "bot_digests_total",
    help: "Scheduled digest slots: posted on time, posted late (the bot was down), or given up",
    labelNames: ["outcome"] as const,
    registers: [registry],
  });
  const alertLag = new Histogram({
    name: "bot_alert_lag_seconds",
    help: "From a contract's mint to its alert being accepted by the platform",
    buckets: [5, 15, 30, 60, 120, 300, 600, 1800, 3600],
    registers: [registry],
  });
  const futureMints = new Counter({
    name: "bot_poller_future_mints_total",
    help: "New contracts dated past the clock skew allowance (posted; the cursor did not follow)",
    labelNames: ["chain"] as const,
    registers: [registry],
  });
  const cacheGauge = (name: string, help: string, read: (stats: CacheStats) => number) =>
    new Gauge({
      name,
      help,
      registers: [registry],
      collect() {
        this.set(read(sources.cache()));
      },
    });
  cacheGauge("bot_cache_hits", "Answers served from the cache since start", (s) => s.hits);
  cacheGauge(
    "bot_cache_misses",
    "Answers fetched from the data service since start",
    (s) => s.misses,
  );
  cacheGauge(
    "bot_cache_single_flight_joins",
    "Reads that joined an identical read in flight",
    (s) => s.joins,
  );
  cacheGauge(
    "bot_cache_full_skips",
    "Answers not cached because they were larger than CACHE_MAX_ENTRY_BYTES",
    (s) => s.full,
  );
  // Counts kept by the chart cache itself, read at scrape time into counters.
  const chartCounter = (name: string, help: string, read: () => number) =>
    countedCounter(registry, name, help, read);
  chartCounter(
    "bot_chart_cache_hits_total",
    "Charts served from the chart cache since start",
    () => sources.charts().hits,
  );
  chartCounter(
    "bot_chart_cache_misses_total",
    "Charts drawn (not in the chart cache) since start",
    () => sources.charts().misses,
  );
  const { log } = sources;
  if (log) {
    chartCounter(
      "bot_log_write_failures_total",
      "Writes of the logs' destination (DATA_DIR/bot.log, stderr) that failed since start (a full disk)",
      () => log().failures,
    );
    chartCounter(
      "bot_log_lines_dropped_total",
      "Log lines dropped since start because their destination could not be written",
      () => log().dropped,
    );
    new Gauge({
      name: "bot_log_failing",
      help: "1 while the logs' destination cannot be written (its lines are dropped), else 0",
      registers: [registry],
      collect() {
        this.set(log().failing === undefined ? 0 : 1);
      },
    });
  }
  cacheGauge("bot_cache_bytes", "Bytes of the cached answers as received", (s) => s.bytes);
  return {
    registry,
    onCommand(event) {
      commands.inc({
        command: event.command,
        kind: event.kind,
        outcome: event.outcome,
        code: event.code ?? "none",
      });
      commandSeconds.observe({ command: event.command, kind: event.kind }, event.ms / 1000);
    },
    onUpstream(event) {
      const endpoint = endpointTemplate(event.path);
      upstream.inc({ method: event.method, endpoint, status: String(event.status) });
      upstreamSeconds.observe({ method: event.method, endpoint }, event.ms / 1000);
    },
    onAlertsDropped(count) {
      dropped.inc(count);
    },
    onAlertsHidden(count) {
      hidden.inc(count);
    },
    onAlertsSuppressed(count) {
      suppressed.inc(count);
    },
    onDigest(outcome) {
      digests.inc({ outcome });
    },
    onDelivered(count, mintedAt, now) {
      deliveries.inc(count);
      for (const minted of mintedAt) {
        const at = minted ? Date.parse(minted) : Number.NaN;
        if (Number.isFinite(at)) alertLag.observe(Math.max(0, (now - at) / 1000));
      }
    },
    onFutureMints(count, chain) {
      if (chain === undefined) futureMints.inc(count);
      else futureMints.inc({ chain }, count);
    },
  };
}
