import { spawn } from "node:child_process";
import { mkdtempSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { describe, expect, it } from "vitest";
import { breakdownReply } from "../commands/audience.ts";
import { nftReply } from "../commands/nft.ts";
import { topReply } from "../commands/top.ts";
import type { RenderableReply } from "../src/core/reply.ts";
import { renderConsole } from "../src/render/console.ts";
import { startSimulator } from "../src/simulator/index.ts";

const now = new Date("2026-11-22T12:00:00Z");
const plain = (reply: RenderableReply) => renderConsole(reply).text;
const withIds = (reply: ReturnType<typeof breakdownReply>): RenderableReply => ({
  ...reply,
  buttons: reply.buttons?.map((button, i) => ({ label: button.label, id: `id${i}` })),
});

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
      "https://etherscan.io",
    );
    await expect(plain(withIds(reply))).toMatchFileSnapshot("golden/nft.txt");
  });
});

/** Runs the bot exactly as `npm start` does, with piped stdin, and collects what it prints. */
function runBot(lines: string[]): Promise<{ code: number | null; stdout: string; stderr: string }> {
  return new Promise((resolve, reject) => {
    const env: Record<string, string> = {};
    for (const key of ["PATH", "HOME", "TMPDIR", "SystemRoot"])
      if (process.env[key]) env[key] = process.env[key];
    const dataDir = mkdtempSync(join(tmpdir(), "bot-console-"));
    const child = spawn("npm", ["start", "--silent"], {
      env: { ...env, SIMULATOR_MINT_INTERVAL_MS: "0", DATA_DIR: dataDir },
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
      rmSync(dataDir, { recursive: true, force: true });
      resolve({ code, stdout, stderr });
    });
    child.stdin.end(`${lines.join("\n")}\n`);
  });
}

describe("console end to end", () => {
  it("answers every piped line in order and exits 0 after the last", async () => {
    const sim = await startSimulator();
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
    expect(stdout).toContain("/whois <name.eth|0x…>");
    expect(stdout).toMatch(new RegExp(`${f.walletEns}[\\s\\S]*Address: 0x[0-9a-fA-F]{40}`));
    expect(stdout).toMatch(/Top collections by sales volume, last 1 day[\s\S]*Page 1[\s\S]*Page 2/);
    expect(stdout).toMatch(/Raw metadata of #/);
    expect(stdout).toMatch(/"0x12" is not a valid contract address/);
    expect(stdout).toMatch(/There is no button 9/);
    expect(replies.at(-1)).toMatch(/There is no \/nope command/);
  }, 30_000);
});
