/**
 * Issue 35 item 6: every periodic piece of work is a job in the bot's list, with its health in
 * /healthz: the hourly prune of expired rows, each chain's collection index refresh and SQLite's
 * write-ahead log checkpoint, besides the leased jobs; stop() ends them all.
 */
import { spawn } from "node:child_process";
import { mkdtempSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { PassThrough } from "node:stream";
import { afterAll, describe, expect, it } from "vitest";
import { type Bot, createBot } from "../src/bot.ts";
import { parseConfig } from "../src/config.ts";
import type { Health } from "../src/http/ops.ts";
import type { Check } from "../src/jobs/liveness.ts";
import { silentLogger } from "../src/log.ts";
import { ROOT } from "./compiled.ts";
import { freePort } from "./helpers.ts";
import { startTestSimulator } from "./test-simulator.ts";

const cleanups: (() => Promise<void> | void)[] = [];
afterAll(async () => {
  for (const cleanup of cleanups.splice(0).reverse()) await cleanup();
});

function tempDir(): string {
  const dir = mkdtempSync(join(tmpdir(), "bot-upkeep-"));
  cleanups.push(() => rmSync(dir, { recursive: true, force: true }));
  return dir;
}

/** A console bot on a simulator of its own, serving /healthz, with an injectable monotonic clock. */
async function startBot(monotonic?: () => number): Promise<{ bot: Bot; port: number }> {
  const sim = await startTestSimulator();
  cleanups.push(() => sim.close());
  const port = await freePort();
  const bot = await createBot(
    parseConfig({
      API_BASE_URL: sim.url,
      API_KEY: sim.apiKey,
      DATA_DIR: tempDir(),
      HTTP_PORT: String(port),
    }),
    {
      logger: silentLogger(),
      input: new PassThrough(),
      output: new PassThrough(),
      ...(monotonic ? { monotonic } : {}),
    },
  );
  cleanups.push(() => bot.stop());
  await bot.start();
  return { bot, port };
}

async function healthz(port: number): Promise<{ status: number; body: Health }> {
  const response = await fetch(`http://127.0.0.1:${port}/healthz`);
  return { status: response.status, body: (await response.json()) as Health };
}

const named = (body: Health, name: string): Check | undefined =>
  body.checks.find((check) => check.name === name);

describe("the upkeep jobs in /healthz", () => {
  it("lists the prune, the collection index refresh and the checkpoint, each with its last good round", async () => {
    const { bot, port } = await startBot();
    // Before its first round (an hour after start), the prune is listed, with none yet.
    expect(named((await healthz(port)).body, "prune")).toMatchObject({
      ok: true,
      lastGoodAgoSeconds: null,
    });
    await bot.prune();
    // A name the index misses refreshes it at once, rather than 5 s after start.
    await bot.runtime.refreshers.get("ethereum")?.refreshForMiss();
    await expect
      .poll(async () => {
        const { body } = await healthz(port);
        return ["prune", "collection refresh ethereum", "checkpoint"].map((name) => {
          const check = named(body, name);
          return { name, ok: check?.ok, good: typeof check?.lastGoodAgoSeconds };
        });
      })
      .toEqual([
        { name: "prune", ok: true, good: "number" },
        { name: "collection refresh ethereum", ok: true, good: "number" },
        { name: "checkpoint", ok: true, good: "number" },
      ]);
    expect((await healthz(port)).status).toBe(200);
  });

  it("a job whose rounds fail shows in /healthz once it has gone without a good one for its bound, and recovers", async () => {
    let clock = 1_000_000;
    const { bot, port } = await startBot(() => clock);
    await bot.prune();
    expect(named((await healthz(port)).body, "prune")).toMatchObject({
      ok: true,
      lastGoodAgoSeconds: 0,
    });
    const prune = bot.store.actions.prune.bind(bot.store.actions);
    bot.store.actions.prune = () => Promise.reject(new Error("disk I/O error"));
    // Four hours of hourly rounds that fail (the bound is three).
    clock += 4 * 3_600_000;
    await bot.prune();
    const failing = await healthz(port);
    expect(failing.status).toBe(503);
    expect(named(failing.body, "prune")).toEqual({
      name: "prune",
      ok: false,
      lastGoodAgoSeconds: 14_400,
      reason: "prune: no round completed for 14400 s (bound 10800 s)",
    });
    bot.store.actions.prune = prune;
    await bot.prune();
    expect(named((await healthz(port)).body, "prune")).toMatchObject({
      ok: true,
      lastGoodAgoSeconds: 0,
    });
  });
});

describe("stop()", () => {
  it("ends every job: no timer is left, and the process ends by itself", async () => {
    const child = spawn(process.execPath, ["--import", "tsx", "test/fixtures/bot-stops.ts"], {
      cwd: ROOT,
      env: { ...process.env, DATA_DIR: tempDir() },
      stdio: ["ignore", "pipe", "pipe"],
    });
    let out = "";
    child.stdout.on("data", (chunk) => {
      out += String(chunk);
    });
    child.stderr.on("data", (chunk) => {
      out += String(chunk);
    });
    // A job left running keeps the process alive: it is ended here, and the test fails saying so.
    const exited = await new Promise<number | string>((resolve) => {
      const limit = setTimeout(() => {
        child.kill("SIGKILL");
        resolve("still running 30 s after the bot stopped");
      }, 30_000);
      child.on("exit", (code) => {
        clearTimeout(limit);
        resolve(code ?? "killed");
      });
    });
    expect({ exited, out }).toMatchObject({ exited: 0 });
    const left = JSON.parse(/^left: (.*)$/m.exec(out)?.[1] ?? "null") as string[] | null;
    expect(left).not.toBeNull();
    expect(left?.filter((resource) => resource === "Timeout")).toEqual([]);
    // The jobs did run before the stop.
    expect(out).toMatch(/^ran: prune, collection refresh ethereum, checkpoint$/m);
  }, 60_000);
});
