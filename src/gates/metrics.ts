import { Gauge, type Registry } from "prom-client";
import { countedCounter } from "../ops/metrics.ts";

interface GateCounters {
  passes: number;
  grants: number;
  removals: number;
  deferred: number;
  failures: number;
}

interface GateCounts {
  gates: number;
  paused: number;
  granted: number;
  grace: number;
  pending: number;
}

/** Gates (/gate): the service's counts since start, and the stored gates and members. */
export function gateMetrics(
  registry: Registry,
  sources: { counters: () => GateCounters; counts: () => Promise<GateCounts> },
): void {
  const counter = (name: string, help: string, key: keyof GateCounters) =>
    countedCounter(registry, name, help, () => sources.counters()[key]);
  counter("bot_gate_passes_total", "Gate verdicts that passed since start", "passes");
  counter("bot_gate_grants_total", "Roles given and join requests approved since start", "grants");
  counter("bot_gate_removals_total", "Members removed after their grace since start", "removals");
  counter(
    "bot_gate_deferred_total",
    "Gate re-checks left for a later minute: GATE_CHECKS_PER_MINUTE was spent",
    "deferred",
  );
  counter(
    "bot_gate_failures_total",
    "Gate verdicts unknown (upstream error) or platform calls failed: nothing changed",
    "failures",
  );
  new Gauge({
    name: "bot_gates",
    help: "Gates stored, and how many of them are paused (the platform refused the bot)",
    labelNames: ["state"] as const,
    registers: [registry],
    async collect() {
      const counts = await sources.counts();
      this.set({ state: "active" }, counts.gates - counts.paused);
      this.set({ state: "paused" }, counts.paused);
    },
  });
  new Gauge({
    name: "bot_gate_members",
    help: "Gates' members by status (granted, in grace, pending join requests)",
    labelNames: ["status"] as const,
    registers: [registry],
    async collect() {
      const counts = await sources.counts();
      for (const status of ["granted", "grace", "pending"] as const)
        this.set({ status }, counts[status]);
    },
  });
}
