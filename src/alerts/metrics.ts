import { Gauge, type Registry } from "prom-client";
import type { NewContractPoller } from "./poller.ts";

/**
 * The alerts' gauges: the outbox's depth, and each poller's lag and gaps (with a `chain` label
 * when the bot polls several chains), read when Prometheus scrapes.
 */
export function alertGauges(
  registry: Registry,
  sources: { outboxDepth: () => Promise<number>; pollers: readonly NewContractPoller[] },
): void {
  const several = sources.pollers.length > 1;
  new Gauge({
    name: "bot_poller_gaps",
    help: "Polls since start that could not be sure to have seen every new contract",
    labelNames: ["chain"] as const,
    registers: [registry],
    collect() {
      this.reset();
      for (const poller of sources.pollers)
        if (several) this.set({ chain: poller.chain }, poller.stats.gaps);
        else this.set(poller.stats.gaps);
    },
  });
  new Gauge({
    name: "bot_outbox_depth",
    help: "Alerts waiting to be delivered",
    registers: [registry],
    async collect() {
      this.set(await sources.outboxDepth());
    },
  });
  new Gauge({
    name: "bot_poller_lag_seconds",
    help: "Seconds without a successful poll: since the last one, or since this process took the poller lease (absent when it does not poll)",
    labelNames: ["chain"] as const,
    registers: [registry],
    collect() {
      this.reset();
      for (const poller of sources.pollers) {
        const lag = poller.health().lagSeconds ?? undefined;
        if (lag === undefined) continue;
        if (several) this.set({ chain: poller.chain }, lag);
        else this.set(lag);
      }
    },
  });
}
