import { NFT_CONTRACT_TYPES } from "../../src/api/schemas.ts";
import { startSimulator } from "../../src/simulator/index.ts";

/**
 * The simulator in its own process, as the real service would be: prints url, key, fixtures.
 * A line "mint" on stdin mints one NFT contract (fungible ones are never alerted) and prints
 * `{"minted": address}`.
 */
const latencyMs = Number(process.env.BENCH_SIM_LATENCY_MS ?? "0");
const sim = await startSimulator({ faults: { latencyMs } });
process.stdout.write(
  `${JSON.stringify({ url: sim.url, apiKey: sim.apiKey, fixtures: sim.fixtures })}\n`,
);
let pending = "";
process.stdin.on("data", (chunk) => {
  pending += chunk;
  for (let at = pending.indexOf("\n"); at >= 0; at = pending.indexOf("\n")) {
    const line = pending.slice(0, at).trim();
    pending = pending.slice(at + 1);
    if (line !== "mint") continue;
    for (;;) {
      const [contract] = sim.mint(1);
      if (
        contract?.types.some((type) => (NFT_CONTRACT_TYPES as readonly string[]).includes(type))
      ) {
        process.stdout.write(`${JSON.stringify({ minted: contract.address.toLowerCase() })}\n`);
        break;
      }
    }
  }
});
process.on("SIGTERM", () => void sim.close().then(() => process.exit(0)));
