import { spawn } from "node:child_process";
import { Agent, request } from "undici";
import { allCommands } from "../../commands/index.ts";
import { createApiClient } from "../../src/api/client.ts";
import { parseConfig } from "../../src/config.ts";
import { MemoryActionStore } from "../../src/core/actions.ts";
import { newInvocationId, Runtime } from "../../src/core/runtime.ts";
import { silentLogger } from "../../src/log.ts";
import { renderConsole } from "../../src/render/console.ts";
import { startSimulator } from "../../src/simulator/index.ts";
import type { BenchRow } from "./report.ts";

const quantile = (sorted: number[], q: number) =>
  sorted[Math.min(sorted.length - 1, Math.floor(q * sorted.length))] ?? Number.NaN;
const median = (values: number[]) =>
  quantile(
    [...values].sort((a, b) => a - b),
    0.5,
  );

function runtimeFor(env: Record<string, string>, url: string, key: string) {
  // The bot's own overhead is measured here, not the upstream budget.
  const config = parseConfig({
    API_BUDGET_PER_SECOND: "100000",
    API_BUDGET_BURST: "100000",
    ...env,
  });
  const api = createApiClient(config, url, key, silentLogger());
  const runtime = new Runtime({
    commands: allCommands(),
    api,
    actions: new MemoryActionStore(),
    logger: silentLogger(),
    settings: {
      explorerUrl: config.explorerUrl,
      reportsPerHour: 10,
      ipfsGateway: config.ipfsGateway,
    },
    deadlineMs: 20_000,
    rateLimit: { burst: 1e9, perMinute: 1e9 },
    buttonTtlSeconds: 3600,
  });
  return { runtime, api };
}

const invocation = () => ({
  id: newInvocationId(),
  platform: "telegram" as const,
  user: { id: "bench", name: "bench" },
  chat: { id: "bench", kind: "group" as const },
  canManageChannel: async () => true,
});

/** Warm-cache dispatch + console rendering: the bot's own overhead per command. */
export async function benchDispatch(): Promise<BenchRow[]> {
  const sim = await startSimulator();
  const { runtime, api } = runtimeFor({}, sim.url, sim.apiKey);
  const f = sim.fixtures;
  const lines = [
    ["top", "volume 1d 10"],
    ["audience", f.collection],
    ["nft", `${f.token.contract} ${f.token.tokenId}`],
    ["whois", f.walletEns],
  ] as const;
  for (const [name, text] of lines) await runtime.runText(invocation(), name, text); // warm the cache
  const rows: BenchRow[] = [];
  const iterations = 2000;
  let total = 0;
  let totalMs = 0;
  for (const [name, text] of lines) {
    const samples: number[] = [];
    for (let i = 0; i < iterations; i++) {
      const started = performance.now();
      const reply = await runtime.runText(invocation(), name, text);
      renderConsole(reply);
      samples.push(performance.now() - started);
    }
    samples.sort((a, b) => a - b);
    const sum = samples.reduce((a, b) => a + b, 0);
    total += iterations;
    totalMs += sum;
    rows.push({
      name: `dispatch + render /${name} (warm cache)`,
      value: `p50 ${quantile(samples, 0.5).toFixed(3)} ms, p99 ${quantile(samples, 0.99).toFixed(3)} ms`,
    });
  }
  rows.unshift({
    name: "commands per second, warm cache (one core, sequential)",
    value: (total / (totalMs / 1000)).toFixed(0),
  });
  await api.close();
  await sim.close();
  return rows;
}

interface ChildSimulator {
  url: string;
  apiKey: string;
  fixtures: Awaited<ReturnType<typeof startSimulator>>["fixtures"];
  close(): void;
}

/** Starts the simulator in another process, so its work does not share the bot's event loop. */
function startChildSimulator(latencyMs: number): Promise<ChildSimulator> {
  return new Promise((resolve, reject) => {
    const child = spawn(process.execPath, ["--import", "tsx", "test/bench/sim-child.ts"], {
      env: { ...process.env, BENCH_SIM_LATENCY_MS: String(latencyMs) },
      stdio: ["ignore", "pipe", "inherit"],
    });
    let buffer = "";
    child.stdout.on("data", (chunk) => {
      buffer += chunk;
      const line = buffer.split("\n")[0];
      if (buffer.includes("\n") && line) {
        const info = JSON.parse(line) as Omit<ChildSimulator, "close">;
        resolve({ ...info, close: () => child.kill("SIGTERM") });
      }
    });
    child.on("error", reject);
  });
}

/**
 * Cold /nft through the whole runtime vs one bare undici GET of the same details endpoint, with
 * the simulator in its own process answering after `latencyMs` (a remote service is never 0 ms).
 */
export async function benchColdNft(latencyMs: number): Promise<BenchRow[]> {
  const sim = await startChildSimulator(latencyMs);
  const f = sim.fixtures;
  const { runtime, api } = runtimeFor(
    { CACHE_TTL_NFT_S: "0", CACHE_TTL_OWNERSHIP_S: "0" },
    sim.url,
    sim.apiKey,
  );
  const agent = new Agent({ keepAliveTimeout: 30_000 });
  const url = `${sim.url}/foundational/v1beta2/nfts/${f.token.contract}/${f.token.tokenId}/details`;
  const bare = async () => {
    const response = await request(url, {
      headers: { "x-api-key": sim.apiKey, accept: "application/json" },
      dispatcher: agent,
    });
    JSON.parse(await response.body.text());
  };
  const viaBot = async () => {
    const reply = await runtime.runText(
      invocation(),
      "nft",
      `${f.token.contract} ${f.token.tokenId}`,
    );
    if (!reply.title) throw new Error(`unexpected reply: ${reply.text}`);
  };
  for (let i = 0; i < 50; i++) {
    await bare();
    await viaBot();
  }
  const bareMs: number[] = [];
  const botMs: number[] = [];
  // Interleaved so that both see the same machine load.
  const rounds = latencyMs > 0 ? 150 : 500;
  for (let i = 0; i < rounds; i++) {
    let started = performance.now();
    await bare();
    bareMs.push(performance.now() - started);
    started = performance.now();
    await viaBot();
    botMs.push(performance.now() - started);
  }
  const ratio = median(botMs) / median(bareMs);
  await agent.close();
  await api.close();
  sim.close();
  const at = `service latency ${latencyMs} ms`;
  return [
    {
      name: `bare undici GET nft details, median (${at})`,
      value: `${median(bareMs).toFixed(3)} ms`,
    },
    {
      name: `cold /nft through the runtime, median (${at})`,
      value: `${median(botMs).toFixed(3)} ms`,
    },
    { name: `ratio cold /nft / bare undici (${at}; goal <= 1.10)`, value: ratio.toFixed(3) },
    {
      name: `runtime overhead over bare undici (${at})`,
      value: `${(median(botMs) - median(bareMs)).toFixed(3)} ms`,
    },
  ];
}
