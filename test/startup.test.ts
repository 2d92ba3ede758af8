import { spawn } from "node:child_process";
import { existsSync, mkdtempSync, readFileSync, rmSync, writeFileSync } from "node:fs";
import { createServer } from "node:net";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { afterAll, describe, it } from "vitest";
import { createBot } from "../src/bot.ts";
import { parseConfig } from "../src/config.ts";
import { StartupError } from "../src/errors.ts";
import { silentLogger } from "../src/log.ts";
import { startSimulator } from "../src/simulator/index.ts";
import { COMPILED_BOT, NODE_FLAGS, ROOT } from "./compiled.ts";

/**
 * Start-up failures, through the real entry (`node --max-semi-space-size=4 --max-old-space-size=256 dist/main.js`, as
 * `npm start` and the systemd unit run it): each must end the process with a non-zero code and
 * one plain line on stderr saying what failed and where, never a secret.
 *
 * The tests share nothing (each its own DATA_DIR, ports and process) and mostly wait for their
 * process to end: they run at once, and what they leave is cleaned up after the last.
 */

const TOKEN = "MTIzNDU2Nzg5MDEyMzQ1Njc4.Gabcde.secret-discord-token-value";
/** Telegram's shape: the bot's id, a colon, 35 characters. */
const TELEGRAM_TOKEN = "123456789:secret-telegram-token-value-0123456";

/** How many times `text` is in `output`. */
const occurrences = (output: string, text: string) => output.split(text).length - 1;

/** What the start says of API_BASE_URL=http://127.0.0.1:9 (the discard port: nothing there). */
const NOTHING_AT_PORT_9 =
  "Cannot reach the data service at http://127.0.0.1:9: connection refused by 127.0.0.1:9 (nothing listening there)";

const cleanups: (() => void)[] = [];
afterAll(() => {
  for (const cleanup of cleanups.splice(0).reverse()) cleanup();
});

function tempDir(): string {
  const dir = mkdtempSync(join(tmpdir(), "bot-startup-"));
  cleanups.push(() => rmSync(dir, { recursive: true, force: true }));
  return dir;
}

/** A loopback port nothing listens on. */
async function closedPort(): Promise<number> {
  const server = createServer();
  await new Promise<void>((resolve) => server.listen(0, "127.0.0.1", resolve));
  const { port } = server.address() as { port: number };
  await new Promise<void>((resolve) => server.close(() => resolve()));
  return port;
}

/**
 * Runs the bot until it exits; its exit code, the lines of stderr that are not JSON logs, and the
 * fatal log lines (on stderr, or in the console chat's log file). `before` is module code run in
 * the same process before the entry is imported; `script` is another entry than the bot's
 * (dist/register.js).
 */
async function runBot(settings: Record<string, string>, before?: string, script?: string) {
  const env: Record<string, string> = {};
  for (const key of ["PATH", "HOME"]) if (process.env[key]) env[key] = process.env[key];
  const args =
    before === undefined
      ? script
        ? [...NODE_FLAGS, script]
        : COMPILED_BOT
      : [...NODE_FLAGS, "--input-type=module", "-e", `${before}\nawait import("./dist/main.js");`];
  const child = spawn(process.execPath, args, {
    cwd: ROOT,
    env: { ...env, ...settings },
    stdio: ["pipe", "pipe", "pipe"],
  });
  cleanups.push(() => {
    if (child.exitCode === null && child.signalCode === null) child.kill("SIGKILL");
  });
  let stderr = "";
  child.stderr.on("data", (chunk) => {
    stderr += chunk;
  });
  // "close", not "exit": the last of stderr may arrive after the process exited (seen on a
  // loaded machine, where the one line was missing).
  const code = await new Promise<number | null>((resolve) =>
    child.on("close", (exitCode) => resolve(exitCode)),
  );
  const lines = stderr.split("\n").filter((line) => line.trim() !== "");
  const plain = lines.filter((line) => !line.startsWith("{"));
  // The console chat (no chat token) logs to DATA_DIR/bot.log instead of stderr.
  const logFile = settings.DATA_DIR ? join(settings.DATA_DIR, "bot.log") : "";
  const logged = existsSync(logFile) ? readFileSync(logFile, "utf8").split("\n") : [];
  const fatal = [...lines, ...logged]
    .filter((line) => line.startsWith("{"))
    .map((line) => JSON.parse(line) as { level: number; msg: string; err?: { stack?: string } })
    .filter((entry) => entry.level === 60);
  return { code, plain, fatal, stderr };
}

