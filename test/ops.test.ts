import { spawn } from "node:child_process";
import { mkdtempSync, readFileSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { PassThrough, Writable } from "node:stream";
import { afterAll, describe, expect, it } from "vitest";
import { type Bot, createBot } from "../src/bot.ts";
import { parseConfig } from "../src/config.ts";
import { defineCommand } from "../src/core/command.ts";
import type { Health } from "../src/http/ops.ts";
import { createLogger, logFileDestination, silentLogger } from "../src/log.ts";
import { endpointTemplate } from "../src/ops/metrics.ts";
import type { Simulator, SimulatorOptions } from "../src/simulator/index.ts";
import { COMPILED_BOT, ROOT } from "./compiled.ts";
import { privateChat, startFakeTelegram, user } from "./fakes/telegram/index.ts";
import {
  capturingLogger,
  freePort,
  runtimeWith,
  sqliteDbOf,
  startClient,
  testInvocation,
} from "./helpers.ts";
import { startTestSimulator } from "./test-simulator.ts";

// The tests share nothing (each its own simulator, DATA_DIR, ports, bot or process) and mostly
// wait on them: those that do run at once, and what they leave is closed after the last.
const cleanups: (() => Promise<void> | void)[] = [];
afterAll(async () => {
  for (const cleanup of cleanups.splice(0).reverse()) await cleanup();
});

function tempDir(): string {
  const dir = mkdtempSync(join(tmpdir(), "bot-ops-"));
  cleanups.push(() => rmSync(dir, { recursive: true, force: true }));
  return dir;
}

async function simulator(options: SimulatorOptions = {}): Promise<Simulator> {
  const sim = await startTestSimulator(options);
  cleanups.push(() => sim.close());
  return sim;
}

describe.concurrent("health and metrics over HTTP", () => {
  it("/healthz says what is connected; /metrics counts commands, upstream calls and the cache", async ({
    expect,
  }) => {
    const sim = await simulator();
    const port = await freePort();
    const input = new PassThrough();
    let printed = "";
    const output = new Writable({
      write(chunk, _encoding, callback) {
        printed += String(chunk);
        callback();
      },
    });
    const bot: Bot = await createBot(
      parseConfig({
        API_BASE_URL: sim.url,
        API_KEY: sim.apiKey,
        DATA_DIR: tempDir(),
        METRICS_PORT: String(port),
        // The collection index's background refresh would add its own requests to the counts.
        COLLECTION_INDEX_REFRESH_S: "0",
      }),
      { logger: silentLogger(), input, output },
    );
    await bot.start();
    cleanups.push(() => bot.stop());
    const health = await fetch(`http://127.0.0.1:${port}/healthz`);
    expect(health.status).toBe(200);
    expect(await health.json()).toMatchObject({
      ok: true,
      adapters: { console: true },
      database: true,
    });

    input.write("/top volume 1d 3\n");
    await expect.poll(() => printed.includes("Top collections"), { timeout: 5000 }).toBe(true);
    // Refusals are counted by their code: two of one kind, one of another, none of the rest.
    input.write("/wallet 0x12\n");
    input.write("/wallet 0x34\n");
    input.write("/help nosuchcommand\n");
    await expect
      .poll(() => printed.includes("There is no /nosuchcommand command"), { timeout: 5000 })
      .toBe(true);
    const metrics = await (await fetch(`http://127.0.0.1:${port}/metrics`)).text();
    expect(metrics).toMatch(
      /bot_commands_total\{command="top",kind="command",outcome="ok",code="none"\} 1/,
    );
    expect(metrics).toMatch(
      /bot_commands_total\{command="wallet",kind="command",outcome="user_error",code="invalid_address"\} 2/,
    );
    expect(metrics).toMatch(
      /bot_commands_total\{command="help",kind="command",outcome="user_error",code="unknown_command"\} 1/,
    );
    const codes = [...metrics.matchAll(/bot_commands_total\{[^}]*code="([^"]+)"\}/g)].map(
      (match) => match[1],
    );
    expect(new Set(codes)).toEqual(new Set(["none", "invalid_address", "unknown_command"]));
    expect(metrics).toMatch(
      /bot_upstream_requests_total\{method="GET",endpoint="\/collections\/v1beta2\/top\/METRIC_SALES_VOLUME\/DURATION_1_DAY",status="200"\} 1/,
    );
    expect(metrics).toMatch(
      /bot_command_duration_seconds_bucket\{le="[\d.]+",command="top",kind="command"\}/,
    );
    expect(metrics).toMatch(/bot_cache_misses 1/);
    expect(metrics).toMatch(/bot_outbox_depth 0/);
    expect(metrics).toMatch(/bot_cache_single_flight_joins 0/);
    expect(metrics).toMatch(/^bot_chart_cache_misses_total 1$/m);
    expect(metrics).toMatch(/^bot_chart_cache_hits_total 0$/m);
    // The process's own figures, under prom-client's standard names.
    expect(metrics).toMatch(/^process_resident_memory_bytes [1-9]\d{6,}$/m);
    expect(metrics).toMatch(/^nodejs_heap_space_size_used_bytes\{space="old"\} [1-9]/m);
    expect((await fetch(`http://127.0.0.1:${port}/nope`)).status).toBe(404);

    sqliteDbOf(bot).close();
    expect(await bot.health()).toMatchObject({ ok: false, database: false });
  });

  it("/healthz fails with the reason once no poll has succeeded for max(3 intervals, 30 s), and recovers", async ({
    expect,
  }) => {
    const sim = await simulator({ faults: { errorRates: { 503: 1 } } });
    const port = await freePort();
    let clock = 1_000_000;
    const bot = await createBot(
      parseConfig({
        API_BASE_URL: sim.url,
        API_KEY: sim.apiKey,
        API_RETRIES: "0",
        DATA_DIR: tempDir(),
        METRICS_PORT: String(port),
        POLL_INTERVAL_S: "1",
      }),
      {
        logger: silentLogger(),
        input: new PassThrough(),
        output: new PassThrough(),
        monotonic: () => clock,
      },
    );
    await bot.start();
    cleanups.push(() => bot.stop());
    const healthz = async () => {
      const response = await fetch(`http://127.0.0.1:${port}/healthz`);
      return { status: response.status, body: (await response.json()) as Health };
    };
    await expect.poll(() => bot.poller.stats.failures, { timeout: 5000 }).toBeGreaterThan(0);
    expect(await healthz()).toMatchObject({
      status: 200,
      body: { ok: true, poller: { leader: true, healthy: true, lastSuccessAgoSeconds: null } },
    });

    // The data service has been down since start: 31 s (past the 30 s floor) without a success.
    clock += 31_000;
    await expect.poll(async () => (await healthz()).status, { timeout: 5000 }).toBe(503);
    const failing = await healthz();
    expect(failing.body).toMatchObject({
      ok: false,
      database: true,
      poller: { leader: true, healthy: false, lastSuccessAgoSeconds: null },
    });
    expect(failing.body.poller?.reason).toMatch(/^no successful poll for 3\d s/);
    expect(failing.body.poller?.lagSeconds).toBeGreaterThanOrEqual(31);

    sim.clearFaults();
    await expect.poll(async () => (await healthz()).status, { timeout: 5000 }).toBe(200);
    expect((await healthz()).body.poller).toMatchObject({
      leader: true,
      healthy: true,
      lastSuccessAgoSeconds: 0,
    });
  });

  it("one port serves /healthz, /metrics and the Telegram webhook (METRICS_PORT as HTTP_PORT's older name)", async ({
    expect,
  }) => {
    const sim = await simulator();
    const fake = await startFakeTelegram();
    cleanups.push(() => fake.close());
    const port = await freePort();
    const bot = await createBot(
      parseConfig({
        API_BASE_URL: sim.url,
        API_KEY: sim.apiKey,
        DATA_DIR: tempDir(),
        METRICS_PORT: String(port),
        HTTP_HOST: "127.0.0.1",
        TELEGRAM_BOT_TOKEN: fake.token,
        TELEGRAM_API_ROOT: fake.apiRoot,
        TELEGRAM_WEBHOOK_URL: "https://bot.example.com/telegram",
        TELEGRAM_WEBHOOK_SECRET: "s3cr3t-webhook-token",
      }),
      { logger: silentLogger() },
    );
    cleanups.push(() => bot.stop());
    // Built, not started: nothing listens yet.
    await expect(fetch(`http://127.0.0.1:${port}/healthz`)).rejects.toThrow();
    await bot.start();
    const health = await fetch(`http://127.0.0.1:${port}/healthz`);
    expect(health.status).toBe(200);
    expect(await health.json()).toMatchObject({ adapters: { telegram: true } });
    expect((await fetch(`http://127.0.0.1:${port}/metrics`)).status).toBe(200);
    const alice = user(7002, "Alice", "alice");
    const post = (secret: string) =>
      fetch(`http://127.0.0.1:${port}/telegram`, {
        method: "POST",
        headers: { "content-type": "application/json", "x-telegram-bot-api-secret-token": secret },
        body: JSON.stringify({
          update_id: 9001,
          ...fake.message(privateChat(alice), alice, "/help"),
        }),
      });
    expect((await post("wrong")).status).toBe(401);
    expect((await post("s3cr3t-webhook-token")).status).toBe(200);
    const reply = await fake.waitFor((c) => c.ok && c.method === "sendMessage", 10_000);
    expect(String(reply.params.text)).toContain("/whois");
  });

  it("the hourly clean-up survives a store that fails it: logged as a warning, never an unhandled rejection", async ({
    expect,
  }) => {
    const sim = await simulator();
    const { logger, lines } = capturingLogger();
    const bot = await createBot(
      parseConfig({ API_BASE_URL: sim.url, API_KEY: sim.apiKey, DATA_DIR: tempDir() }),
      { logger, input: new PassThrough(), output: new PassThrough() },
    );
    cleanups.push(() => bot.stop());
    bot.store.actions.prune = () => Promise.reject(new Error("disk I/O error"));
    await expect(bot.prune()).resolves.toBeUndefined();
    const warning = lines.find((line) => line.includes("could not clean up"));
    expect(warning).toContain("disk I/O error");
    expect(warning).toContain('"level":40');
  });

  it("endpoint labels keep no addresses, token ids or names", ({ expect }) => {
    expect(
      endpointTemplate(
        "/foundational/v1beta2/nfts/0x5aaeb6053f3e94c9b9a09f33669435e7ef1beaed/123/details",
      ),
    ).toBe("/foundational/v1beta2/nfts/{address}/{tokenId}/details");
    expect(endpointTemplate("/wallets/v1beta2/ens/by_name/vitalik.eth")).toBe(
      "/wallets/v1beta2/ens/by_name/{name}",
    );
    expect(endpointTemplate("/wallets/v1beta2/nick.eth/nfts")).toBe(
      "/wallets/v1beta2/{wallet}/nfts",
    );
  });
});

