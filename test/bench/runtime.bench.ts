import { spawn } from "node:child_process";
import { mkdtemp, rm } from "node:fs/promises";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { PassThrough } from "node:stream";
import { type Bot, createBot } from "../../src/bot.ts";
import { parseConfig, secretsOf } from "../../src/config.ts";
import type { Invocation } from "../../src/core/command.ts";
import { newInvocationId } from "../../src/core/runtime.ts";
import { createLogger, logFileDestination } from "../../src/log.ts";
import { renderTelegram } from "../../src/render/telegram.ts";
import type { startSimulator } from "../../src/simulator/index.ts";
import { deleteKeys, testPrefix } from "../redis-helpers.ts";
import { POSTGRES_URL, REDIS_URL } from "../services.ts";
import { dropSchema, freshSchemaName } from "../store/backends.ts";
import type { BenchRow } from "./report.ts";

/**
 * The command hot path through the production wiring: `createBot` (SQLite in a temp dir, buttons
 * stored there, logs at info to a real file, metrics on), commands from Telegram group chats
 * (so the person and chat rate limits run), each reply rendered for Telegram. The simulator runs
 * in its own process, as the real service would.
 */
export const WIRING =
  "createBot, SQLite in a temp dir, logs at info to a file, metrics on, Telegram rendering";

const quantile = (sorted: number[], q: number) =>
  sorted[Math.min(sorted.length - 1, Math.floor(q * sorted.length))] ?? Number.NaN;

export interface ChildSimulator {
  url: string;
  apiKey: string;
  fixtures: Awaited<ReturnType<typeof startSimulator>>["fixtures"];
  /** Mints one NFT contract in the child; resolves with its address. */
  mint(): Promise<string>;
  close(): void;
}

/** Starts the simulator in another process, so its work does not share the bot's event loop. */
export function startChildSimulator(latencyMs: number): Promise<ChildSimulator> {
  return new Promise((resolve, reject) => {
    const child = spawn(process.execPath, ["--import", "tsx", "test/bench/sim-child.ts"], {
      env: { ...process.env, BENCH_SIM_LATENCY_MS: String(latencyMs) },
      stdio: ["pipe", "pipe", "inherit"],
    });
    const minted: ((address: string) => void)[] = [];
    let buffer = "";
    child.stdout.on("data", (chunk) => {
      buffer += chunk;
      for (let at = buffer.indexOf("\n"); at >= 0; at = buffer.indexOf("\n")) {
        const line = buffer.slice(0, at);
        buffer = buffer.slice(at + 1);
        const message = JSON.parse(line) as Omit<ChildSimulator, "close" | "mint"> & {
          minted?: string;
        };
        if (message.minted !== undefined) {
          minted.shift()?.(message.minted);
          continue;
        }
        resolve({
          ...message,
          mint: () =>
            new Promise((resolveMint) => {
              minted.push(resolveMint);
              child.stdin.write("mint\n");
            }),
          close: () => child.kill("SIGTERM"),
        });
      }
    });
    child.on("error", reject);
  });
}

/** The bot as `main` builds it, against the child simulator; `close` stops it and removes its files. */
export async function productionBot(
  sim: ChildSimulator,
  env: Record<string, string> = {},
): Promise<{ bot: Bot; close(): Promise<void> }> {
  const dir = await mkdtemp(join(tmpdir(), "bench-bot-"));
  const config = parseConfig({
    API_BASE_URL: sim.url,
    API_KEY: sim.apiKey,
    DATA_DIR: dir,
    LOG_LEVEL: "info",
    // The bot's own overhead is measured here, not the upstream budget or the people's limits.
    API_BUDGET_PER_SECOND: "100000",
    API_BUDGET_BURST: "100000",
    RATE_LIMIT_BURST: "1000",
    RATE_LIMIT_PER_MINUTE: "100000",
    RATE_LIMIT_CHAT_BURST: "1000",
    RATE_LIMIT_CHAT_PER_MINUTE: "100000",
    ...env,
  });
  const logFile = join(dir, "bot.log");
  const logger = createLogger({
    level: config.logLevel,
    secrets: secretsOf(config),
    destination: logFileDestination(logFile),
  });
  // The console adapter is the one started without chat tokens; it gets no lines here.
  const input = new PassThrough();
  const output = new PassThrough();
  output.resume();
  const bot = await createBot(config, { logger, input, output, logFile });
  await bot.start();
  return {
    bot,
    async close() {
      input.end();
      await bot.stop();
      await new Promise<void>((resolve) => logger.flush(() => resolve()));
      await rm(dir, { recursive: true, force: true });
    },
  };
}