describe.concurrent("start-up failures end the process with a non-zero code and one clear line", () => {
  it("invalid settings: one line each (in the order of .env.example), naming the variable and what it must be, and exit 1", async ({
    expect,
  }) => {
    const { code, plain, stderr } = await runBot({
      DATA_DIR: tempDir(),
      LOG_LEVEL: "loud",
      POLL_LIMIT: "9999",
      SIMULATOR_PORT: "abc",
      EXPLORER_URL: "ftp://example.org",
      TELEGRAM_WEBHOOK_SECRET: "has spaces: not a secret Telegram takes",
    });
    expect(code).toBe(1);
    expect(plain).toEqual([
      "Invalid setting LOG_LEVEL: must be one of fatal, error, warn, info, debug, trace, silent",
      "Invalid setting EXPLORER_URL: must be an http(s) URL",
      "Invalid setting POLL_LIMIT: must be at most 500",
      "Invalid setting SIMULATOR_PORT: must be a whole number",
      "Invalid setting TELEGRAM_WEBHOOK_SECRET: must be 16 to 256 characters of A-Z, a-z, 0-9, _ and -",
    ]);
    expect(stderr).not.toContain("has spaces");
  }, 30_000);

  it("a cache larger than the heap Node was given: what to run instead, before anything starts", async ({
    expect,
  }) => {
    const { code, plain } = await runBot({ DATA_DIR: tempDir(), CACHE_MAX_BYTES: "209715200" });
    expect(code).toBe(1);
    expect(plain).toEqual([
      "Invalid setting CACHE_MAX_BYTES: 200 MiB of answers need a JavaScript heap of 528 MiB, and Node was given 268 MiB: run node with --max-old-space-size=528 (or lower CACHE_MAX_BYTES)",
    ]);
  }, 30_000);

  it("a chat token with no data service: refused before any connection, one line saying what to set (issue 34, item 9)", async ({
    expect,
  }) => {
    // Where Discord and Telegram would be: counts every connection the bot makes.
    let connections = 0;
    const platform = createServer((socket) => {
      connections++;
      socket.destroy();
    });
    await new Promise<void>((resolve) => platform.listen(0, "127.0.0.1", resolve));
    cleanups.push(() => platform.close());
    const url = `http://127.0.0.1:${(platform.address() as { port: number }).port}`;
    const telegramToken = TELEGRAM_TOKEN;
    for (const settings of [
      { DISCORD_TOKEN: TOKEN, DISCORD_API_URL: `${url}/api` },
      { TELEGRAM_BOT_TOKEN: telegramToken, TELEGRAM_API_ROOT: url },
      {
        DISCORD_TOKEN: TOKEN,
        DISCORD_API_URL: `${url}/api`,
        TELEGRAM_BOT_TOKEN: telegramToken,
        TELEGRAM_API_ROOT: url,
      },
    ]) {
      const { code, plain, stderr } = await runBot({ DATA_DIR: tempDir(), ...settings });
      expect(code).toBe(1);
      const tokens = [
        ...(settings.DISCORD_TOKEN ? ["DISCORD_TOKEN"] : []),
        ...(settings.TELEGRAM_BOT_TOKEN ? ["TELEGRAM_BOT_TOKEN"] : []),
      ];
      expect(plain).toEqual([
        `Refusing to serve made-up data to real chats: ${tokens.join(" and ")} ${tokens.length > 1 ? "are" : "is"} set but API_BASE_URL is not. Set API_BASE_URL with API_KEY for the real data service, or DATA_SERVICE=simulator to serve the embedded simulator's made-up data deliberately.`,
      ]);
      // The one line only: no JSON log line before it, and no secret.
      expect(stderr).toBe(`${plain[0]}\n`);
      expect(stderr).not.toContain(TOKEN);
      expect(stderr).not.toContain(telegramToken);
    }
    expect(connections).toBe(0);
  }, 60_000);

  it("a chat token of the wrong shape: refused before any connection, naming the setting and the shape expected, never the token", async ({
    expect,
  }) => {
    let connections = 0;
    const platform = createServer((socket) => {
      connections++;
      socket.destroy();
    });
    await new Promise<void>((resolve) => platform.listen(0, "127.0.0.1", resolve));
    cleanups.push(() => platform.close());
    const url = `http://127.0.0.1:${(platform.address() as { port: number }).port}`;
    const cases: [Record<string, string>, RegExp][] = [
      [
        { DISCORD_TOKEN: "abc", DISCORD_API_URL: `${url}/api` },
        /^Invalid setting DISCORD_TOKEN: must be .*three parts .* separated by dots/,
      ],
      [
        { TELEGRAM_BOT_TOKEN: "abc", TELEGRAM_API_ROOT: url },
        /^Invalid setting TELEGRAM_BOT_TOKEN: must be .*<digits>:<35 characters/,
      ],
      [
        { DISCORD_TOKEN: "wrong-shape-secret", DISCORD_API_URL: `${url}/api` },
        /^Invalid setting DISCORD_TOKEN: /,
      ],
      [
        { TELEGRAM_BOT_TOKEN: "4242:wrong-shape-secret", TELEGRAM_API_ROOT: url },
        /^Invalid setting TELEGRAM_BOT_TOKEN: /,
      ],
    ];
    for (const [settings, line] of cases) {
      const { code, plain, stderr } = await runBot({
        DATA_DIR: tempDir(),
        DATA_SERVICE: "simulator",
        ...settings,
      });
      expect(code).toBe(1);
      expect(plain).toHaveLength(1);
      expect(plain[0]).toMatch(line);
      expect(stderr).toBe(`${plain[0]}\n`);
      expect(stderr).not.toContain("wrong-shape-secret");
    }
    expect(connections).toBe(0);
  }, 60_000);

  it("DATA_SERVICE=simulator beside a data-service URL: refused, naming both", async ({
    expect,
  }) => {
    const { code, plain } = await runBot({
      DATA_DIR: tempDir(),
      DATA_SERVICE: "simulator",
      API_BASE_URL: "http://127.0.0.1:9",
    });
    expect(code).toBe(1);
    expect(plain).toEqual([
      "Invalid setting DATA_SERVICE: simulator serves made-up data, but API_BASE_URL (or CHAINS) names a data service: unset one of them",
    ]);
    const other = await runBot({ DATA_DIR: tempDir(), DATA_SERVICE: "real" });
    expect(other.code).toBe(1);
    expect(other.plain).toEqual([
      "Invalid setting DATA_SERVICE: must be simulator (or unset: the data service at API_BASE_URL)",
    ]);
  }, 30_000);

  it("a corrupted bot.sqlite", async ({ expect }) => {
    const dataDir = tempDir();
    const garbage = Buffer.alloc(8192);
    for (let i = 0; i < garbage.length; i++) garbage[i] = (i * 7919 + 13) % 251;
    writeFileSync(join(dataDir, "bot.sqlite"), garbage);
    // No API_BASE_URL: the embedded simulator is already listening when the database fails, and
    // must not keep the process alive.
    const { code, plain, fatal } = await runBot({ DATA_DIR: dataDir });
    expect(code).not.toBe(0);
    expect(code).not.toBeNull();
    expect(plain).toEqual([
      `Cannot open the database ${join(dataDir, "bot.sqlite")}: file is not a database`,
    ]);
    expect(fatal).toHaveLength(1);
    expect(fatal[0]?.msg).toBe(plain[0]);
    expect(fatal[0]?.err?.stack).toMatch(/\n\s+at /);
  }, 30_000);

  it("a DATA_DIR that is a regular file", async ({ expect }) => {
    const file = join(tempDir(), "not-a-directory");
    writeFileSync(file, "x");
    const { code, plain } = await runBot({ DATA_DIR: file, API_BASE_URL: "http://127.0.0.1:9" });
    expect(code).not.toBe(0);
    expect(code).not.toBeNull();
    expect(plain).toHaveLength(1);
    expect(plain[0]).toMatch(new RegExp(`^DATA_DIR ${file} is not a writable directory`));
  }, 30_000);

  it("Discord unreachable at boot, without the token in any line", async ({ expect }) => {
    const url = `http://127.0.0.1:${await closedPort()}`;
    const { code, plain, stderr, fatal } = await runBot({
      DATA_DIR: tempDir(),
      DISCORD_TOKEN: TOKEN,
      DISCORD_API_URL: url,
      DATA_SERVICE: "simulator",
    });
    expect(code).not.toBe(0);
    expect(code).not.toBeNull();
    const hostPort = url.slice("http://".length);
    const line = `Cannot reach Discord at ${url}: connection refused by ${hostPort} (nothing listening there)`;
    expect(plain).toEqual([line]);
    expect(stderr).not.toContain(TOKEN);
    // A known cause is all in its line: no stack anywhere, and no error logged before it.
    expect(stderr).not.toMatch(/\n\s+at /);
    const before = stderr.slice(0, stderr.indexOf(line)).split("\n").filter(Boolean);
    expect(before.map((json) => (JSON.parse(json) as { level: number }).level)).not.toContain(60);
    // Said once: the logs share stderr with the line, so no JSON line repeats it, and it is last.
    expect(occurrences(stderr, "connection refused by")).toBe(1);
    expect(fatal).toEqual([]);
    expect(stderr.trimEnd().endsWith(line)).toBe(true);
  }, 30_000);

  it("Telegram's host name does not resolve: said at once, long before the connect timeout (60 s, more than the test waits)", async ({
    expect,
  }) => {
    const token = TELEGRAM_TOKEN;
    const { code, plain, stderr } = await runBot({
      DATA_DIR: tempDir(),
      TELEGRAM_BOT_TOKEN: token,
      TELEGRAM_API_ROOT: "http://api.telegram.invalid",
      DATA_SERVICE: "simulator",
    });
    expect(code).toBe(1);
    expect(plain).toEqual([
      "Cannot reach Telegram at http://api.telegram.invalid: DNS lookup failed for api.telegram.invalid (no such host name)",
    ]);
    expect(stderr).not.toContain(token);
    expect(occurrences(stderr, "DNS lookup failed")).toBe(1);
  }, 30_000);

  it("the data service refuses the API key: one line naming API_KEY, without the key, and exit 1", async ({
    expect,
  }) => {
    const simulator = await startSimulator({
      port: 0,
      apiKey: "the-right-key",
      chains: ["ethereum"],
    });
    cleanups.push(() => void simulator.close());
    const { code, plain, stderr } = await runBot({
      DATA_DIR: tempDir(),
      API_BASE_URL: simulator.urlOf("ethereum"),
      API_KEY: "secret-wrong-api-key",
    });
    expect(code).toBe(1);
    expect(plain).toEqual([
      "The data service rejected the API key (401 Unauthorized): check API_KEY",
    ]);
    expect(stderr).not.toContain("secret-wrong-api-key");
  }, 30_000);

  it("`npm run register` with Discord's host name not resolving: the cause in words, exit 1", async ({
    expect,
  }) => {
    const { code, stderr } = await runBot(
      { DATA_DIR: tempDir(), DISCORD_TOKEN: TOKEN, DISCORD_API_URL: "http://discord.invalid/api" },
      undefined,
      "dist/register.js",
    );
    expect(code).toBe(1);
    expect(stderr).toBe(
      "Cannot reach Discord at http://discord.invalid/api: DNS lookup failed for discord.invalid (no such host name)\n",
    );
  }, 30_000);

  it("the health and metrics port already taken", async ({ expect }) => {
    const taken = createServer();
    await new Promise<void>((resolve) => taken.listen(0, "127.0.0.1", resolve));
    cleanups.push(() => taken.close());
    const { port } = taken.address() as { port: number };
    const { code, plain } = await runBot({
      DATA_DIR: tempDir(),
      API_BASE_URL: "http://127.0.0.1:9",
      METRICS_PORT: String(port),
    });
    expect(code).not.toBe(0);
    expect(code).not.toBeNull();
    expect(plain).toEqual([
      `${NOTHING_AT_PORT_9}; starting anyway, commands will fail until it answers`,
      `Cannot listen on 127.0.0.1:${port} for health and metrics (METRICS_PORT): EADDRINUSE`,
    ]);
  }, 30_000);
});