describe("logs", () => {
  it("are written in batches, yet a quiet moment's single line reaches the file while the bot runs", async () => {
    const dir = mkdtempSync(join(tmpdir(), "log-"));
    const path = join(dir, "bot.log");
    const logger = createLogger({ level: "info", destination: logFileDestination(path) });
    try {
      logger.info({ n: 1 }, "one line and then nothing");
      // Far below the 4 KiB a write waits for: only the periodic flush can bring it.
      const deadline = Date.now() + 5_000;
      let text = "";
      while (!text.includes("one line and then nothing") && Date.now() < deadline) {
        await new Promise((resolve) => setTimeout(resolve, 20));
        text = readFileSync(path, "utf8");
      }
      expect(JSON.parse(text.trim())).toMatchObject({ msg: "one line and then nothing", n: 1 });
    } finally {
      rmSync(dir, { recursive: true, force: true });
    }
  });

  it("are JSON, and redact the API key and bot tokens wherever they appear", () => {
    const lines: string[] = [];
    const destination = new Writable({
      write(chunk, _encoding, callback) {
        lines.push(String(chunk));
        callback();
      },
    });
    const secrets = ["api-key-5f2c9", "123456:bot-token-AAbb"];
    const logger = createLogger({ level: "info", secrets, destination });
    logger.info(
      {
        headers: { "x-api-key": secrets[0] },
        token: secrets[1],
        nested: { url: `https://api.telegram.org/bot${secrets[1]}/getMe` },
      },
      `failed with ${secrets[0]}`,
    );
    logger.error({ err: new Error(`request with key ${secrets[0]} failed`) }, "boom");
    const all = lines.join("\n");
    for (const line of lines) expect(() => JSON.parse(line)).not.toThrow();
    for (const secret of secrets) expect(all).not.toContain(secret);
    expect(all).toContain("[redacted]");
  });

  it("keep an error's message and stack when a secret is configured, with the secret scrubbed", () => {
    const secret = "api-key-5f2c9";
    const { logger, lines } = capturingLogger([secret]);
    const plain = new Error("the disk is on fire");
    const leaky = new Error(`request with key ${secret} failed`, {
      cause: new Error("ECONNRESET"),
    });
    (leaky as Error & { path?: string }).path = `/wallets?key=${secret}`;
    logger.error({ err: plain }, "as err");
    logger.error(leaky, "as the first argument");
    logger.error({ context: { err: plain, list: [leaky] } }, "nested");
    const [asErr, asArgument, nested] = lines.map((line) => JSON.parse(line));
    expect(asErr.err).toMatchObject({ type: "Error", message: "the disk is on fire" });
    expect(asErr.err.stack).toMatch(/^Error: the disk is on fire\n\s+at /);
    expect(asArgument.err).toMatchObject({
      type: "Error",
      message: "request with key [redacted] failed: ECONNRESET",
      path: "/wallets?key=[redacted]",
    });
    expect(asArgument.err.stack).toMatch(/^Error: request with key \[redacted\] failed\n\s+at /);
    expect(asArgument.err.stack).toMatch(/caused by: Error: ECONNRESET/);
    expect(nested.context.err).toMatchObject({ message: "the disk is on fire" });
    expect(nested.context.err.stack).toMatch(/\n\s+at /);
    expect(nested.context.list[0]).toMatchObject({
      message: expect.stringContaining("[redacted]"),
    });
    expect(lines.join("\n")).not.toContain(secret);
  });

  it("the ref id in an apology leads to a log line with the error's message and stack", async () => {
    const secret = "api-key-5f2c9";
    const { logger, lines } = capturingLogger([secret]);
    const setup = await startClient();
    cleanups.push(() => setup.close());
    const runtime = runtimeWith(
      setup,
      [
        defineCommand({
          name: "explode",
          description: "a command with a bug",
          options: {},
          examples: [],
          run: async () => {
            throw new TypeError("Cannot read properties of undefined (reading 'owners')");
          },
        }),
      ],
      { logger },
    );
    const reply = await runtime.runText(testInvocation(), "explode", "");
    const ref = /ref ([A-Za-z0-9_-]+)\./.exec(reply.text ?? "")?.[1];
    expect(ref).toBeDefined();
    const failure = lines
      .map((line) => JSON.parse(line))
      .find((entry) => entry.inv === ref && entry.err !== undefined);
    expect(failure?.err).toMatchObject({
      type: "TypeError",
      message: "Cannot read properties of undefined (reading 'owners')",
    });
    expect(failure?.err.stack).toMatch(/^TypeError: Cannot read properties .*\n\s+at /);
  });
});

