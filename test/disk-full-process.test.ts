import { type ChildProcessWithoutNullStreams, spawn } from "node:child_process";
import { readFileSync } from "node:fs";
import { join } from "node:path";
import { afterEach, describe, expect, it } from "vitest";
import { SQLITE_MIGRATIONS } from "../src/store/sqlite/db.ts";
import { openDatabase } from "../src/store/sqlite/index.ts";
import { COMPILED_BOT, ROOT } from "./compiled.ts";
import { canMountTmpfs, fillDisk, mountSmallDisk } from "./tmpfs.ts";

/**
 * The compiled bot (console chat, logs in DATA_DIR/bot.log) on a real small file system that
 * fills up: it keeps answering, its health says why it is degraded, and a signal still ends it.
 * The faults last as long as real ones: buffers and the log file's last page hide a full disk for
 * a while, so the long case runs 3 minutes on the full disk (it runs beside the other files).
 */

const cleanups: (() => Promise<void> | void)[] = [];
afterEach(async () => {
  for (const cleanup of cleanups.splice(0).reverse()) await cleanup();
});

const canMount = canMountTmpfs();
if (!canMount)
  console.warn(
    "\n!!! this machine does not let the test mount a small tmpfs (root and mount needed): SKIPPING disk-full-process.test.ts !!!\n",
  );

function cleanEnv(settings: Record<string, string>): Record<string, string> {
  const env: Record<string, string> = {};
  for (const key of ["PATH", "HOME", "TMPDIR"]) if (process.env[key]) env[key] = process.env[key];
  return { ...env, SIMULATOR_MINT_INTERVAL_MS: "0", ...settings };
}

interface RunningBot {
  child: ChildProcessWithoutNullStreams;
  stdout: () => string;
  stderr: () => string;
  /** Waits until stdout (from `from` on) matches; fails after `ms` with what was printed. */
  printed(pattern: RegExp, ms?: number, from?: number): Promise<void>;
  /** Sends a line; resolves once stdout, after it, matches `answer`. */
  ask(line: string, answer: RegExp, ms?: number): Promise<string>;
  /** The loopback port of its HTTP host (health and metrics), from the greeting. */
  port: number;
  exited: Promise<number | null>;
}

/** Starts the compiled bot as production does, in the console chat, on `dataDir`. */
async function startBot(
  dataDir: string,
  settings: Record<string, string> = {},
): Promise<RunningBot> {
  const child = spawn(process.execPath, COMPILED_BOT, {
    cwd: ROOT,
    env: cleanEnv({ DATA_DIR: dataDir, ...settings }),
    stdio: "pipe",
  });
  let out = "";
  let err = "";
  const waiters = new Set<() => void>();
  child.stdout.on("data", (chunk) => {
    out += chunk;
    for (const wake of waiters) wake();
  });
  child.stderr.on("data", (chunk) => {
    err += chunk;
  });
  let exitCode: number | null | undefined;
  const exited = new Promise<number | null>((resolve) =>
    child.on("exit", (code, signal) => {
      exitCode = code ?? (signal ? -1 : null);
      for (const wake of waiters) wake();
      resolve(code);
    }),
  );
  cleanups.push(async () => {
    if (exitCode === undefined) {
      child.kill("SIGKILL");
      await exited;
    }
  });
  const printed = (pattern: RegExp, ms = 30_000, from = 0) =>
    new Promise<void>((resolve, reject) => {
      const check = () => {
        if (pattern.test(out.slice(from))) done(resolve);
        else if (exitCode !== undefined)
          done(() => reject(new Error(`the bot exited (${exitCode}) before ${pattern}: ${err}`)));
      };
      const timer = setTimeout(
        () =>
          done(() =>
            reject(
              new Error(
                `no ${pattern} within ${ms} ms; printed since: ${out.slice(from).slice(-500)}; stderr: ${err.slice(-500)}`,
              ),
            ),
          ),
        ms,
      );
      const done = (then: () => void) => {
        clearTimeout(timer);
        waiters.delete(check);
        then();
      };
      waiters.add(check);
      check();
    });
  await printed(/Ctrl\+D/);
  const port = Number(/http:\/\/127\.0\.0\.1:(\d+)\/verify/.exec(out)?.[1]);
  return {
    child,
    stdout: () => out,
    stderr: () => err,
    printed,
    async ask(line, answer, ms = 30_000) {
      const from = out.length;
      child.stdin.write(`${line}\n`);
      await printed(answer, ms, from);
      return out.slice(from);
    },
    port,
    exited,
  };
}

async function healthOf(
  bot: RunningBot,
): Promise<{ status: number; body: Record<string, unknown> }> {
  const res = await fetch(`http://127.0.0.1:${bot.port}/healthz`);
  return { status: res.status, body: (await res.json()) as Record<string, unknown> };
}

async function metricsOf(bot: RunningBot): Promise<string> {
  return (await fetch(`http://127.0.0.1:${bot.port}/metrics`)).text();
}

const sleep = (ms: number) => new Promise((resolve) => setTimeout(resolve, ms));

/** How long the disk stays full in the long case: as long as a real one is, past every buffer. */
const FULL_FOR_MS = 180_000;

