import { execFileSync, spawn } from "node:child_process";
import { existsSync, mkdtempSync, readdirSync, readFileSync, rmSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { basename, dirname, isAbsolute, join } from "node:path";
import { PassThrough, Readable, Writable } from "node:stream";
import { afterEach, describe, expect, it } from "vitest";
import { breakdownReply } from "../commands/audience.ts";
import { nftReply } from "../commands/nft.ts";
import { topReply } from "../commands/top.ts";
import { ExportFolder, safeFileName } from "../src/adapters/console/exports.ts";
import { ConsoleAdapter } from "../src/adapters/console/index.ts";
import { alertReply } from "../src/alerts/message.ts";
import { type Chain, parseChains } from "../src/chains.ts";
import type { RenderableReply } from "../src/core/reply.ts";
import { silentLogger } from "../src/log.ts";
import { renderConsole } from "../src/render/console.ts";
import { COMPILED_BOT, ROOT } from "./compiled.ts";
import { type RuntimeSetup, startRuntime } from "./helpers.ts";
import { startTestSimulator } from "./test-simulator.ts";
import { canMountTmpfs } from "./tmpfs.ts";

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
  /** The files DATA_DIR/exports held when the bot had exited, by absolute path. */
  exported: string[];
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
      const exports = join(dataDir, "exports");
      const exported = existsSync(exports)
        ? readdirSync(exports).map((name) => join(exports, name))
        : [];
      rmSync(dataDir, { recursive: true, force: true });
      resolve({ code, stdout, stderr, log, exported });
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
    // Button numbers go on from reply to reply: /top's Next is !1, page 2's are !2 and !3, the
    // NFT's Report spam and Raw metadata !4 and !5.
    const { code, stdout } = await runBot([
      "/help",
      `whois ${f.walletEns}`,
      "/top volume 1d 3",
      "!1",
      `/nft ${f.token.contract} ${f.token.tokenId}`,
      "!5",
      "/nft 0x12 1",
      "!99",
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
    expect(stdout).toMatch(/\[!4 Report spam\] {2}\[!5 Raw metadata\]/);
    expect(stdout).toMatch(/There is no button 99 on screen/);
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

  it("greets with what it runs against, the missing tokens, the log file and how to leave; then shows only the conversation, and keeps its pictures in DATA_DIR/exports", async ({
    expect,
  }) => {
    const { code, stdout, stderr, log, exported } = await runBot(
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
    // With no settings the HTTP host is on a loopback port of its own, and the greeting names it.
    expect(greeting).toMatch(/^Wallets: \/verify .*\(http:\/\/127\.0\.0\.1:[1-9]\d*\/verify\/…\)/m);
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
    expect(exported).toEqual(pictures);
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
          exportDir: join(t.dataDir, "exports"),
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

  it("SIGINT and SIGTERM stop it cleanly and keep the pictures", async ({ expect }) => {
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
      const picture = picturePaths(stdout)[0] ?? "";
      const kept = existsSync(picture);
      rmSync(dataDir, { recursive: true, force: true });
      expect(code, signal).toBe(0);
      expect(dirname(picture), signal).toBe(join(dataDir, "exports"));
      expect(kept, signal).toBe(true);
    }
  }, 30_000);
});

/** What a console printed, and a way to wait until it prints something. */
function screen(tty = false, columns = 80) {
  let printed = "";
  let wake: () => void = () => {};
  const output = new Writable({
    write(chunk, _encoding, callback) {
      printed += String(chunk);
      wake();
      callback();
    },
  });
  // A terminal as readline sees one: a stream that says it is a TTY, and its width.
  if (tty) Object.assign(output, { isTTY: true, columns, rows: 24 });
  return {
    output,
    get printed() {
      return printed;
    },
    /** Resolves once what was printed after `from` characters matches, as a person reads it. */
    async until(pattern: RegExp, from = 0): Promise<string> {
      while (!pattern.test(visible(printed.slice(from))))
        await new Promise<void>((resolve) => {
          wake = resolve;
        });
      return printed.slice(from);
    },
  };
}

/** The terminal's colour and cursor sequences taken out: what a person reads. */
const visible = (text: string) => text.replace(/\u001b\[[0-9;]*[A-Za-z]/g, "");

/**
 * What a terminal `columns` wide would show for this output: text that wraps at the edge, and
 * the cursor moves and clears readline writes (ESC [ n A/B/C/D/G, ESC [ J/K). The last row is
 * the cursor's.
 */
function terminalScreen(output: string, columns: number): { rows: string[]; cursor: number[] } {
  const rows: string[][] = [[]];
  let row = 0;
  let column = 0;
  const lineOf = (at: number) => {
    while (rows.length <= at) rows.push([]);
    return rows[at] as string[];
  };
  for (const [, sequence, count, command, char] of output.matchAll(
    /(\u001b\[(\d*)([A-Za-z]))|([\s\S])/g,
  )) {
    const n = count ? Number(count) : 1;
    if (sequence && command === "A") row = Math.max(0, row - n);
    else if (sequence && command === "B") row += n;
    else if (sequence && command === "C") column += n;
    else if (sequence && command === "D") column = Math.max(0, column - n);
    else if (sequence && command === "G") column = n - 1;
    else if (sequence && command === "J") {
      lineOf(row).length = Math.min(lineOf(row).length, column);
      rows.length = row + 1;
    } else if (sequence && command === "K")
      lineOf(row).length = Math.min(lineOf(row).length, column);
    else if (char === "\n") {
      row++;
      column = 0;
    } else if (char === "\r") column = 0;
    else if (char !== undefined) {
      if (column >= columns) {
        row++;
        column = 0;
      }
      const line = lineOf(row);
      while (line.length < column) line.push(" ");
      line[column++] = char;
    }
  }
  lineOf(row);
  return { rows: rows.slice(0, row + 1).map((line) => line.join("")), cursor: [row, column] };
}

const cleanups: (() => Promise<void> | void)[] = [];
afterEach(async () => {
  for (const cleanup of cleanups.splice(0).reverse()) await cleanup();
});

/** A console chat on a test runtime, its exports in a fresh DATA_DIR/exports. */
async function consoleChat(
  options: { tty?: boolean; columns?: number; exportDir?: string } = {},
): Promise<{
  t: RuntimeSetup;
  adapter: ConsoleAdapter;
  shown: ReturnType<typeof screen>;
  input: PassThrough;
  exportDir: string;
}> {
  const t = await startRuntime();
  const dataDir = mkdtempSync(join(tmpdir(), "bot-console-"));
  const exportDir = options.exportDir ?? join(dataDir, "exports");
  const shown = screen(options.tty, options.columns);
  const input = new PassThrough();
  const adapter = new ConsoleAdapter({
    runtime: t.runtime,
    logger: silentLogger(),
    input,
    output: shown.output,
    interactive: options.tty ?? false,
    exportDir,
  });
  cleanups.push(async () => {
    await adapter.stop();
    await t.close();
    rmSync(dataDir, { recursive: true, force: true });
  });
  return { t, adapter, shown, input, exportDir };
}

/** The replies the runtime gave the console, as it gave them (files and pictures included). */
function keepReplies(t: RuntimeSetup): RenderableReply[] {
  const replies: RenderableReply[] = [];
  const { runtime } = t;
  const answerText = runtime.answerText.bind(runtime);
  const answerButton = runtime.answerButton.bind(runtime);
  runtime.answerText = async (...args) => {
    const answered = await answerText(...args);
    replies.push(answered.reply);
    return answered;
  };
  runtime.answerButton = async (...args) => {
    const answered = await answerButton(...args);
    replies.push(answered.reply);
    return answered;
  };
  return replies;
}

/** The number printed on the button with this label, the last time it was printed. */
function buttonNumber(printed: string, label: string): string {
  const numbers = [...printed.matchAll(/\[!(\d+) ([^\]]+)\]/g)].filter(
    (match) => match[2] === label,
  );
  const number = numbers.at(-1)?.[1];
  if (!number) throw new Error(`no button "${label}" in:\n${printed}`);
  return number;
}

describe("files the console saves", () => {
  it("a CSV export is written under DATA_DIR/exports, at the absolute path it prints, with the reply's bytes", async () => {
    const { t, adapter, shown, exportDir } = await consoleChat();
    const replies = keepReplies(t);
    await adapter.handleLine(`/segment ${t.sim.fixtures.collection}`);
    await adapter.handleLine(`!${buttonNumber(shown.printed, "Export CSV")}`);
    const sent = replies.at(-1)?.files?.[0];
    expect(sent?.name).toMatch(/\.csv$/);
    const path = /^File: (.+\.csv) \((\d+) bytes\)$/m.exec(shown.printed);
    expect(path?.[1]).toBeDefined();
    const printedPath = path?.[1] ?? "";
    // One timestamp in the name: the time it was saved, the command's own date replaced.
    expect(basename(printedPath)).toMatch(/^segment-0x[0-9a-f]{8}-\d{8}-\d{6}\.csv$/);
    expect(isAbsolute(printedPath)).toBe(true);
    expect(dirname(printedPath)).toBe(exportDir);
    expect(readFileSync(printedPath)).toEqual(Buffer.from(sent?.data ?? []));
    expect(Number(path?.[2])).toBe(sent?.data.byteLength);
  });

  it("two /top give two pictures, each kept with its own bytes; stopping the chat removes neither", async () => {
    const { t, adapter, shown, exportDir } = await consoleChat();
    const replies = keepReplies(t);
    await adapter.handleLine("/top volume 1d 3");
    await adapter.handleLine("/top sales 7d 3");
    const paths = picturePaths(shown.printed);
    expect(paths).toHaveLength(2);
    expect(new Set(paths).size).toBe(2);
    for (const [i, path] of paths.entries()) {
      expect(dirname(path)).toBe(exportDir);
      const image = replies[i]?.image;
      expect(image?.kind).toBe("png");
      expect(readFileSync(path)).toEqual(Buffer.from(image?.kind === "png" ? image.data : []));
    }
    await adapter.stop();
    for (const path of paths) expect(existsSync(path)).toBe(true);
  });

  it("the same /top twice in one second still gives two files (names never collide)", async () => {
    const { adapter, shown, exportDir } = await consoleChat();
    await Promise.all([
      adapter.handleLine("/top volume 1d 3"),
      adapter.handleLine("/top volume 1d 3"),
    ]);
    expect(new Set(picturePaths(shown.printed)).size).toBe(2);
    expect(readdirSync(exportDir)).toHaveLength(2);
  });

  it("an exports folder it cannot write says so in one line, prints the answer, and the chat goes on", async () => {
    const dataDir = mkdtempSync(join(tmpdir(), "bot-console-"));
    cleanups.push(() => rmSync(dataDir, { recursive: true, force: true }));
    // A file where the folder should be: no folder can be made there (root may write anywhere).
    writeFileSync(join(dataDir, "exports"), "");
    const { adapter, shown } = await consoleChat({ exportDir: join(dataDir, "exports") });
    await adapter.handleLine("/top volume 1d 3");
    expect(shown.printed).toMatch(/Top collections by sales volume/);
    const said = shown.printed.split("\n").filter((line) => /not saved/.test(line));
    expect(said).toHaveLength(1);
    expect(said[0]).toMatch(/^Picture not saved: .*exports.*\((ENOTDIR|EEXIST)\)/);
    expect(shown.printed).not.toMatch(/^\s+at /m);
    await adapter.handleLine("/top volume 1d 1");
    expect(shown.printed.match(/Top collections by sales volume/g)).toHaveLength(2);
  });

  it.skipIf(!canMountTmpfs())(
    "a full disk (a small tmpfs) says so in one line, leaves no half file, and the chat goes on",
    async () => {
      const disk = mkdtempSync(join(tmpdir(), "bot-tmpfs-"));
      // Room for the folder, not for a chart.
      execFileSync("mount", ["-t", "tmpfs", "-o", "size=4k", "tmpfs", disk]);
      cleanups.push(() => {
        execFileSync("umount", ["-l", disk]);
        rmSync(disk, { recursive: true, force: true });
      });
      const { adapter, shown } = await consoleChat({ exportDir: join(disk, "exports") });
      await adapter.handleLine("/top volume 1d 3");
      expect(shown.printed).toMatch(/Top collections by sales volume/);
      expect(shown.printed).toMatch(/^Picture not saved: the disk is full \(no room under .+\)$/m);
      expect(readdirSync(join(disk, "exports"))).toEqual([]);
    },
  );

  it("a saved file's name carries one timestamp: a date the name has is replaced, not repeated", async () => {
    const dir = mkdtempSync(join(tmpdir(), "exports-"));
    const folder = new ExportFolder(dir, () => new Date("2026-11-28T02:59:50.123Z"));
    const saved = async (name: string) => {
      const where = await folder.save(name, new Uint8Array([1]));
      return "path" in where ? basename(where.path) : where.problem;
    };
    expect(await saved("segment-0xbc4ca0ed-2026-11-28.csv")).toBe(
      "segment-0xbc4ca0ed-20261128-025950.csv",
    );
    expect(await saved("segment-0xbc4ca0ed-0x60e4d786-2026-11-27.csv")).toBe(
      "segment-0xbc4ca0ed-0x60e4d786-20261128-025950.csv",
    );
    expect(await saved("gate-1-log.csv")).toBe("gate-1-log-20261128-025950.csv");
    // Digits alone are no date: a token id stays.
    expect(await saved("metadata-0xBC4C-f13D-20261128.json")).toBe(
      "metadata-0xBC4C-f13D-20261128-20261128-025950.json",
    );
    // The same name in the same second still gets a file of its own.
    expect(await saved("segment-0xbc4ca0ed-2026-11-28.csv")).toBe(
      "segment-0xbc4ca0ed-20261128-025950-2.csv",
    );
    rmSync(dir, { recursive: true, force: true });
  });

  it("a file name from upstream data cannot leave the folder or carry control characters", () => {
    for (const hostile of [
      "../../etc/passwd",
      "..",
      ".",
      "",
      "a/../../b.csv",
      "C:\\Windows\\x.png",
      "nul\u0000byte.csv",
      "bell\u0007\u001b[2Jclear\u202e.csv",
      `${"x".repeat(10_000)}.csv`,
      ".hidden",
    ]) {
      const name = safeFileName(hostile);
      expect(name, hostile).toMatch(/^[A-Za-z0-9][A-Za-z0-9._-]*$/);
      expect(name, hostile).not.toContain("..");
      expect(name.length, hostile).toBeLessThanOrEqual(100);
    }
    expect(safeFileName("segment-0xbc4ca0ed-2026-11-25.csv")).toBe(
      "segment-0xbc4ca0ed-2026-11-25.csv",
    );
    expect(safeFileName(`${"x".repeat(10_000)}.csv`)).toMatch(/\.csv$/);
  });
});

describe("buttons and alerts at the console", () => {
  const alertFor = async (t: RuntimeSetup) =>
    t.runtime.materialize(
      alertReply(
        {
          address: "0x00000000000000000000000000000000000a1e47",
          name: "Fresh Mint",
          types: ["TYPE_ERC721"],
          minter: undefined,
          mintedAt: "2026-11-22T12:00:00Z",
          txHash: undefined,
        },
        null,
        t.chains[0] as Chain,
        now,
      ),
      { platform: "console", chat: { id: "console", kind: "private" } },
    );

  it("an alert between an answer and the press does not change what !N presses", async () => {
    const { t, adapter, shown } = await consoleChat();
    await adapter.handleLine("/top volume 1d 3");
    const next = buttonNumber(shown.printed, "Next ▶");
    const alert = await alertFor(t);
    expect(alert.buttons?.length).toBeGreaterThan(0);
    await adapter.sendToChat("console", alert);
    const before = shown.printed.length;
    await adapter.handleLine(`!${next}`);
    expect(shown.printed.slice(before)).toMatch(/Top collections by sales volume[\s\S]*Page 2/);
    // The alert's own buttons got numbers of their own, after the answer's.
    const alertButton = buttonNumber(
      shown.printed.slice(0, before),
      alert.buttons?.[0]?.label ?? "",
    );
    expect(Number(alertButton)).toBeGreaterThan(Number(next));
  });

  it("a number never printed, or too old to be kept, is refused with a clear message", async () => {
    const { adapter, shown } = await consoleChat();
    await adapter.handleLine("/top volume 1d 3");
    const first = buttonNumber(shown.printed, "Next ▶");
    await adapter.handleLine("!999");
    expect(shown.printed).toMatch(/^! There is no button 999 on screen/m);
    // A hundred more answers with buttons: the first answer's buttons are forgotten.
    for (let i = 0; i < 100; i++) await adapter.handleLine("/top volume 1d 1");
    await adapter.handleLine(`!${first}`);
    expect(shown.printed).toMatch(new RegExp(`^! Button ${first} is too old`, "m"));
  }, 60_000);

  it("on a terminal, an alert is printed above the prompt, which is drawn again with what was typed", async () => {
    const { t, adapter, shown, input } = await consoleChat({ tty: true });
    await adapter.start();
    await shown.until(/> $/);
    input.write("/top vol");
    await shown.until(/\/top vol$/);
    const before = shown.printed.length;
    await adapter.sendToChat("console", await alertFor(t));
    const after = visible(shown.printed.slice(before));
    expect(after).toMatch(/New collection[\s\S]*Fresh Mint[\s\S]*\n> \/top vol$/);
    // The line typed is still the line being typed: finishing it runs the whole command.
    input.write("ume 1d 1\r");
    await shown.until(/Top collections by sales volume, last 1 day[\s\S]*> $/, before);
  });

  it("on a narrow terminal, a typed line that wraps is drawn once under each alert, the cursor where it was", async () => {
    const { adapter, shown, input } = await consoleChat({ tty: true, columns: 20 });
    await adapter.start();
    await shown.until(/> $/);
    const typed = "/top volume 1d 3 and more words";
    input.write(typed);
    await shown.until(/words$/);
    // Two steps left: the cursor is inside the typed line, on its second row.
    input.write("\u001b[D\u001b[D");
    const typing = terminalScreen(shown.printed, 20);
    expect(typing.rows.slice(-2)).toEqual([`> ${typed}`.slice(0, 20), `> ${typed}`.slice(20)]);
    const cursorColumn = typing.cursor[1];
    for (const title of ["First alert", "Second alert"])
      await adapter.sendToChat("console", { title, footer: "New-collection alert" });
    const { rows, cursor } = terminalScreen(shown.printed, 20);
    expect(rows.slice(-6)).toEqual([
      "[alert] Second alert",
      "— New-collection ale",
      "rt",
      "",
      `> ${typed}`.slice(0, 20),
      `> ${typed}`.slice(20),
    ]);
    expect(rows.filter((row) => row.startsWith("> /top")).length).toBe(1);
    expect(rows[0]).toBe("[alert] First alert");
    expect(cursor).toEqual([rows.length - 1, cursorColumn]);
  });
});