describe.concurrent("after start", () => {
  it("an unhandled rejection is a bug: logged at fatal, and the process exits 1 to be restarted", async ({
    expect,
  }) => {
    const dataDir = tempDir();
    const { code, fatal, plain } = await runBot(
      { DATA_DIR: dataDir, API_BASE_URL: "http://127.0.0.1:9", LOG_LEVEL: "info" },
      // Once started: the entry listens for SIGTERM only when the bot is up (a fixed delay was
      // too short for a start on a busy machine, and the rejection then came before the entry).
      `const up = setInterval(() => {
        if (process.listenerCount("SIGTERM") === 0) return;
        clearInterval(up);
        Promise.reject(new Error("a forgotten promise"));
      }, 20);`,
    );
    expect(code).toBe(1);
    // The console chat's logs are in a file: one plain line says where to look.
    expect(plain).toEqual([
      `${NOTHING_AT_PORT_9}; starting anyway, commands will fail until it answers`,
      `The bot stops on a bug (unhandled rejection): see ${join(dataDir, "bot.log")}`,
    ]);
    expect(fatal).toEqual([
      expect.objectContaining({
        msg: expect.stringMatching(/^unhandled rejection/),
        err: expect.objectContaining({ message: "a forgotten promise" }),
      }),
    ]);
  }, 30_000);
});

