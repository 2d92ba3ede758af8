import { startSimulator } from "../../src/simulator/index.ts";

/** The simulator in its own process, as the real service would be: prints url, key, fixtures. */
const latencyMs = Number(process.env.BENCH_SIM_LATENCY_MS ?? "0");
const sim = await startSimulator({ faults: { latencyMs } });
process.stdout.write(
  `${JSON.stringify({ url: sim.url, apiKey: sim.apiKey, fixtures: sim.fixtures })}\n`,
);
process.on("SIGTERM", () => void sim.close().then(() => process.exit(0)));
