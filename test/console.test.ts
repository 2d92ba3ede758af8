import { spawn } from "node:child_process";
import { existsSync, mkdtempSync, readFileSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { dirname, join } from "node:path";
import { Readable, Writable } from "node:stream";
import { describe, expect, it } from "vitest";
import { breakdownReply } from "../commands/audience.ts";
import { nftReply } from "../commands/nft.ts";
import { topReply } from "../commands/top.ts";
import { ConsoleAdapter } from "../src/adapters/console/index.ts";
import { type Chain, parseChains } from "../src/chains.ts";
import type { RenderableReply } from "../src/core/reply.ts";
import { silentLogger } from "../src/log.ts";
import { renderConsole } from "../src/render/console.ts";
import { COMPILED_BOT, ROOT } from "./compiled.ts";
import { startRuntime } from "./helpers.ts";
import { startTestSimulator } from "./test-simulator.ts";

const now = new Date("2026-11-22T12:00:00Z");
const plain = (reply: RenderableReply) => renderConsole(reply).text;
const withIds = (reply: ReturnType<typeof breakdownReply>): RenderableReply => ({
  ...reply,
  buttons: reply.buttons?.map((button, i) => ({ label: button.label, id: `id${i}` })),
});

const ETHEREUM = parseChains(undefined, undefined)[0] as Chain;

describe("console rendering (golden)", () => {
  it("/audience", async () => {
    const reply = breakdownReply(
      "0xbc4ca0eda7647a8ab7c2061c2e118a18a936f13d",
      "Bored <b>Apes</b> @everyone",
      [
        {
          behavior: "BEHAVIOR_WHALE",
          walletsCount: "120",
          walletsPercentage: 12.04,
          walletsCountChange30d: "-3",
        },
        {
          behavior: "BEHAVIOR_COLLECTOR",
          walletsCount: "1234567",
          walletsPercentage: 87.5,
          walletsCountChange30d: "1000",
        },
        {
          behavior: "BEHAVIOR_OTHER",
          walletsCount: "5",
          walletsPercentage: 0.46,
          walletsCountChange30d: "0",
        },
      ],
      "https://etherscan.io",
    );
    await expect(plain(withIds(reply))).toMatchFileSnapshot("golden/audience.txt");
  });

  it("/top", async () => {
    const reply = topReply(
      "volume",
      "7d",
      [
        {
          contractAddress: "0x5aaeb6053f3e94c9b9a09f33669435e7ef1beaed",
          contractName: "",
          salesVolume: "12345.678912345678901234",
        },
        {
          contractAddress: "0xfb6916095ca1df60bb79ce92ce3ea74c37c5d359",
          contractName: "🐸 Frogs **bold**",
          salesVolume: "0.000012345",
        },
      ],
      0,
      2,
    );
    await expect(plain(withIds(reply))).toMatchFileSnapshot("golden/top.txt");
  });

  it("/nft with a 78-digit token id and fungible totals", async () => {
    const tokenId = "1".repeat(78);
    const reply = nftReply(
      {
        nft: {
          contractAddress: "0xdbf03b407c01e7cd3cbea99509d93f8dddc8c6fb",
          tokenId,
          type: "TYPE_ERC1155",
          metadata: {
            name: "Thing\u202e #1",
            description: "",
            image: { uriOriginal: "ipfs://QmHash/1.png" },
          },
          collection: { name: "Things" },
        },
        metrics: { quantity: "10", ownerCount: "3" },
        lastSale: {
          blockchainEvent: { txHash: "0xabc", blockTimestamp: "2026-11-19T12:00:00Z" },
          recipientPaid: {
            totalNative: "1.500000000000000001",
            totalUsd: "4567.891",
            fungibleTotals: [
              {
                contractAddress: "0xc02aaa39b223fe8d0a0e5c4f27ead9083c756cc2",
                totalNormalized: "0.25",
              },
            ],
            attributedBy: "ATTRIBUTED_BY_SINGLE_TRANSFER",
          },
        },
      },
      [{ address: "0xd1220a0cf47c7b9be7a2e6ba89f429762e7b9adb", quantity: "7" }],
      now,
      ETHEREUM,
    );
    await expect(plain(withIds(reply))).toMatchFileSnapshot("golden/nft.txt");
  });
});

interface BotRun {
  code: number | null;
  stdout: string;
  stderr: string;
  /** DATA_DIR/bot.log as the bot left it ("" when there is none). */
  log: string;
}

function cleanEnv(settings: Record<string, string>): Record<string, string> {
  const env: Record<string, string> = {};
  for (const key of ["PATH", "HOME", "TMPDIR", "SystemRoot"])
    if (process.env[key]) env[key] = process.env[key];
  return { ...env, SIMULATOR_MINT_INTERVAL_MS: "0", ...settings };
}

/**
 * Runs the bot exactly as `npm start` does, with piped stdin, and collects what it prints and
 * what it logged.
 */
function runBot(lines: string[], settings: Record<string, string> = {}): Promise<BotRun> {
  return new Promise((resolve, reject) => {
    const dataDir = mkdtempSync(join(tmpdir(), "bot-console-"));
    const child = spawn("npm", ["start", "--silent"], {
      env: cleanEnv({ DATA_DIR: dataDir, ...settings }),
      stdio: "pipe",
    });
    let stdout = "";
    let stderr = "";
    child.stdout.on("data", (chunk) => {
      stdout += chunk;
    });
    child.stderr.on("data", (chunk) => {
      stderr += chunk;
    });
    child.on("error", reject);
    child.on("close", (code) => {
      const logFile = join(dataDir, "bot.log");
      const log = existsSync(logFile) ? readFileSync(logFile, "utf8") : "";
      rmSync(dataDir, { recursive: true, force: true });
      resolve({ code, stdout, stderr, log });
    });
    child.stdin.end(`${lines.join("\n")}\n`);
  });
}

/** The pictures a console run printed the paths of. */
const picturePaths = (stdout: string) =>
  [...stdout.matchAll(/^Picture: (.+\.png)$/gm)].map((match) => match[1] ?? "");

// The end-to-end tests share nothing (each its own DATA_DIR, simulator and process) and mostly
// wait for their process: they run at once.
describe.concurrent("console end to end", () => {
  it("answers every piped line in order and exits 0 after the last", async ({ expect }) => {
    const sim = await startTestSimulator();
    const f = sim.fixtures;
    await sim.close();
    const { code, stdout } = await runBot([
      "/help",
      `whois ${f.walletEns}`,
      "/top volume 1d 3",
      "!1",
      `/nft ${f.token.contract} ${f.token.tokenId}`,
      "!2",
      "/nft 0x12 1",
      "!9",
      "/nope",
    ]);
    expect(code).toBe(0);
    const replies = stdout.trim().split(/\n\n+/);
    // The simulator's three chains: every command that reads data takes one.
    expect(stdout).toContain("/whois [chain] <name.eth|0x…>");
    expect(stdout).toContain("Chains: ethereum, base, polygon");
    expect(stdout).toMatch(new RegExp(`${f.walletEns}[\\s\\S]*Address: 0x[0-9a-fA-F]{40}`));
    expect(stdout).toMatch(/Top collections by sales volume, last 1 day[\s\S]*Page 1[\s\S]*Page 2/);
    expect(stdout).toMatch(/Raw metadata of #/);
    expect(stdout).toMatch(/"0x12" is not a valid contract address/);
    expect(stdout).toMatch(/There is no button 9/);
    expect(replies.at(-1)).toMatch(/There is no \/nope command/);
  }, 30_000);
});

describe.concurrent("a quiet, friendly console", () => {
  it("names the configured data service, never its key", async ({ expect }) => {
    const sim = await startTestSimulator({ apiKey: "a-secret-key-4b1d" });
    try {
      const { code, stdout, stderr, log } = await runBot(["/top volume 1d 1"], {
        API_BASE_URL: sim.url,
        API_KEY: "a-secret-key-4b1d",
      });
      expect(code).toBe(0);
      expect(stdout).toContain(`data service at ${sim.url}`);
      expect(stdout).toMatch(/Top collections by sales volume/);
      expect(`${stdout}${stderr}${log}`).not.toContain("a-secret-key-4b1d");
    } finally {
      await sim.close();
    }
  }, 30_000);

  it("greets with what it runs against, the missing tokens, the log file and how to leave; then shows only the conversation, and removes its pictures at exit", async ({
    expect,
  }) => {
    const { code, stdout, stderr, log } = await runBot(
      [
        "/whois nosuchname123.eth",
        "/nft 0x0000000000000000000000000000000000000001 1",
        "/nft 0x12 1",
        "/top volume 1d 3",
      ],
      { LOG_LEVEL: "debug" },
    );
    expect(code).toBe(0);
    const greeting = stdout.split(/\n\n+/)[0] ?? "";
    expect(greeting).toMatch(/embedded simulator at http:\/\/127\.0\.0\.1:\d+/);
    expect(greeting).toMatch(
      /^Chains: ethereum, base, polygon \(ethereum unless a command names another/m,
    );
    expect(greeting).toMatch(/DISCORD_TOKEN/);
    expect(greeting).toMatch(/TELEGRAM_BOT_TOKEN/);
    expect(greeting).toMatch(/bot-console-[^\s]*\/bot\.log/);
    expect(greeting).toMatch(/Ctrl\+D/);
    expect(greeting).toMatch(/\/quit/);
    expect(stdout).toMatch(/No ENS name nosuchname123\.eth is registered/);
    expect(stdout).toMatch(/No token 1 in collection 0x0000…0001/);
    expect(stdout).toMatch(/"0x12" is not a valid contract address/);
    for (const output of [stdout, stderr]) {
      expect(output).not.toContain('{"level"');
      expect(output).not.toMatch(/^\s+at /m);
    }
    expect(stderr).toBe("");
    // The log has them, at debug and without a stack.
    const entries = log
      .trim()
      .split("\n")
      .map((line) => JSON.parse(line) as { level: number; kind?: string });
    expect(entries.filter((entry) => entry.kind === "not_found").length).toBeGreaterThan(0);
    expect(entries.filter((entry) => entry.level >= 40)).toEqual([]);
    expect(log).not.toContain("stack");
    const pictures = picturePaths(stdout);
    expect(pictures).toHaveLength(1);
    expect(existsSync(dirname(pictures[0] ?? ""))).toBe(false);
  }, 30_000);

  it("/quit and exit leave at once; the lines after them are not run", async ({ expect }) => {
    const t = await startRuntime();
    try {
      for (const quit of ["/quit", "exit"]) {
        let printed = "";
        const output = new Writable({
          write(chunk, _encoding, callback) {
            printed += String(chunk);
            callback();
          },
        });
        const adapter = new ConsoleAdapter({
          runtime: t.runtime,
          logger: silentLogger(),
          input: Readable.from([`/top volume 1d 1\n${quit}\n/nope\n`]),
          output,
          interactive: false,
        });
        adapter.start();
        await adapter.done;
        await adapter.stop();
        expect(printed, quit).toMatch(/Top collections by sales volume/);
        expect(printed, quit).not.toMatch(/There is no \/nope command/);
      }
    } finally {
      await t.close();
    }
  });

  it("SIGINT and SIGTERM stop it cleanly and remove the pictures", async ({ expect }) => {
    for (const signal of ["SIGINT", "SIGTERM"] as const) {
      const dataDir = mkdtempSync(join(tmpdir(), "bot-console-"));
      const child = spawn(process.execPath, COMPILED_BOT, {
        cwd: ROOT,
        env: cleanEnv({ DATA_DIR: dataDir }),
        stdio: "pipe",
      });
      let stdout = "";
      const pictured = new Promise<void>((resolve) => {
        child.stdout.on("data", (chunk) => {
          stdout += chunk;
          if (picturePaths(stdout).length > 0) resolve();
        });
      });
      const exited = new Promise<number | null>((resolve) => child.on("exit", resolve));
      // stdin stays open: only the signal ends this run.
      child.stdin.write("/top volume 1d 3\n");
      await pictured;
      child.kill(signal);
      const code = await exited;
      rmSync(dataDir, { recursive: true, force: true });
      expect(code, signal).toBe(0);
      expect(existsSync(dirname(picturePaths(stdout)[0] ?? "")), signal).toBe(false);
    }
  }, 30_000);
});
