import { buildWorld, startSimulator } from "../../src/simulator/index.ts";

/**
 * The simulator in its own process for the insights bench, as the real service would be: prints
 * its url, key, fixtures and every wallet address its data set knows (some 3,000). A line "count"
 * on stdin prints `{"requests": N, "byPath": {...}}`: the requests it has answered so far, by path
 * with addresses and token ids folded (`/wallets/v1beta2/{wallet}/nfts`).
 */
const world = buildWorld(1, Date.now());
const sim = await startSimulator({ world });
const wallets = world.wallets.map((wallet) => wallet.address.toLowerCase());
process.stdout.write(
  `${JSON.stringify({ url: sim.url, apiKey: sim.apiKey, fixtures: sim.fixtures, wallets })}\n`,
);
const template = (path: string) => path.replace(/0x[0-9a-fA-F]{40}/g, "{address}");
let pending = "";
process.stdin.on("data", (chunk) => {
  pending += chunk;
  for (let at = pending.indexOf("\n"); at >= 0; at = pending.indexOf("\n")) {
    const line = pending.slice(0, at).trim();
    pending = pending.slice(at + 1);
    if (line !== "count") continue;
    const byPath: Record<string, number> = {};
    for (const request of sim.requests) {
      const key = `${request.method} ${template(request.path)}`;
      byPath[key] = (byPath[key] ?? 0) + 1;
    }
    process.stdout.write(`${JSON.stringify({ requests: sim.requests.length, byPath })}\n`);
  }
});
process.on("SIGTERM", () => void sim.close().then(() => process.exit(0)));
