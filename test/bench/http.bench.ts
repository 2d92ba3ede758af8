import { type ChildProcess, spawn } from "node:child_process";
import { mkdtempSync, rmSync } from "node:fs";
import { connect, type Socket } from "node:net";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { buildDist } from "../../scripts/build.mjs";
import { INTERACTIONS_PATH } from "../../src/adapters/discord-http/endpoint.ts";
import { COMPILED_BOT, ROOT } from "../compiled.ts";
import { type FakeDiscord, startFakeDiscord } from "../fakes/discord/index.ts";
import { freePort } from "../helpers.ts";
import { rssOf } from "./process.bench.ts";
import type { BenchRow } from "./report.ts";

/**
 * Issue 25's slow-body attack on the compiled bot in Discord HTTP-interactions mode: 1,500
 * connections each send the headers of a 256 KiB interaction and all of its body but one byte,
 * then stall. The bot's RSS is read from outside before, at its peak during the attack, and once
 * the request timeout has passed; with the default limits and with them lifted (as before).
 */

const CONNECTIONS = 1_500;
const BODY_BYTES = 256 * 1024;
const sleep = (ms: number) => new Promise((resolve) => setTimeout(resolve, ms));
const mb = (bytes: number) => `${(bytes / 2 ** 20).toFixed(0)} MiB`;

/** No timeout, cap or budget worth the name: the host as it was before issue 25. */
const UNBOUNDED = {
  HTTP_HEADERS_TIMEOUT_MS: "300000",
  HTTP_REQUEST_TIMEOUT_MS: "600000",
  HTTP_MAX_CONNECTIONS: "1000000",
  HTTP_UNAUTHENTICATED_BODY_BYTES: String(1024 * 1024 * 1024),
};

async function startBot(
  fake: FakeDiscord,
  dataDir: string,
  extra: Record<string, string>,
): Promise<{ child: ChildProcess; port: number; exited: Promise<unknown> }> {
  const port = await freePort();
  const env: Record<string, string> = {};
  for (const key of ["PATH", "HOME"]) if (process.env[key]) env[key] = process.env[key] as string;
  const child = spawn(process.execPath, COMPILED_BOT, {
    cwd: ROOT,
    env: {
      ...env,
      DATA_DIR: dataDir,
      DATA_SERVICE: "simulator",
      DISCORD_TOKEN: fake.token,
      DISCORD_PUBLIC_KEY: fake.publicKey,
      DISCORD_API_URL: fake.apiBase,
      DISCORD_GUILD_ID: fake.guildId,
      HTTP_PORT: String(port),
      HTTP_HOST: "127.0.0.1",
      LOG_LEVEL: "warn",
      ...extra,
    },
    stdio: ["ignore", "ignore", "inherit"],
  });
  const exited = new Promise((resolve) => child.once("exit", resolve));
  const deadline = Date.now() + 60_000;
  for (;;) {
    const health = await fetch(`http://127.0.0.1:${port}/healthz`).catch(() => undefined);
    if (health?.status === 200) return { child, port, exited };
    if (child.exitCode !== null || Date.now() > deadline) throw new Error("bot did not start");
    await sleep(200);
  }
}

function stall(port: number): { socket: Socket; closed: () => boolean } {
  const socket = connect(port, "127.0.0.1");
  let closed = false;
  socket.on("error", () => {});
  // Reads what the bot answers (408, 503), or the close would never be seen.
  socket.resume();
  socket.once("close", () => {
    closed = true;
  });
  const ts = String(Math.floor(Date.now() / 1000));
  socket.write(
    `POST ${INTERACTIONS_PATH} HTTP/1.1\r\nHost: bot\r\nContent-Type: application/json\r\nX-Signature-Timestamp: ${ts}\r\nX-Signature-Ed25519: ${"ab".repeat(64)}\r\nContent-Length: ${BODY_BYTES}\r\n\r\n`,
  );
  socket.write(Buffer.alloc(BODY_BYTES - 1, 0x61));
  return { socket, closed: () => closed };
}

async function attack(label: string, extra: Record<string, string>): Promise<BenchRow[]> {
  const fake = await startFakeDiscord();
  const dataDir = mkdtempSync(join(tmpdir(), "bench-http-"));
  const bot = await startBot(fake, dataDir, extra);
  const pid = bot.child.pid as number;
  const endpoint = `http://127.0.0.1:${bot.port}${INTERACTIONS_PATH}`;
  try {
    await sleep(3_000);
    const before = rssOf(pid);
    let peak = before;
    const sample = setInterval(() => {
      peak = Math.max(peak, rssOf(pid));
    }, 250);
    const attackers = Array.from({ length: CONNECTIONS }, () => stall(bot.port));
    // The bodies arrive; then Discord's own PING, while they stall.
    await sleep(8_000);
    const started = performance.now();
    const ping = await fake.postInteraction(endpoint, fake.ping()).catch(() => undefined);
    const pingMs = performance.now() - started;
    const openDuring = attackers.filter((a) => !a.closed()).length;
    // Past the default request timeout (15 s) with room: the last connections are accepted
    // seconds after the first.
    await sleep(22_000);
    clearInterval(sample);
    const after = rssOf(pid);
    const openAfter = attackers.filter((a) => !a.closed()).length;
    for (const a of attackers) a.socket.destroy();
    return [
      {
        name: `${label}: RSS before → peak during → 30 s after the attack began`,
        value: `${mb(before)} → ${mb(peak)} → ${mb(after)}`,
      },
      {
        name: `${label}: attack connections still open 8 s in / 30 s in (of ${CONNECTIONS})`,
        value: `${openDuring} / ${openAfter}`,
      },
      {
        name: `${label}: signed PING during the attack`,
        value: ping ? `${ping.status} in ${pingMs.toFixed(0)} ms` : "no answer",
      },
    ];
  } finally {
    bot.child.kill("SIGKILL");
    await bot.exited;
    await fake.close();
    rmSync(dataDir, { recursive: true, force: true });
  }
}

export async function benchSlowBodies(): Promise<BenchRow[]> {
  await buildDist(ROOT);
  return [
    ...(await attack("limits lifted (as before)", UNBOUNDED)),
    ...(await attack("default limits", {})),
  ];
}
