/**
 * The compiled bot in Discord HTTP-interactions mode, as production runs it: DISCORD_PUBLIC_KEY
 * set, interactions POSTed by the fake Discord to each process's HTTP host. Two processes share
 * one data directory: a button made by one is pressed on the other, so nothing an interaction
 * needs lives in a process.
 */
import { type ChildProcess, spawn } from "node:child_process";
import { mkdtempSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { afterEach, describe, expect, it } from "vitest";
import { inviteUrl } from "../src/adapters/discord/invite.ts";
import { COMPILED_BOT, loadedPackages, ROOT } from "./compiled.ts";
import {
  type FakeDiscord,
  PERMISSION,
  type RecordedRequest,
  startFakeDiscord,
} from "./fakes/discord/index.ts";
import { freePort } from "./helpers.ts";

const cleanups: (() => Promise<void> | void)[] = [];
afterEach(async () => {
  for (const cleanup of cleanups.splice(0).reverse()) await cleanup();
});

interface Running {
  child: ChildProcess;
  base: string;
  output: string[];
  record: string;
  exited: Promise<number | null>;
}

async function startBot(fake: FakeDiscord, dataDir: string, index: number): Promise<Running> {
  const port = await freePort();
  const record = join(dataDir, `imports-${index}.txt`);
  const env: Record<string, string> = {};
  for (const key of ["PATH", "HOME"]) if (process.env[key]) env[key] = process.env[key] as string;
  const child = spawn(
    process.execPath,
    ["--import", "./test/fixtures/record-imports.mjs", ...COMPILED_BOT],
    {
      cwd: ROOT,
      env: {
        ...env,
        DATA_DIR: dataDir,
        RECORD_IMPORTS: record,
        // The embedded simulator's made-up data, served on purpose (issue 34, item 9).
        DATA_SERVICE: "simulator",
        DISCORD_TOKEN: fake.token,
        DISCORD_PUBLIC_KEY: fake.publicKey,
        DISCORD_API_URL: fake.apiBase,
        DISCORD_GUILD_ID: fake.guildId,
        DISCORD_REGISTER_ON_START: index === 1 ? "true" : "false",
        HTTP_PORT: String(port),
        HTTP_HOST: "127.0.0.1",
        // New contracts while the test runs, for the alert sent through REST.
        SIMULATOR_MINT_INTERVAL_MS: "300",
        // The timed mints are a history: 10 minutes of overlap would be 2,000, more than a poll's pages.
        POLL_OVERLAP_S: "5",
        POLL_INTERVAL_S: "1",
        SIMULATOR_SEED: "1",
      },
      stdio: ["ignore", "pipe", "pipe"],
    },
  );
  const output: string[] = [];
  child.stdout?.on("data", (chunk: Buffer) => output.push(String(chunk)));
  child.stderr?.on("data", (chunk: Buffer) => output.push(String(chunk)));
  const exited = new Promise<number | null>((resolve) =>
    child.once("exit", (code) => resolve(code)),
  );
  const running = { child, base: `http://127.0.0.1:${port}`, output, record, exited };
  cleanups.push(async () => {
    if (child.exitCode === null && child.signalCode === null) child.kill("SIGKILL");
    await exited;
  });
  const deadline = Date.now() + 30_000;
  for (;;) {
    if (child.exitCode !== null) throw new Error(`bot ${index} exited: ${output.join("")}`);
    const health = await fetch(`${running.base}/healthz`).catch(() => undefined);
    if (health?.status === 200) return running;
    if (Date.now() > deadline) throw new Error(`bot ${index} not healthy: ${output.join("")}`);
    await new Promise((resolve) => setTimeout(resolve, 100));
  }
}

type Rows = { components: { custom_id: string; label: string }[] }[];
const dataOf = (request: RecordedRequest) => {
  const body = request.body as { data?: Record<string, unknown> } & Record<string, unknown>;
  return (body.data ?? body) as Record<string, unknown>;
};

describe("the compiled bot in HTTP-interactions mode", () => {
  it("answers signed interactions without a gateway or discord.js; a button made on one instance works on another", async () => {
    const fake = await startFakeDiscord();
    cleanups.push(() => fake.close());
    const dataDir = mkdtempSync(join(tmpdir(), "bot-dhttp-"));
    cleanups.push(() => rmSync(dataDir, { recursive: true, force: true }));
    const one = await startBot(fake, dataDir, 1);
    const two = await startBot(fake, dataDir, 2);
    const endpoint = (bot: Running) => `${bot.base}/discord/interactions`;

    expect(await fake.postInteraction(endpoint(one), fake.ping())).toMatchObject({
      status: 200,
      body: { type: 1 },
    });
    expect(fake.commands(fake.guildId).map((c) => c.name)).toContain("wallet");

    const asked = fake.slashCommand("top", { metric: "volume", duration: "1d" });
    const first = await fake.postInteraction(endpoint(one), asked);
    expect(first.callback?.status).toBe(204);
    const answer =
      (first.body as { type: number }).type === 5
        ? await fake.waitForOriginalEdit(asked, 15_000)
        : (first.callback as RecordedRequest);
    const next = ((dataOf(answer).components as Rows | undefined) ?? [])
      .flatMap((row) => row.components)
      .find((button) => button.label === "Next ▶");
    expect(next).toBeDefined();

    // Pressed on the other instance: it finds the button in the shared store and answers with
    // page 2 (a button another instance did not know would have "no longer works").
    const press = await fake.postInteraction(
      endpoint(two),
      fake.buttonClick(next?.custom_id ?? ""),
    );
    expect(press.callback?.status).toBe(204);
    const pressed = JSON.stringify(press.body);
    expect(pressed).not.toMatch(/no longer works/);
    // The message is updated in place (now, or deferred and edited after).
    expect([6, 7]).toContain((press.body as { type: number }).type);

    // Subscribed through an interaction; the instance holding the poller lease posts the alert
    // through REST, with its enforced nonce.
    const subscribe = await fake.postInteraction(
      endpoint(two),
      fake.slashCommand("subscribe", {}, { memberPermissions: PERMISSION.ManageChannels }),
    );
    expect(JSON.stringify(subscribe.body)).toMatch(/Subscribed: new collections/);
    const alert = await fake.waitForChannelMessage(fake.channelId, 20_000);
    expect(alert.body).toMatchObject({ enforce_nonce: true, allowed_mentions: { parse: [] } });
    expect(alert.headers.authorization).toBe(`Bot ${fake.token}`);

    expect(fake.gatewayFrames).toHaveLength(0);
    expect(fake.requestsOf("getGatewayBot")).toHaveLength(0);
    const health = (await (await fetch(`${two.base}/healthz`)).json()) as {
      adapters: Record<string, boolean>;
    };
    expect(health.adapters).toEqual({ discord: true });
    for (const bot of [one, two]) {
      const loaded = loadedPackages(bot.record);
      expect(loaded).toContain("@discordjs/rest");
      expect(loaded).not.toContain("discord.js");
    }

    one.child.kill("SIGTERM");
    two.child.kill("SIGTERM");
    expect(await one.exited).toBe(0);
    expect(await two.exited).toBe(0);
  }, 60_000);

  it("npm run register publishes the commands and prints the endpoint URL to paste, without discord.js", async () => {
    const fake = await startFakeDiscord();
    cleanups.push(() => fake.close());
    const dir = mkdtempSync(join(tmpdir(), "bot-register-"));
    cleanups.push(() => rmSync(dir, { recursive: true, force: true }));
    const record = join(dir, "imports.txt");
    const run = (extra: Record<string, string>) =>
      new Promise<{ code: number | null; stdout: string }>((resolve) => {
        const env: Record<string, string> = {};
        for (const key of ["PATH", "HOME"])
          if (process.env[key]) env[key] = process.env[key] as string;
        const child = spawn(
          process.execPath,
          ["--import", "./test/fixtures/record-imports.mjs", "dist/register.js"],
          {
            cwd: ROOT,
            env: {
              ...env,
              RECORD_IMPORTS: record,
              DISCORD_TOKEN: fake.token,
              DISCORD_API_URL: fake.apiBase,
              ...extra,
            },
            stdio: ["ignore", "pipe", "pipe"],
          },
        );
        let stdout = "";
        child.stdout?.on("data", (chunk: Buffer) => {
          stdout += String(chunk);
        });
        child.once("exit", (code) => resolve({ code, stdout }));
      });

    const withUrl = await run({
      DISCORD_PUBLIC_KEY: fake.publicKey,
      PUBLIC_URL: "https://bot.example.com/",
    });
    expect(withUrl.code).toBe(0);
    expect(withUrl.stdout).toMatch(/^Registered \d+ commands \(global\)/m);
    // The invite link with the application's own id, so a newcomer has nothing to assemble.
    expect(withUrl.stdout).toContain(
      `Add the bot to a server with ${inviteUrl(fake.applicationId)}\n`,
    );
    expect(withUrl.stdout).toContain(
      "Interactions Endpoint URL: https://bot.example.com/discord/interactions\n",
    );
    expect(fake.commands().map((c) => c.name)).toContain("whois");
    expect(loadedPackages(record)).not.toContain("discord.js");

    const withoutUrl = await run({ DISCORD_PUBLIC_KEY: fake.publicKey });
    expect(withoutUrl.code).toBe(0);
    expect(withoutUrl.stdout).toMatch(/set PUBLIC_URL to have it printed/);
    // Gateway mode: the portal's field stays empty (test/register.test.ts says more).
    const gateway = await run({});
    expect(gateway.code).toBe(0);
    expect(gateway.stdout).toMatch(/uses the gateway/);
    expect(gateway.stdout).toMatch(/leave it empty/);
  });
});