describe.concurrent("graceful shutdown", () => {
  it("stops taking commands, finishes the reply in flight, then closes the database", async ({
    expect,
  }) => {
    const sim = await simulator({ faults: { latencyMs: 700 } });
    const fake = await startFakeTelegram();
    cleanups.push(() => fake.close());
    const bot = await createBot(
      parseConfig({
        API_BASE_URL: sim.url,
        API_KEY: sim.apiKey,
        DATA_DIR: tempDir(),
        TELEGRAM_BOT_TOKEN: fake.token,
        TELEGRAM_API_ROOT: fake.apiRoot,
      }),
      { logger: silentLogger() },
    );
    await bot.start();
    const alice = user(7001, "Alice", "alice");
    fake.pushUpdate(
      fake.message(privateChat(alice), alice, "/whois 0x5aaeb6053f3e94c9b9a09f33669435e7ef1beaed"),
    );
    await expect.poll(() => sim.countRequests("/wallets"), { timeout: 5000 }).toBeGreaterThan(0);
    await bot.stop();
    expect(
      fake.sent.some(
        (c) =>
          c.ok &&
          c.method === "sendMessage" &&
          String(c.params.text).includes("0x5aAeb6053F3E94C9b9A09f33669435E7Ef1BeAed"),
      ),
    ).toBe(true);
    expect(sqliteDbOf(bot).open).toBe(false);
  });

  it("SIGTERM: the process answers the command in flight and exits 0", async ({ expect }) => {
    const sim = await simulator({ faults: { latencyMs: 800 } });
    const env: Record<string, string> = {};
    for (const key of ["PATH", "HOME"]) if (process.env[key]) env[key] = process.env[key];
    const child = spawn(process.execPath, COMPILED_BOT, {
      cwd: ROOT,
      env: { ...env, API_BASE_URL: sim.url, API_KEY: sim.apiKey, DATA_DIR: tempDir() },
      stdio: "pipe",
    });
    cleanups.push(() => {
      if (child.exitCode === null) child.kill("SIGKILL");
    });
    let stdout = "";
    child.stdout.on("data", (chunk) => {
      stdout += chunk;
    });
    const exited = new Promise<number | null>((resolve) =>
      child.on("exit", (code) => resolve(code)),
    );
    child.stdin.write("/top volume 1d 3\n");
    await expect
      .poll(() => sim.countRequests("/collections"), { timeout: 10_000 })
      .toBeGreaterThan(0);
    child.kill("SIGTERM");
    expect(await exited).toBe(0);
    expect(stdout).toContain("Top collections by sales volume");
  }, 30_000);
});
