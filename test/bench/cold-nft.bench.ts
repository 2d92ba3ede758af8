import { type ChildProcess, spawn } from "node:child_process";
import { loadavg } from "node:os";
import { join } from "node:path";
import { build } from "esbuild";
import { ROOT } from "../compiled.ts";
import { type Checkout, checkoutsToCompare, sideBySide } from "./checkouts.ts";
import type { BenchRow } from "./report.ts";
import { type ChildSimulator, sharedBackends, startChildSimulator } from "./runtime.bench.ts";

/**
 * Cold /nft (nothing cached) through the production wiring vs the same three GETs it makes
 * (details, the first owners and the raw metadata), bare with undici and in parallel as /nft makes
 * them, the simulator in its own process answering after `latencyMs`. `shared`: on PostgreSQL +
 * Redis instead of SQLite.
 *
 * Each checkout's bot runs in a child of its own (cold-nft-child.ts: the bot as `productionBot`
 * builds it, from that checkout's sources), which times both the bare GETs and /nft; with
 * BENCH_COMPARE_DIR, this checkout and that one take turns round by round (the order alternating),
 * so the machine's load falls on both alike, against one simulator. Each bot is its checkout's
 * code compiled as `npm run build` compiles it (compileBot): production runs that, not tsx, whose
 * keepNames alone costs a cold /nft some 10% more. BENCH_COLD_NFT_FROM=source runs the sources
 * through tsx instead. BENCH_CHILD_NODE_OPTIONS: Node options for the bots' processes (e.g.
 * --cpu-prof), to see where their time goes.
 */
export async function benchColdNft(latencyMs: number, shared = false): Promise<BenchRow[]> {
  const checkouts = checkoutsToCompare();
  const sim = await startChildSimulator(latencyMs);
  const loadBefore = loadavg()[0] ?? Number.NaN;
  const bots: { checkout: Checkout; child: BotChild; bare: number[]; bot: number[] }[] = [];
  const drops: (() => Promise<void>)[] = [];
  try {
    for (const checkout of checkouts) {
      const backends = shared ? await sharedBackends() : undefined;
      if (backends) drops.push(() => backends.drop());
      bots.push({
        checkout,
        child: await startBotChild(
          checkout.dir,
          process.env.BENCH_COLD_NFT_FROM === "source" ? undefined : await compileBot(checkout.dir),
          sim,
          backends?.env ?? {},
        ),
        bare: [],
        bot: [],
      });
    }
    const rounds = latencyMs > 0 ? 200 : 1000;
    for (let i = 0; i < 50 + rounds; i++) {
      // Taking turns, the order alternating: neither checkout always runs right after the other.
      const order = i % 2 === 0 ? bots : [...bots].reverse();
      for (const entry of order) {
        const { bare, bot } = await entry.child.round();
        if (i < 50) continue;
        entry.bare.push(bare);
        entry.bot.push(bot);
      }
    }
  } finally {
    await Promise.all(bots.map(({ child }) => child.stop()));
    for (const drop of drops) await drop();
    sim.close();
  }
  const loadAfter = loadavg()[0] ?? Number.NaN;
  const from = process.env.BENCH_COLD_NFT_FROM === "source" ? "sources through tsx" : "compiled";
  const at = `service latency ${latencyMs} ms${shared ? ", PostgreSQL + Redis" : ""}, ${from}`;
  const figures = new Map(
    bots.map(({ checkout, bare, bot }) => [
      checkout,
      { bare: median(bare), bot: median(bot), ratio: median(bot) / median(bare) },
    ]),
  );
  const figure = (pick: (f: { bare: number; bot: number; ratio: number }) => string) =>
    sideBySide(checkouts, (checkout) => {
      const found = figures.get(checkout);
      return found ? pick(found) : "n/a";
    });
  return [
    {
      name: "machine load (1-minute average) before → after",
      value: `${loadBefore.toFixed(2)} → ${loadAfter.toFixed(2)}`,
    },
    {
      name: `bare: the same three GETs in parallel with undici, median (${at})`,
      value: figure((f) => `${f.bare.toFixed(3)} ms`),
    },
    {
      name: `cold /nft through the production wiring, median (${at})`,
      value: figure((f) => `${f.bot.toFixed(3)} ms`),
    },
    {
      name: `ratio cold /nft / bare (${at}${latencyMs >= 20 ? "; goal <= 1.05" : ""})`,
      value: figure((f) => f.ratio.toFixed(3)),
    },
    {
      name: `bot overhead over bare (${at})`,
      value: figure((f) => `${(f.bot - f.bare).toFixed(3)} ms`),
    },
  ];
}

