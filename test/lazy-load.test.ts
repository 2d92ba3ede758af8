/**
 * Issue 14, "Build": a platform's library and the chart renderer load only when used. The compiled
 * bot runs in console mode with a loader hook that records every module it resolves.
 */
import { spawn } from "node:child_process";
import { existsSync, mkdtempSync, readdirSync, readFileSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { afterEach, describe, expect, it } from "vitest";
import { COMPILED_BOT, loadedPackages, ROOT } from "./compiled.ts";

const dirs: string[] = [];
afterEach(() => {
  for (const dir of dirs.splice(0)) rmSync(dir, { recursive: true, force: true });
});

/** The ids of the processes whose parent is `pid`, from /proc (Linux). */
function childrenOf(pid: number): number[] {
  const children: number[] = [];
  for (const name of readdirSync("/proc")) {
    if (!/^\d+$/.test(name)) continue;
    try {
      // The command name is in parentheses and may hold spaces: the parent's id follows it.
      const stat = readFileSync(`/proc/${name}/stat`, "utf8");
      const parent = Number(stat.slice(stat.lastIndexOf(")") + 2).split(" ")[1]);
      if (parent === pid) children.push(Number(name));
    } catch {
      // Gone since the listing.
    }
  }
  return children;
}

/** Whether the process has Skia's native library (@napi-rs/canvas) mapped into its memory. */
/** A secret setting the bot is started with (the embedded simulator's key). */
const SECRET = "lazy-load-secret-key";

const mapsSkia = (pid: number) =>
  /skia\.[^/\s]*\.node/.test(readFileSync(`/proc/${pid}/maps`, "utf8"));

describe("lazy loading", () => {
  it("the console bot loads neither discord.js nor grammY, the canvas only for a chart, viem only for a proof, pg and ioredis only when configured", async () => {
    const dir = mkdtempSync(join(tmpdir(), "bot-lazy-"));
    dirs.push(dir);
    const record = join(dir, "imports.txt");
    const env: Record<string, string> = { DATA_DIR: dir };
    for (const key of ["PATH", "HOME"]) if (process.env[key]) env[key] = process.env[key];
    const child = spawn(
      process.execPath,
      // The record's file in the flag, which the chart painter inherits (it gets no variable).
      [
        "--import",
        `./test/fixtures/record-imports.mjs?record=${encodeURIComponent(record)}`,
        ...COMPILED_BOT,
      ],
      {
        cwd: ROOT,
        env: { ...env, SIMULATOR_MINT_INTERVAL_MS: "0", SIMULATOR_API_KEY: SECRET },
        stdio: "pipe",
      },
    );
    let stdout = "";
    const printed = (pattern: RegExp) =>
      new Promise<void>((resolve, reject) => {
        const check = () => {
          if (pattern.test(stdout)) {
            child.stdout.off("data", check);
            resolve();
          }
        };
        child.stdout.on("data", (chunk) => {
          stdout += chunk;
          check();
        });
        child.once("exit", () => reject(new Error(`exited before ${pattern}: ${stdout}`)));
        check();
      });
    const exited = new Promise<void>((resolve) => child.once("exit", () => resolve()));
    try {
      child.stdin.write("/whois vitalik.eth\n");
      // The answer's last line is its footer.
      await printed(/^Address: 0x[\s\S]*^— /m);
      const afterWhois = loadedPackages(record);
      expect(afterWhois).toContain("better-sqlite3");
      for (const lazy of [
        "discord.js",
        "grammy",
        "@grammyjs/runner",
        "@discordjs/rest",
        "@napi-rs/canvas",
        "chart.js",
        // Only a wallet's proof (/verify's page) needs it: about 200 ms and 28 MB at start else.
        "viem",
        // Only DATABASE_URL and REDIS_URL need them: some 35 ms of every start else (issue 28).
        "pg",
        "ioredis",
      ])
        expect(afterWhois, lazy).not.toContain(lazy);

      child.stdin.write("/top volume 1d\n");
      await printed(/^Picture: .+\.png$/m);
      const afterTop = loadedPackages(record);
      expect(afterTop).toContain("@napi-rs/canvas");
      expect(afterTop).toContain("chart.js");
      for (const lazy of ["discord.js", "grammy"]) expect(afterTop, lazy).not.toContain(lazy);

      // Issue 28: the chart was drawn in a child process; Skia's pages are there, not in the bot.
      const pid = child.pid as number;
      expect(mapsSkia(pid)).toBe(false);
      const painters = childrenOf(pid).filter(mapsSkia);
      expect(painters).toHaveLength(1);
      // The painter draws pictures: it gets none of the bot's secrets (the bot has its own).
      const environ = (of: number) => readFileSync(`/proc/${of}/environ`, "utf8");
      expect(environ(pid)).toContain(SECRET);
      expect(environ(painters[0] as number)).not.toContain(SECRET);
      child.stdin.end();
      child.kill("SIGTERM");
      await exited;
      // The bot's stop leaves no painter behind.
      await expect
        .poll(() => painters.filter((painter) => existsSync(`/proc/${painter}`)))
        .toEqual([]);
    } finally {
      child.stdin.end();
      child.kill("SIGTERM");
      await exited;
    }
  });
});
