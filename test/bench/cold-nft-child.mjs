// One checkout's bot for the cold /nft bench (cold-nft.bench.ts), in a process of its own: the bot
// as `productionBot` builds it (createBot, SQLite in a temp dir or the shared backends, logs at
// info to a file, metrics on, Telegram rendering), from the checkout named by BENCH_CHECKOUT, so
// this checkout and another (BENCH_COMPARE_DIR) run the same driver. BENCH_BOT_MODULE: the
// checkout's code compiled as `npm run build` compiles it (cold-nft.bench.ts builds it); without
// it, the checkout's sources through tsx (the child then runs with `--import tsx`).
//
// It prints `{"ready":true}`, then answers each line "round" on stdin with `{"bare":ms,"bot":ms}`:
// the three GETs /nft makes, bare with undici and in parallel, then /nft through the bot. After
// the bot's answer it waits a few ms before saying so: work the bot put after its answer is then
// done before the next measurement of either checkout starts, so it is counted in neither (it is
// not the answer's). Plain JavaScript, so that nothing but the bot's own code is compiled.
import { mkdtemp, rm } from "node:fs/promises";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { PassThrough } from "node:stream";
import { pathToFileURL } from "node:url";
import { Agent, request } from "undici";

const dir = process.env.BENCH_CHECKOUT ?? process.cwd();
const sim = JSON.parse(process.env.BENCH_SIM ?? "{}");
const botEnv = JSON.parse(process.env.BENCH_BOT_ENV ?? "{}");
const compiled = process.env.BENCH_BOT_MODULE;
/** The checkout's own module: each checkout runs its own code, with its own dependencies. */
const own = (path) => import(pathToFileURL(compiled ?? join(dir, path)).href);

const { createBot } = await own("src/bot.ts");
const { parseConfig, secretsOf } = await own("src/config.ts");
const { newInvocationId } = await own("src/core/runtime.ts");
const { createLogger, logFileDestination } = await own("src/log.ts");
const { renderTelegram } = await own("src/render/telegram.ts");

const dataDir = await mkdtemp(join(tmpdir(), "bench-cold-nft-"));
const config = parseConfig({
  API_BASE_URL: sim.url,
  API_KEY: sim.apiKey,
  DATA_DIR: dataDir,
  LOG_LEVEL: "info",
  // The bot's own overhead is measured here, not the upstream budget or the people's limits.
  API_BUDGET_PER_SECOND: "100000",
  API_BUDGET_BURST: "100000",
  RATE_LIMIT_BURST: "1000",
  RATE_LIMIT_PER_MINUTE: "100000",
  RATE_LIMIT_CHAT_BURST: "1000",
  RATE_LIMIT_CHAT_PER_MINUTE: "100000",
  // Cold: nothing is kept between rounds.
  CACHE_TTL_NFT_S: "0",
  CACHE_TTL_OWNERSHIP_S: "0",
  ...botEnv,
});
const logFile = join(dataDir, "bot.log");
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

const agent = new Agent({ keepAliveTimeout: 30_000 });
const { contract, tokenId } = sim.fixtures.token;
const base = `${sim.url}/foundational/v1beta2/nfts/${contract}/${tokenId}`;
const get = async (url) => {
  const response = await request(url, {
    headers: { "x-api-key": sim.apiKey, accept: "application/json" },
    dispatcher: agent,
  });
  JSON.parse(await response.body.text());
};
const bare = () =>
  Promise.all([
    get(`${base}/details`),
    get(`${base}/owners?limit=10`),
    get(`${base}/raw_metadata`),
  ]);

// 64 people in 64 groups, in turn: the limiters see many keys, as they do in production.
let turn = 0;
async function viaBot() {
  const who = String(turn++ % 64);
  const reply = await bot.runtime.runText(
    {
      id: newInvocationId(),
      platform: "telegram",
      user: { id: `bench-${who}`, name: "bench" },
      chat: { id: `-100${who}`, kind: "group" },
      canManageChannel: async () => true,
    },
    "nft",
    `${contract} ${tokenId}`,
  );
  if (reply.tone === "error" || reply.tone === "warning")
    throw new Error(`/nft: unexpected reply: ${reply.text}`);
  renderTelegram(reply);
}

const sleep = (ms) => new Promise((resolve) => setTimeout(resolve, ms));
const say = (message) => process.stdout.write(`${JSON.stringify(message)}\n`);

async function round() {
  let started = performance.now();
  await bare();
  const bareMs = performance.now() - started;
  started = performance.now();
  await viaBot();
  const botMs = performance.now() - started;
  await sleep(5);
  say({ bare: bareMs, bot: botMs });
}

async function stop() {
  await agent.close();
  input.end();
  await bot.stop();
  await new Promise((resolve) => logger.flush(() => resolve()));
  await rm(dataDir, { recursive: true, force: true });
  say({ stopped: true });
  process.exit(0);
}

let pending = "";
let queue = Promise.resolve();
process.stdin.on("data", (chunk) => {
  pending += chunk;
  for (let at = pending.indexOf("\n"); at >= 0; at = pending.indexOf("\n")) {
    const line = pending.slice(0, at).trim();
    pending = pending.slice(at + 1);
    queue = queue.then(line === "stop" ? stop : round).catch((error) => {
      say({ error: String(error?.stack ?? error) });
    });
  }
});
say({ ready: true });
