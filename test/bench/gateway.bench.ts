import { mkdtempSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { buildDist } from "../../scripts/build.mjs";
import { type Simulator, startSimulator } from "../../src/simulator/index.ts";
import { COMPILED_BOT, ROOT } from "../compiled.ts";
import { populatedGuilds, startFakeDiscord } from "../fakes/discord/index.ts";
import {
  baseEnv,
  freePort,
  mb,
  rssOf,
  sampleRss,
  sleep,
  startChild,
  until,
} from "./process.bench.ts";
import type { BenchRow } from "./report.ts";

/**
 * The compiled bot on a gateway that sends 10,000 guilds, each shaped like a live server (20
 * channels, 15 roles, 10 emojis, 2 stickers): as before (DISCORD_FULL_CACHES=true: the Guilds
 * intent, every guild sent whole and cached) and as now (no intent, nothing cached), in one run.
 */

const GUILDS = 10_000;
/** Long enough for V8's memory reducer to give back what the GUILD_CREATE flood left. */
const SETTLE_MS = 30_000;

async function heapUsed(metricsUrl: string): Promise<number> {
  const text = await (await fetch(`${metricsUrl}/metrics`)).text();
  return Number(/^nodejs_heap_size_used_bytes (\d+)/m.exec(text)?.[1] ?? Number.NaN);
}

interface GatewayFigures {
  arrivalMs: number;
  peakRss: number;
  rss: number;
  heap: number;
  settledRss: number;
  settledHeap: number;
}

async function withGuilds(
  sim: Simulator,
  fullCaches: boolean,
  guilds = GUILDS,
): Promise<GatewayFigures> {
  const discord = await startFakeDiscord({ guilds: populatedGuilds(guilds), lean: true });
  const dataDir = mkdtempSync(join(tmpdir(), "bench-gateway-"));
  const port = await freePort();
  const metricsUrl = `http://127.0.0.1:${port}`;
  const started = performance.now();
  const bot = startChild(
    {
      ...baseEnv(dataDir),
      API_BASE_URL: sim.url,
      API_KEY: sim.apiKey,
      DISCORD_TOKEN: discord.token,
      DISCORD_API_URL: discord.apiBase,
      DISCORD_FULL_CACHES: String(fullCaches),
      METRICS_PORT: String(port),
    },
    // Before, as it ran then: Node's own heap limit. discord.js's default caches of 10,000 guilds
    // hold some 400 MB of heap, past the 256 MB the bot now runs with (it ends out of memory).
    fullCaches ? ["dist/main.js"] : COMPILED_BOT,
  );
  const pid = bot.child.pid ?? 0;
  // Peak RSS while the guilds arrive, sampled every 100 ms.
  const sampler = sampleRss(pid);
  try {
    // discord.js is ready once every guild of READY has arrived (with the Guilds intent).
    await until("every guild to arrive", () => /"discord ready"/.test(bot.output()), 300_000);
    const arrivalMs = performance.now() - started;
    await sleep(1000);
    const peakRss = sampler.stop();
    const rss = rssOf(pid);
    const heap = await heapUsed(metricsUrl);
    await sleep(SETTLE_MS);
    return {
      arrivalMs,
      peakRss: Math.max(peakRss, rss),
      rss,
      heap,
      settledRss: rssOf(pid),
      settledHeap: await heapUsed(metricsUrl),
    };
  } catch (error) {
    process.stderr.write(bot.output().slice(-4000));
    throw error;
  } finally {
    sampler.stop();
    await bot.stop();
    await discord.close();
    rmSync(dataDir, { recursive: true, force: true });
  }
}

export async function benchGateway(): Promise<BenchRow[]> {
  await buildDist(ROOT);
  const sim = await startSimulator({ mintIntervalMs: 0, apiKey: "bench-key" });
  try {
    const before = await withGuilds(sim, true);
    const after = await withGuilds(sim, false);
    // The same bot in one guild: what is left that the guilds do not explain.
    const one = await withGuilds(sim, false, 1);
    const pair = (of: (f: GatewayFigures) => string) =>
      `${of(before)} → ${of(after)} (1 guild: ${of(one)})`;
    return [
      {
        name: `start to ready with ${GUILDS.toLocaleString("en")} guilds on the shards Discord recommends, one IDENTIFY every 5 s (Guilds intent + discord.js default caches → no intent + no caches; in brackets: now, in 1 guild)`,
        value: pair((f) => `${(f.arrivalMs / 1000).toFixed(1)} s`),
      },
      {
        name: "peak RSS while the guilds arrive, sampled every 100 ms",
        value: pair((f) => mb(f.peakRss)),
      },
      { name: "RSS 1 s after the last guild", value: pair((f) => mb(f.rss)) },
      { name: "V8 heap used 1 s after the last guild", value: pair((f) => mb(f.heap)) },
      {
        name: `RSS ${SETTLE_MS / 1000} s later, settled (heap reduced)`,
        value: pair((f) => mb(f.settledRss)),
      },
      {
        name: `V8 heap used ${SETTLE_MS / 1000} s later`,
        value: pair((f) => mb(f.settledHeap)),
      },
    ];
  } finally {
    await sim.close();
  }
}
