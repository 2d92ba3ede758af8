/**
 * `npm run register` as a newcomer runs it (the compiled dist/register.js, against the fake
 * Discord): what it says when the token is missing, how long global commands take to show and how
 * to have them at once on one server, and when the portal's Interactions Endpoint URL is to be
 * set or left empty. Hidden commands (/link) are not published.
 */
import { spawn } from "node:child_process";
import { mkdtempSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { NODE_FLAGS, ROOT } from "./compiled.ts";
import { type FakeDiscord, startFakeDiscord } from "./fakes/discord/index.ts";

let fake: FakeDiscord;
let dataDir: string;
beforeAll(async () => {
  fake = await startFakeDiscord();
  dataDir = mkdtempSync(join(tmpdir(), "bot-register-"));
});
afterAll(async () => {
  await fake.close();
  rmSync(dataDir, { recursive: true, force: true });
});

/** Runs dist/register.js with only these settings (and PATH, HOME); its exit code and output. */
function register(settings: Record<string, string>) {
  const env: Record<string, string> = {};
  for (const key of ["PATH", "HOME"]) if (process.env[key]) env[key] = process.env[key] as string;
  const child = spawn(process.execPath, [...NODE_FLAGS, "dist/register.js"], {
    cwd: ROOT,
    env: { ...env, DATA_DIR: dataDir, ...settings },
    stdio: ["ignore", "pipe", "pipe"],
  });
  let stdout = "";
  let stderr = "";
  child.stdout.on("data", (chunk) => {
    stdout += chunk;
  });
  child.stderr.on("data", (chunk) => {
    stderr += chunk;
  });
  return new Promise<{ code: number | null; stdout: string; stderr: string }>((resolve) =>
    child.on("close", (code) => resolve({ code, stdout, stderr })),
  );
}

const withFake = () => ({ DISCORD_TOKEN: fake.token, DISCORD_API_URL: fake.apiBase });

describe("npm run register", () => {
  it("without a token: where to get one, in plain words, exit 1 and no stack", async () => {
    const { code, stdout, stderr } = await register({});
    expect(code).toBe(1);
    expect(stdout).toBe("");
    expect(stderr).toMatch(/DISCORD_TOKEN is not set/);
    expect(stderr).toContain("Discord Developer Portal");
    expect(stderr).toContain("https://discord.com/developers/applications");
    expect(stderr).toMatch(/your application → Bot → Reset Token/);
    // The application id is read from the token: nothing else to find.
    expect(stderr).toMatch(/application id/i);
    expect(stderr).not.toMatch(/\n\s+at /);
    expect(stderr).not.toMatch(/Error:/);
  }, 30_000);

  it("a token of the wrong shape: refused before any request, naming the setting, never the token", async () => {
    const { code, stderr } = await register({
      DISCORD_TOKEN: "wrong-shape-secret",
      DISCORD_API_URL: fake.apiBase,
    });
    expect(code).toBe(1);
    expect(stderr).toMatch(/^Invalid setting DISCORD_TOKEN: /);
    expect(stderr).not.toContain("wrong-shape-secret");
    expect(stderr).not.toMatch(/\n\s+at /);
  }, 30_000);

  it("globally: says they can take up to an hour, and that DISCORD_GUILD_ID shows them on one server at once; /link is not published", async () => {
    const { code, stdout } = await register(withFake());
    expect(code).toBe(0);
    expect(stdout).toMatch(/^Registered \d+ commands \(global\)/m);
    expect(stdout).toMatch(/up to an hour/);
    expect(stdout).toMatch(/DISCORD_GUILD_ID/);
    const names = fake.commands().map((command) => command.name);
    expect(names).toContain("verify");
    expect(names).not.toContain("link");
  }, 30_000);

  it("on one server (DISCORD_GUILD_ID): there at once", async () => {
    const { code, stdout } = await register({ ...withFake(), DISCORD_GUILD_ID: fake.guildId });
    expect(code).toBe(0);
    expect(stdout).toMatch(
      new RegExp(`^Registered \\d+ commands \\(guild ${fake.guildId}\\)`, "m"),
    );
    expect(stdout).toMatch(/at once/);
    expect(stdout).not.toMatch(/up to an hour/);
    expect(fake.commands(fake.guildId).map((command) => command.name)).not.toContain("link");
  }, 30_000);

  it("gateway mode (no DISCORD_PUBLIC_KEY): leave the Interactions Endpoint URL empty, and no URL to paste is printed", async () => {
    const { code, stdout } = await register({
      ...withFake(),
      PUBLIC_URL: "https://bot.example.com",
    });
    expect(code).toBe(0);
    const lines = stdout.split("\n").filter((line) => /Interactions Endpoint URL/.test(line));
    expect(lines.length).toBeGreaterThan(0);
    expect(lines.join("\n")).toMatch(/leave .*empty/);
    expect(lines.join("\n")).toMatch(/gateway/);
    expect(lines.join("\n")).toMatch(/DISCORD_PUBLIC_KEY is not set/);
    expect(stdout).not.toContain("https://bot.example.com/discord/interactions");
    expect(stdout).not.toMatch(/paste/i);
  }, 30_000);

  it("HTTP interactions mode (DISCORD_PUBLIC_KEY): the URL to set, and not a word of leaving it empty", async () => {
    const { code, stdout } = await register({
      ...withFake(),
      DISCORD_PUBLIC_KEY: fake.publicKey,
      PUBLIC_URL: "https://bot.example.com",
    });
    expect(code).toBe(0);
    expect(stdout).toContain(
      "Interactions Endpoint URL: https://bot.example.com/discord/interactions\n",
    );
    expect(stdout).toMatch(/DISCORD_PUBLIC_KEY is set/);
    expect(stdout).not.toMatch(/empty/);
  }, 30_000);
});