describe.concurrent("createBot cleans up after itself when it fails", () => {
  it("the embedded simulator and the database it opened are closed again", async ({ expect }) => {
    const dataDir = tempDir();
    const simulatorPort = await closedPort();
    const discordUrl = `http://127.0.0.1:${await closedPort()}`;
    const config = parseConfig({
      DATA_DIR: dataDir,
      SIMULATOR_PORT: String(simulatorPort),
      DISCORD_TOKEN: TOKEN,
      DISCORD_API_URL: discordUrl,
    });
    const failure = await createBot(config, { logger: silentLogger() })
      .then((bot) => bot.start())
      .catch((error) => error);
    expect(failure).toBeInstanceOf(StartupError);
    expect(failure.message).toBe(
      `Cannot reach Discord at ${discordUrl}: connection refused by ${discordUrl.slice("http://".length)} (nothing listening there)`,
    );
    // The last connection to close removes SQLite's write-ahead log.
    expect(existsSync(join(dataDir, "bot.sqlite"))).toBe(true);
    expect(existsSync(join(dataDir, "bot.sqlite-wal"))).toBe(false);
    // The simulator's port is free again.
    const probe = createServer();
    await new Promise<void>((resolve, reject) => {
      probe.once("error", reject);
      probe.listen(simulatorPort, "127.0.0.1", resolve);
    });
    await new Promise<void>((resolve) => probe.close(() => resolve()));
  });
});