const median = (values: number[]) =>
  [...values].sort((a, b) => a - b)[Math.floor(values.length / 2)] ?? Number.NaN;

interface BotChild {
  round(): Promise<{ bare: number; bot: number }>;
  stop(): Promise<void>;
}

/**
 * What the bench child takes from a checkout (createBot and the pieces `productionBot` builds it
 * with), compiled as scripts/build.mjs compiles the bot (ESM for node20, whitespace and syntax
 * minified, no keepNames) into that checkout's dist/bench-cold-nft/, where its own node_modules
 * resolve the packages left outside. Returns the module's path.
 */
async function compileBot(dir: string): Promise<string> {
  const outdir = join(dir, "dist", "bench-cold-nft");
  const pieces = [
    ["createBot", "src/bot.ts"],
    ["parseConfig, secretsOf", "src/config.ts"],
    ["newInvocationId", "src/core/runtime.ts"],
    ["createLogger, logFileDestination", "src/log.ts"],
    ["renderTelegram", "src/render/telegram.ts"],
  ];
  await build({
    stdin: {
      contents: pieces
        .map(
          ([names, path]) => `export { ${names} } from ${JSON.stringify(join(dir, path ?? ""))};`,
        )
        .join("\n"),
      resolveDir: dir,
      sourcefile: "bench-cold-nft.ts",
      loader: "ts",
    },
    absWorkingDir: dir,
    outdir,
    entryNames: "bot",
    bundle: true,
    splitting: true,
    format: "esm",
    platform: "node",
    target: "node20",
    packages: "external",
    minifyWhitespace: true,
    minifySyntax: true,
    chunkNames: "chunks/[name]-[hash]",
    // As the build's: bundled CommonJS `require`s Node's own modules through it.
    banner: {
      js: 'import{createRequire as __createRequire}from"node:module";const require=__createRequire(import.meta.url);',
    },
    logLevel: "warning",
  });
  return join(outdir, "bot.js");
}

/**
 * A checkout's bot in a child (cold-nft-child.mjs), with that checkout's node_modules: `compiled`,
 * the module compileBot made, else its sources through that checkout's tsx.
 */
function startBotChild(
  dir: string,
  compiled: string | undefined,
  sim: ChildSimulator,
  botEnv: Record<string, string>,
): Promise<BotChild> {
  const options = process.env.BENCH_CHILD_NODE_OPTIONS;
  const child: ChildProcess = spawn(
    process.execPath,
    [
      ...(options ? options.split(/\s+/).filter(Boolean) : []),
      ...(compiled ? [] : ["--import", "tsx"]),
      join(ROOT, "test/bench/cold-nft-child.mjs"),
    ],
    {
      cwd: dir,
      env: {
        ...process.env,
        BENCH_CHECKOUT: dir,
        BENCH_SIM: JSON.stringify({ url: sim.url, apiKey: sim.apiKey, fixtures: sim.fixtures }),
        BENCH_BOT_ENV: JSON.stringify(botEnv),
        ...(compiled ? { BENCH_BOT_MODULE: compiled } : {}),
      },
      stdio: ["pipe", "pipe", "inherit"],
    },
  );
  const waiting: ((message: Record<string, unknown>) => void)[] = [];
  let buffer = "";
  child.stdout?.on("data", (chunk) => {
    buffer += chunk;
    for (let at = buffer.indexOf("\n"); at >= 0; at = buffer.indexOf("\n")) {
      const line = buffer.slice(0, at);
      buffer = buffer.slice(at + 1);
      let message: Record<string, unknown>;
      try {
        message = JSON.parse(line) as Record<string, unknown>;
      } catch {
        // Not the driver's: something the bot printed.
        continue;
      }
      waiting.shift()?.(message);
    }
  });
  let exited = false;
  const exit = new Promise<void>((resolve) =>
    child.once("exit", () => {
      exited = true;
      resolve();
      for (const next of waiting.splice(0)) next({ error: `the bot's child (${dir}) exited` });
    }),
  );
  const next = () =>
    new Promise<Record<string, unknown>>((resolve) => {
      if (exited) resolve({ error: `the bot's child (${dir}) exited` });
      else waiting.push(resolve);
    });
  const ask = async (line: string) => {
    const answer = next();
    child.stdin?.write(`${line}\n`);
    const message = await answer;
    if (typeof message.error === "string") throw new Error(message.error);
    return message;
  };
  return next().then((ready) => {
    if (typeof ready.error === "string") throw new Error(ready.error);
    return {
      async round() {
        const { bare, bot } = (await ask("round")) as { bare: number; bot: number };
        return { bare, bot };
      },
      async stop() {
        if (exited) return;
        await ask("stop").catch(() => {});
        await exit;
      },
    };
  });
}