describe.runIf(canMount)("the compiled bot on a full disk (tmpfs)", () => {
  it(
    "keeps answering 3 minutes after its log's disk filled; the log file is dropped, counted and shown in /healthz, taken back once there is room; SIGTERM ends it",
    async () => {
      const disk = mountSmallDisk(16, cleanups);
      const dataDir = join(disk, "data");
      const bot = await startBot(dataDir, { LOG_LEVEL: "debug" });
      await bot.ask("/top volume 1d 3", /Top collections by sales volume/);
      const freeRoom = fillDisk(disk);
      const filledAt = Date.now();
      // Commands all along (each logs several lines at debug): the log's last page fills early.
      for (let i = 0; Date.now() - filledAt < FULL_FOR_MS; i++) {
        await bot.ask("/top volume 1d 3", /Top collections by sales volume/);
        await bot.ask(`/nope${i}`, new RegExp(`There is no /nope${i} command`));
        await sleep(2_000);
      }
      // 3 minutes on: it answers, and says why it is not healthy.
      await bot.ask("/help", /\/top/);
      const sick = await healthOf(bot);
      expect(sick.status).toBe(503);
      expect(JSON.stringify(sick.body.checks)).toMatch(/log file .*bot\.log.*ENOSPC/);
      expect(await metricsOf(bot)).toMatch(/^bot_log_write_failures_total [1-9]/m);
      expect(bot.stderr()).toMatch(/cannot write the log file .*bot\.log.*ENOSPC/i);
      // Room again: the log file is taken back, and says how many lines it lost.
      const logBefore = readFileSync(join(dataDir, "bot.log"), "utf8").length;
      freeRoom();
      for (let i = 0; ; i++) {
        const { body } = await healthOf(bot);
        const checks = JSON.stringify(body.checks);
        if (/"name":"log","ok":true/.test(checks)) break;
        if (i > 300) throw new Error(`the log file was not taken back: ${checks}`);
        await sleep(100);
      }
      await bot.ask("/top volume 1d 3", /Top collections by sales volume/);
      for (let i = 0; readFileSync(join(dataDir, "bot.log"), "utf8").length === logBefore; i++) {
        if (i > 100) throw new Error("nothing was written to the log file after room came back");
        await sleep(100);
      }
      const after = readFileSync(join(dataDir, "bot.log"), "utf8").slice(logBefore);
      const back = after.split("\n").find((line) => line.includes("log file writable again"));
      expect(JSON.parse(back ?? "{}").dropped).toBeGreaterThan(0);
      bot.child.kill("SIGTERM");
      expect(await bot.exited).toBe(0);
    },
    FULL_FOR_MS + 120_000,
  );

  it("starts on a full disk, its database migrated or with a migration to run: reads answer and /healthz is 503 saying why; once there is room the migrations run, health recovers and alerts go out", async () => {
    for (const through of [SQLITE_MIGRATIONS - 1, SQLITE_MIGRATIONS]) {
      const disk = mountSmallDisk(16, cleanups);
      const dataDir = join(disk, "data");
      // A database left by a clean stop (no -wal, no -shm), one migration behind or not, with the
      // console chat subscribed to alerts.
      const db = openDatabase(dataDir, "bot.sqlite", through);
      db.prepare(
        "INSERT INTO subscriptions (platform, chat_id, chain, types, created_by, created_at) VALUES ('console', 'console', 'ethereum', 'all', 'console', ?)",
      ).run(Date.now());
      db.close();
      const freeRoom = fillDisk(disk);
      const bot = await startBot(dataDir, {
        SIMULATOR_MINT_INTERVAL_MS: "500",
        // The timed mints are a history: 10 minutes of overlap would be 1,200, more than a poll's pages.
        POLL_OVERLAP_S: "5",
        POLL_INTERVAL_S: "1",
        DELIVERY_TICK_MS: "100",
      });
      // Commands answer: one from the data service (its buttons not stored), and, on a database
      // at the code's version, one that reads it.
      await bot.ask("/top volume 1d 3", /Top collections by sales volume/);
      if (through === SQLITE_MIGRATIONS)
        await bot.ask("/subscriptions", /New-collection alerts[\s\S]*Status/);
      const sick = await healthOf(bot);
      expect(sick.status, `${through}`).toBe(503);
      expect(sick.body.disk, `${through}`).toMatch(/disk full/);
      if (through < SQLITE_MIGRATIONS) {
        expect(JSON.stringify(sick.body.checks)).toMatch(
          new RegExp(`migrations \\(${through} of ${SQLITE_MIGRATIONS} applied\\) wait for room`),
        );
        // Their retry is a job like any other (issue 35), the only one running meanwhile.
        expect(JSON.stringify(sick.body.checks)).toContain('"name":"migrations"');
      }
      expect(bot.stdout()).not.toMatch(/\[alert\]/);
      // Room again: the migrations run, health recovers, and alerts go out.
      const from = bot.stdout().length;
      freeRoom();
      for (let i = 0; (await healthOf(bot)).status !== 200; i++) {
        if (i > 300)
          throw new Error(`health did not recover: ${JSON.stringify((await healthOf(bot)).body)}`);
        await sleep(100);
      }
      await bot.printed(/\[alert\] New collection/, 60_000, from);
      bot.child.kill("SIGTERM");
      expect(await bot.exited).toBe(0);
      // The database is at the code's version.
      const reopened = openDatabase(dataDir, "bot.sqlite", 0);
      expect(reopened.pragma("user_version", { simple: true })).toBe(SQLITE_MIGRATIONS);
      reopened.close();
    }
  }, 180_000);
});
