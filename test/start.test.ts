/**
 * Issue 26, item 11: `npm start` from a fresh clone builds dist/ first (scripts/start.mjs), and the
 * build's esbuild service process stayed alive beside the bot for the whole run (some 46 MB). Run
 * from a copy of the project's scripts over its sources (so the shared dist/ is left alone), the
 * bot must be the only process left once it answers.
 */
import { execFileSync, spawn } from "node:child_process";
import { cpSync, existsSync, mkdtempSync, rmSync, symlinkSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { afterAll, describe, expect, it } from "vitest";
import { ROOT } from "./compiled.ts";

const dirs: string[] = [];
afterAll(() => {
  for (const dir of dirs.splice(0)) rmSync(dir, { recursive: true, force: true });
});

/** The ids and command lines of a process's children (none: empty). */
function childrenOf(pid: number): string[] {
  try {
    return execFileSync("ps", ["-o", "pid=,args=", "--ppid", String(pid)], { encoding: "utf8" })
      .split("\n")
      .filter((line) => line.trim() !== "");
  } catch {
    // ps exits 1 when no process matches.
    return [];
  }
}

describe("npm start from a fresh clone", () => {
  it("builds dist/, answers, and leaves no process but the bot's (esbuild's service is stopped)", async () => {
    const root = mkdtempSync(join(tmpdir(), "bot-start-"));
    dirs.push(root);
    for (const name of ["src", "commands", "node_modules", "package.json", "tsconfig.json"])
      symlinkSync(join(ROOT, name), join(root, name));
    cpSync(join(ROOT, "scripts"), join(root, "scripts"), { recursive: true });
    const dataDir = join(root, "data");
    const env: Record<string, string> = { DATA_DIR: dataDir, SIMULATOR_MINT_INTERVAL_MS: "0" };
    for (const key of ["PATH", "HOME"]) if (process.env[key]) env[key] = process.env[key];
    const child = spawn(process.execPath, ["scripts/start.mjs", "main"], {
      cwd: root,
      env,
      stdio: "pipe",
    });
    let output = "";
    child.stdout.on("data", (chunk) => {
      output += chunk;
    });
    child.stderr.on("data", (chunk) => {
      output += chunk;
    });
    const exited = new Promise<void>((resolve) => child.once("exit", () => resolve()));
    try {
      child.stdin.write("/whois vitalik.eth\n");
      await expect
        .poll(() => /^Address: 0x/m.test(output) || child.exitCode !== null, {
          timeout: 60_000,
          interval: 50,
        })
        .toBe(true);
      expect(output).toMatch(/^Address: 0x/m);
      // It did build: this is the start of a fresh clone, not of a dist/ built before.
      expect(existsSync(join(root, "dist", "main.js"))).toBe(true);
      expect(childrenOf(child.pid ?? 0)).toEqual([]);
    } finally {
      child.stdin.end();
      child.kill("SIGTERM");
      await exited;
    }
  }, 90_000);
});