/** 64 people in 64 groups, in turn: the limiters see many keys, as they do in production. */
let turn = 0;
function invocation(): Invocation {
  const who = String(turn++ % 64);
  return {
    id: newInvocationId(),
    platform: "telegram",
    user: { id: `bench-${who}`, name: "bench" },
    chat: { id: `-100${who}`, kind: "group" },
    canManageChannel: async () => true,
  };
}

export async function command(bot: Bot, name: string, text: string): Promise<void> {
  const reply = await bot.runtime.runText(invocation(), name, text);
  if (reply.tone === "error" || reply.tone === "warning")
    throw new Error(`/${name} ${text}: unexpected reply: ${reply.text}`);
  renderTelegram(reply);
}

/** The shared backends of a scaled-out instance: a fresh PostgreSQL schema and Redis key prefix. */
export async function sharedBackends(): Promise<{
  env: Record<string, string>;
  drop(): Promise<void>;
}> {
  const schema = freshSchemaName();
  const prefix = testPrefix("bench");
  return {
    env: {
      DATABASE_URL: POSTGRES_URL,
      DATABASE_SCHEMA: schema,
      REDIS_URL: REDIS_URL,
      REDIS_KEY_PREFIX: prefix,
    },
    async drop() {
      await dropSchema(schema);
      await deleteKeys(prefix);
    },
  };
}

/**
 * Warm cache: the bot's own cost per command, over a mix of commands, one after another. `shared`:
 * the same on PostgreSQL + Redis (the scaled-out wiring) instead of SQLite.
 */
export async function benchDispatch(shared = false): Promise<BenchRow[]> {
  const sim = await startChildSimulator(0);
  const backends = shared ? await sharedBackends() : undefined;
  const { bot, close: closeBot } = await productionBot(sim, backends?.env ?? {});
  const close = async () => {
    await closeBot();
    await backends?.drop();
  };
  const f = sim.fixtures;
  const mix = [
    ["top", "volume 1d 10"],
    ["audience", f.collection],
    ["nft", `${f.token.contract} ${f.token.tokenId}`],
    ["whois", f.walletEns],
    ["wallet", f.wallet],
    ["owners", `${f.collection} 7d`],
  ] as const;
  for (let i = 0; i < 200; i++) for (const [name, text] of mix) await command(bot, name, text);
  const rounds = 2000;
  const all: number[] = [];
  const byCommand = new Map<string, number[]>(mix.map(([name]) => [name, []]));
  const started = performance.now();
  for (let i = 0; i < rounds; i++) {
    for (const [name, text] of mix) {
      const at = performance.now();
      await command(bot, name, text);
      const ms = performance.now() - at;
      all.push(ms);
      byCommand.get(name)?.push(ms);
    }
  }
  const elapsed = performance.now() - started;
  // Many chats at once, as a bot serves them: 16 commands in flight.
  const inFlight = 16;
  const concurrent: number[] = [];
  const startedTogether = performance.now();
  await Promise.all(
    Array.from({ length: inFlight }, async (_, worker) => {
      for (let i = 0; i < (rounds * mix.length) / inFlight; i++) {
        const [name, text] = mix[(worker + i) % mix.length] ?? mix[0];
        const at = performance.now();
        await command(bot, name, text);
        concurrent.push(performance.now() - at);
      }
    }),
  );
  const elapsedTogether = performance.now() - startedTogether;
  await close();
  sim.close();
  const p = (samples: number[]) => {
    const sorted = [...samples].sort((a, b) => a - b);
    return `p50 ${quantile(sorted, 0.5).toFixed(3)} ms, p99 ${quantile(sorted, 0.99).toFixed(3)} ms`;
  };
  return [
    {
      name: "production wiring",
      value: shared
        ? WIRING.replace("SQLite in a temp dir", "PostgreSQL + Redis on loopback")
        : WIRING,
    },
    {
      name: `warm commands per second, mix of /${mix.map(([name]) => name).join(", /")} (one at a time; goal >= 8,000)`,
      value: (all.length / (elapsed / 1000)).toFixed(0),
    },
    { name: "warm command latency, whole mix (one at a time)", value: p(all) },
    {
      name: `warm commands per second, same mix, ${inFlight} in flight (many chats at once)`,
      value: (concurrent.length / (elapsedTogether / 1000)).toFixed(0),
    },
    { name: `warm command latency, ${inFlight} in flight`, value: p(concurrent) },
    ...mix.map(([name, text]) => ({
      name: `warm /${name} ${text.length > 24 ? `${text.slice(0, 12)}…` : text}`,
      value: p(byCommand.get(name) ?? []),
    })),
  ];
}
