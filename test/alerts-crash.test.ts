import { type ChildProcess, spawn } from "node:child_process";
import { mkdtempSync, rmSync } from "node:fs";
import { createServer, request as httpRequest } from "node:http";
import type { AddressInfo } from "node:net";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { describe, it, type TestContext } from "vitest";
import { SqlSubscriptionStore } from "../src/alerts/store/subscriptions.ts";
import { NFT_CONTRACT_TYPES } from "../src/api/schemas.ts";
import type { Simulator } from "../src/simulator/index.ts";
import { mulberry32 } from "../src/simulator/random.ts";
import { type Db, openDatabase } from "../src/store/sqlite/index.ts";
import { sqliteSql } from "../src/store/sqlite/query.ts";
import { COMPILED_BOT, ROOT } from "./compiled.ts";
import { type FakeDiscord, startFakeDiscord } from "./fakes/discord/index.ts";
import { type FakeTelegram, startFakeTelegram } from "./fakes/telegram/index.ts";
import { startTestSimulator } from "./test-simulator.ts";

/**
 * Crash safety of alert delivery, end to end: the bot runs as a child process exactly as
 * `npm start` runs it (`node --max-semi-space-size=4 --max-old-space-size=256 dist/main.js`, environment built from
 * scratch), the simulator mints from this process, fake Telegram and Discord servers receive, and
 * the child is SIGKILLed while it fans alerts out, then restarted on the same DATA_DIR. Every
 * (channel, contract) pair must be delivered, and a kill may cost at most one duplicate message.
 *
 * 1. Ten kills at random moments (0-400 ms after an incarnation's first accepted send).
 * 2. One kill at the worst moment, with a 150 ms Telegram round trip: every send in flight was
 *    accepted and is sent again. Fails on the current DeliveryWorker, which has up to
 *    DELIVERY_CONCURRENCY (16) channels in flight, so a kill can cost up to 16 duplicates.
 * 3. Two processes on one DATA_DIR (a deploy overlap): the lease stops the second from polling,
 *    but nothing stops both from draining the outbox. Fails on the current DeliveryWorker: every
 *    alert is sent twice.
 *
 * CRASH_SEED=<n> replays the kill timing of a failed run (the seed is in every failure message);
 * CRASH_VERBOSE=1 prints the full report of a passing run too.
 */

const POLL_INTERVAL_S = 1;

const sleep = (ms: number) => new Promise((resolve) => setTimeout(resolve, ms));

/** Polls `condition`; `what` may be a function, evaluated on failure (e.g. the bot's log). */
async function waitUntil(
  what: string | (() => string),
  condition: () => boolean,
  timeoutMs: number,
): Promise<void> {
  const deadline = Date.now() + timeoutMs;
  while (!condition()) {
    if (Date.now() > deadline) {
      const description = typeof what === "string" ? what : what();
      throw new Error(`timed out after ${timeoutMs} ms waiting for ${description}`);
    }
    await sleep(20);
  }
}

interface Incarnation {
  index: number;
  child: ChildProcess;
  startedAt: number;
  killedAt: number | undefined;
  output: string[];
  exited: Promise<void>;
}

/** Starts the compiled bot as `npm start` does (in-process, so SIGKILL reaches the bot itself). */
function startBot(index: number, settings: Record<string, string>): Incarnation {
  const env: Record<string, string> = {};
  for (const key of ["PATH", "HOME"]) {
    const value = process.env[key];
    if (value !== undefined) env[key] = value;
  }
  const child = spawn(process.execPath, COMPILED_BOT, {
    cwd: ROOT,
    env: { ...env, ...settings },
    stdio: ["ignore", "pipe", "pipe"],
  });
  const output: string[] = [];
  // The log goes to stdout (pino); stderr gets what Node itself prints.
  child.stdout?.on("data", (chunk: Buffer) => output.push(String(chunk)));
  child.stderr?.on("data", (chunk: Buffer) => output.push(String(chunk)));
  const exited = new Promise<void>((resolve) => {
    if (child.exitCode !== null || child.signalCode !== null) resolve();
    else child.once("exit", () => resolve());
  });
  return { index, child, startedAt: Date.now(), killedAt: undefined, output, exited };
}

/** SIGKILL, synchronously (so a test can kill at an exact moment). */
function killNow(incarnation: Incarnation): void {
  const { child } = incarnation;
  if (child.exitCode !== null || child.signalCode !== null) return;
  incarnation.killedAt = Date.now();
  child.kill("SIGKILL");
}

async function killHard(incarnation: Incarnation | undefined): Promise<void> {
  if (!incarnation) return;
  killNow(incarnation);
  await incarnation.exited;
}

/** The contract an alert is about: its "Address" line (Telegram) or field (Discord). */
function telegramAlertAddress(text: unknown): string | undefined {
  const match = /<b>Address<\/b>: (0x[0-9a-fA-F]{40})/.exec(String(text));
  return match?.[1]?.toLowerCase();
}

function discordAlertAddress(body: unknown): string | undefined {
  const embeds = (body as { embeds?: { fields?: { name: string; value: string }[] }[] })?.embeds;
  const value = embeds?.[0]?.fields?.find((field) => field.name === "Address")?.value;
  return value && /^0x[0-9a-fA-F]{40}$/.test(value) ? value.toLowerCase() : undefined;
}

/**
 * A reverse proxy that holds every response for `delayMs`: a platform across a real network,
 * where a request can be accepted while its answer is still on the way back. `delayMs` may be
 * changed while it runs (it applies to the answers that arrive from then on).
 */
async function startSlowProxy(target: string, initialDelayMs: number) {
  let delayMs = initialDelayMs;
  const server = createServer((req, res) => {
    const upstream = httpRequest(
      `${target}${req.url ?? "/"}`,
      { method: req.method, headers: req.headers },
      (answer) => {
        const chunks: Buffer[] = [];
        answer.on("data", (chunk: Buffer) => chunks.push(chunk));
        answer.on("end", () => {
          setTimeout(() => {
            if (res.destroyed) return;
            res.writeHead(answer.statusCode ?? 502, answer.headers);
            res.end(Buffer.concat(chunks));
          }, delayMs);
        });
      },
    );
    upstream.on("error", () => res.destroy());
    req.pipe(upstream);
  });
  await new Promise<void>((resolve) => server.listen(0, "127.0.0.1", resolve));
  return {
    url: `http://127.0.0.1:${(server.address() as AddressInfo).port}`,
    setDelay: (ms: number) => {
      delayMs = ms;
    },
    close: () =>
      new Promise<void>((resolve) => {
        server.closeAllConnections();
        server.close(() => resolve());
      }),
  };
}

const count = (db: Db, sql: string) => (db.prepare(sql).get() as { n: number }).n;

interface Channel {
  platform: "telegram" | "discord";
  chatId: string;
}

interface AcceptedSend {
  key: string | undefined;
  raw: string;
  at: number;
}

/**
 * The simulator, both fakes, a temp DATA_DIR with the subscriptions, and the bot's settings; all
 * of it, and every process started, is closed when the test finishes.
 */
async function startWorld(
  onTestFinished: TestContext["onTestFinished"],
  telegramChats: number,
  discordChannels: number,
  options: { telegramRoundTripMs?: number } = {},
) {
  const dataDir = mkdtempSync(join(tmpdir(), "alerts-crash-"));
  const parts: {
    sim?: Simulator;
    tg?: FakeTelegram;
    dc?: FakeDiscord;
    db?: Db;
    sampler?: NodeJS.Timeout;
    proxy?: Awaited<ReturnType<typeof startSlowProxy>> | undefined;
  } = {};
  const incarnations: Incarnation[] = [];
  onTestFinished(async () => {
    clearInterval(parts.sampler);
    for (const incarnation of incarnations) await killHard(incarnation);
    parts.db?.close();
    await parts.proxy?.close();
    await parts.tg?.close();
    await parts.dc?.close();
    await parts.sim?.close();
    rmSync(dataDir, { recursive: true, force: true });
  });
  const sim = await startTestSimulator({ mintIntervalMs: 0, apiKey: "crash-test-key" });
  parts.sim = sim;
  const tg = await startFakeTelegram();
  parts.tg = tg;
  const dc = await startFakeDiscord();
  parts.dc = dc;
  const proxy =
    options.telegramRoundTripMs === undefined
      ? undefined
      : await startSlowProxy(tg.apiRoot, options.telegramRoundTripMs);
  parts.proxy = proxy;

  // Subscriptions go straight into the store before the first start.
  const db = openDatabase(dataDir);
  parts.db = db;
  const subscriptions = new SqlSubscriptionStore(sqliteSql(db));
  const channels: Channel[] = [];
  for (let i = 0; i < telegramChats; i++)
    channels.push({ platform: "telegram", chatId: String(7_000_001 + i) });
  for (let i = 0; i < discordChannels; i++)
    channels.push({ platform: "discord", chatId: dc.addChannel({ name: `alerts-${i}` }).id });
  for (const channel of channels)
    await subscriptions.upsert({
      ...channel,
      chain: "ethereum",
      types: "all",
      createdBy: "crash-test",
      now: Date.now(),
    });

  const settings: Record<string, string> = {
    API_BASE_URL: sim.url,
    API_KEY: sim.apiKey,
    DATA_DIR: dataDir,
    POLL_INTERVAL_S: String(POLL_INTERVAL_S),
    DELIVERY_TICK_MS: "50",
    ALERT_DIGEST_THRESHOLD: "1000",
    LOG_LEVEL: "warn",
    TELEGRAM_BOT_TOKEN: tg.token,
    TELEGRAM_API_ROOT: proxy?.url ?? tg.apiRoot,
    DISCORD_TOKEN: dc.token,
    DISCORD_API_URL: dc.apiBase,
  };

  /**
   * Discord messages actually posted: a create repeated with the same enforced nonce returns the
   * message already posted (same id), which members do not see twice.
   */
  const discordPosted = () => {
    const seen = new Set<string>();
    return dc
      .requestsOf("createMessage", (r) => r.status >= 200 && r.status < 300)
      .filter((request) => {
        const id = String(
          (request.response as { id?: unknown } | undefined)?.id ?? `request-${request.seq}`,
        );
        if (seen.has(id)) return false;
        seen.add(id);
        return true;
      });
  };

  /** Every send a platform accepted, keyed platform:chat:contract. */
  const accepted = (): AcceptedSend[] => [
    ...tg.sent
      .filter((call) => call.method === "sendMessage" && call.ok)
      .map((call) => {
        const address = telegramAlertAddress(call.params.text);
        return {
          key: address && `telegram:${String(call.params.chat_id)}:${address}`,
          raw: String(call.params.text),
          at: call.at,
        };
      }),
    ...discordPosted().map((request) => {
      const address = discordAlertAddress(request.body);
      return {
        key: address && `discord:${request.params.channelId}:${address}`,
        raw: JSON.stringify(request.body),
        at: request.at,
      };
    }),
  ];
  const acceptedCount = () =>
    tg.sent.filter((call) => call.method === "sendMessage" && call.ok).length +
    discordPosted().length;

  const minted: string[] = [];
  const mint = (n: number) => {
    for (const contract of sim.mint(n)) {
      if (contract.types.some((type) => (NFT_CONTRACT_TYPES as readonly string[]).includes(type)))
        minted.push(contract.address.toLowerCase());
    }
  };
  /** Mints until `n` NFT contracts are among them (the fungible ones minted too are never alerted). */
  const mintNfts = (n: number) => {
    const target = minted.length + n;
    while (minted.length < target) mint(1);
  };

  const restart = () => {
    const incarnation = startBot(incarnations.length + 1, settings);
    incarnations.push(incarnation);
    return incarnation;
  };

  // Who holds the poller's lease, sampled: how long each restarted process waited for it.
  const leaseTaken = new Map<string, number>();
  const leaseHolder = db.prepare<[], { holder: string }>(
    "SELECT holder FROM leases WHERE name = 'new-contract-poller:ethereum'",
  );
  parts.sampler = setInterval(() => {
    const holder = leaseHolder.get()?.holder;
    if (holder !== undefined && !leaseTaken.has(holder)) leaseTaken.set(holder, Date.now());
  }, 25);
  const leaseWaits = () =>
    incarnations.map((incarnation) => {
      const entry = [...leaseTaken].find(([holder]) =>
        holder.includes(`:${incarnation.child.pid}:`),
      );
      return entry ? entry[1] - incarnation.startedAt : null;
    });

  /** Waits until everything minted was seen, the outbox is empty and every pair is logged. */
  const drained = (what: string | (() => string), timeoutMs: number) =>
    waitUntil(
      what,
      () =>
        count(db, "SELECT COUNT(*) AS n FROM seen_contracts") >= minted.length &&
        count(db, "SELECT COUNT(*) AS n FROM outbox") === 0 &&
        count(db, "SELECT COUNT(*) AS n FROM deliveries") >= channels.length * minted.length,
      timeoutMs,
    );

  /**
   * Lost pairs, duplicates, and which kill each duplicate is owed to: the incarnation that had
   * the earlier copy accepted (it died before marking it delivered).
   */
  const tally = () => {
    const sends = accepted().sort((a, b) => a.at - b.at);
    const malformed = sends
      .filter((send) => send.key === undefined)
      .map((s) => s.raw.slice(0, 120));
    const byKey = new Map<string, number[]>();
    for (const send of sends) {
      if (send.key === undefined) continue;
      byKey.set(send.key, [...(byKey.get(send.key) ?? []), send.at]);
    }
    const expected = channels.flatMap((c) => minted.map((a) => `${c.platform}:${c.chatId}:${a}`));
    const expectedSet = new Set(expected);
    const lost = expected.filter((key) => !byKey.has(key));
    const unexpected = [...byKey.keys()].filter((key) => !expectedSet.has(key));
    const owedTo = (at: number) =>
      [...incarnations].reverse().find((incarnation) => incarnation.startedAt <= at);
    const perKill = new Map<number, number>();
    const duplicated: string[] = [];
    let duplicates = 0;
    for (const [key, times] of byKey) {
      if (times.length < 2) continue;
      duplicates += times.length - 1;
      duplicated.push(`${key} ×${times.length}`);
      for (const at of times.slice(0, -1)) {
        const incarnation = owedTo(at)?.index ?? 0;
        perKill.set(incarnation, (perKill.get(incarnation) ?? 0) + 1);
      }
    }
    const killed = incarnations.filter((incarnation) => incarnation.killedAt !== undefined);
    const worstKill = Math.max(0, ...perKill.values());
    const owedToNoKill = [...perKill]
      .filter(([index]) => !killed.some((incarnation) => incarnation.index === index))
      .reduce((sum, [, n]) => sum + n, 0);
    return {
      expected: expected.length,
      lost,
      unexpected,
      malformed,
      duplicates,
      duplicated,
      perKill: Object.fromEntries(perKill),
      worstKill,
      owedToNoKill,
      delivered: count(db, "SELECT COUNT(*) AS n FROM deliveries"),
    };
  };

  const log = (lines = 20) =>
    incarnations
      .flatMap((incarnation) => incarnation.output.map((line) => `[#${incarnation.index}] ${line}`))
      .slice(-lines)
      .join("");

  return {
    sim,
    tg,
    dc,
    db,
    proxy,
    channels,
    minted,
    mint,
    mintNfts,
    restart,
    incarnations,
    accepted,
    acceptedCount,
    leaseWaits,
    drained,
    tally,
    log,
  };
}

// The three tests share nothing (each its own simulator, fakes, DATA_DIR and processes) and
// mostly wait on their children: they run at once.
describe.concurrent("alert delivery survives SIGKILL", () => {
  it("delivers every (channel, contract) pair across 10 random SIGKILLs, no more duplicates than kills", async ({
    expect,
    onTestFinished,
  }) => {
    const KILLS = 10;
    /** A kill lands this long (uniformly random) after the incarnation's first accepted send. */
    const KILL_WINDOW_MS = 400;
    /**
     * NFT contracts minted per burst (with the fungible ones the simulator mints between them,
     * which are never alerted), and when. Two make 60 sends, more than an incarnation delivers
     * between its first send and its kill (some 10 to 30 in up to 400 ms), so each kill lands in
     * a fan-out; what is left when the last process starts is sent at some 20 a second (Telegram
     * one at a time), so larger bursts only lengthen the drain.
     */
    const BURST = 2;
    const BURST_BEFORE_KILL = new Set([1, 4, 7]);

    const seed = Number(process.env.CRASH_SEED ?? Math.floor(Math.random() * 2 ** 31));
    const random = mulberry32(seed);
    const started = Date.now();
    const world = await startWorld(onTestFinished, 20, 10);
    const { db } = world;

    // First start: the poller sets its cursor to "now"; mint only after that.
    world.restart();
    await waitUntil(
      "the first poll to set the cursor",
      () => count(db, "SELECT COUNT(*) AS n FROM kv WHERE key = 'poll_cursor:ethereum'") > 0,
      20_000,
    );

    const kills: { incarnation: number; delayMs: number; sent: number; outboxAfter: number }[] = [];
    for (let kill = 1; kill <= KILLS; kill++) {
      const incarnation = world.incarnations.at(-1) as Incarnation;
      // A burst at fixed kills (so some kills land around a poll), and whenever the backlog
      // runs low, so that every incarnation has a fan-out to be killed in (40 sends outlast the
      // kill window, in which 10 to 30 go out).
      const backlog = count(db, "SELECT COUNT(*) AS n FROM outbox");
      const allSeen = count(db, "SELECT COUNT(*) AS n FROM seen_contracts") >= world.minted.length;
      if (BURST_BEFORE_KILL.has(kill) || (allSeen && backlog < 40)) world.mintNfts(BURST);
      const before = world.acceptedCount();
      // Sends must be flowing from this incarnation before it is killed.
      await waitUntil(
        () => `sends from incarnation #${incarnation.index} (seed ${seed})\n${world.log()}`,
        () => world.acceptedCount() > before,
        25_000,
      );
      const delayMs = Math.floor(random() * KILL_WINDOW_MS);
      await sleep(delayMs);
      await killHard(incarnation);
      kills.push({
        incarnation: incarnation.index,
        delayMs,
        sent: world.acceptedCount() - before,
        outboxAfter: count(db, "SELECT COUNT(*) AS n FROM outbox"),
      });
      world.restart();
    }

    // After the last restart: everything minted is seen, the outbox is empty, every pair logged.
    await world.drained(() => `the outbox to drain (seed ${seed})\n${world.log()}`, 45_000);
    await sleep(300); // nothing more should arrive; a stray re-send would show up here
    await killHard(world.incarnations.at(-1));

    const t = world.tally();
    const seconds = ((Date.now() - started) / 1000).toFixed(1);
    const summary =
      `seed ${seed}: ${kills.length} kills, ${world.minted.length} NFT contracts × ` +
      `${world.channels.length} channels = ${t.expected} pairs; lost ${t.lost.length}, ` +
      `duplicates ${t.duplicates} (worst kill ${t.worstKill}, per incarnation ${JSON.stringify(t.perKill)}), ` +
      `unexpected ${t.unexpected.length}, malformed ${t.malformed.length}; ${seconds} s` +
      `\nkills: ${JSON.stringify(kills)}` +
      `\nduplicated: ${t.duplicated.join(", ")}` +
      `\nlost: ${t.lost.slice(0, 20).join(", ")}` +
      `\nms from each start to holding the poller lease (null: never): ${JSON.stringify(world.leaseWaits())}` +
      `\nbot log (last 20 lines):\n${world.log()}`;
    process.stdout.write(
      `alerts-crash: ${process.env.CRASH_VERBOSE ? summary : summary.split("\n")[0]}\n`,
    );

    expect(kills.length, summary).toBeGreaterThanOrEqual(8);
    expect(world.minted.length, summary).toBeGreaterThan(0);
    expect(t.malformed, summary).toEqual([]);
    expect(t.unexpected, summary).toEqual([]);
    expect(t.lost, summary).toEqual([]);
    expect(t.delivered, summary).toBe(t.expected);
    expect(t.owedToNoKill, summary).toBe(0);
    expect(t.duplicates, summary).toBeLessThanOrEqual(kills.length);
  }, 120_000);

  it("a kill while several channels' sends are in flight costs at most one duplicate", async ({
    expect,
    onTestFinished,
  }) => {
    // The moment that matters, on purpose rather than by chance: Telegram answers after 150 ms
    // (a real network's round trip, through a proxy), and the child is killed 50 ms after the
    // first alert was accepted, while the worker has other channels' sends in flight (it sends
    // to DELIVERY_CONCURRENCY channels at once, 16 by default).
    const started = Date.now();
    const world = await startWorld(onTestFinished, 20, 10, { telegramRoundTripMs: 150 });
    const { db, tg } = world;
    const first = world.restart();
    await waitUntil(
      "the first poll to set the cursor",
      () => count(db, "SELECT COUNT(*) AS n FROM kv WHERE key = 'poll_cursor:ethereum'") > 0,
      20_000,
    );
    world.mint(3);
    await tg.waitFor((call) => call.method === "sendMessage" && call.ok, 20_000);
    await sleep(50);
    await killHard(first);
    const atKill = world.acceptedCount();
    const marked = count(db, "SELECT COUNT(*) AS n FROM deliveries");
    // What was in flight at the kill is settled; the restarted process sends the rest (some 40,
    // Telegram one at a time) without the round trip, which only made this drain take 8 s.
    world.proxy?.setDelay(0);
    world.restart();
    await world.drained(() => `the outbox to drain\n${world.log()}`, 30_000);
    await sleep(300);
    await killHard(world.incarnations.at(-1));

    const t = world.tally();
    const summary =
      `1 kill 50 ms into the fan-out, Telegram round trip 150 ms: ${world.minted.length} NFT ` +
      `contracts × ${world.channels.length} channels = ${t.expected} pairs; at the kill the ` +
      `platforms had accepted ${atKill} sends and the store had marked ${marked} delivered; ` +
      `lost ${t.lost.length}, duplicates ${t.duplicates}; ${((Date.now() - started) / 1000).toFixed(1)} s` +
      `\nduplicated: ${t.duplicated.join(", ")}\nbot log (last 20 lines):\n${world.log()}`;
    process.stdout.write(`alerts-crash: ${summary.split("\n")[0]}\n`);

    expect(t.malformed, summary).toEqual([]);
    expect(t.unexpected, summary).toEqual([]);
    expect(t.lost, summary).toEqual([]);
    expect(t.delivered, summary).toBe(t.expected);
    expect(t.duplicates, summary).toBeLessThanOrEqual(1);
  }, 60_000);

  it("two bot processes on one DATA_DIR send each alert once", async ({
    expect,
    onTestFinished,
  }) => {
    // An overlap that happens in practice: a supervisor or a deploy starts the new process
    // before the old one is gone. Only one may poll (the lease); delivery must not double up.
    const started = Date.now();
    const world = await startWorld(onTestFinished, 10, 5);
    const { db } = world;
    world.restart();
    await waitUntil(
      "the first poll to set the cursor",
      () => count(db, "SELECT COUNT(*) AS n FROM kv WHERE key = 'poll_cursor:ethereum'") > 0,
      20_000,
    );
    const second = world.restart();
    await waitUntil(
      "the second process to say it will not poll",
      () => second.output.join("").includes("will not poll"),
      // A cold start of the compiled bot takes 1 s alone and over 20 s on a loaded 2-core machine
      // (seen once with the whole suite and a benchmark running).
      40_000,
    );
    world.mint(4);
    await world.drained(() => `the outbox to drain\n${world.log()}`, 30_000);
    await sleep(500);
    for (const incarnation of world.incarnations) await killHard(incarnation);

    const t = world.tally();
    const summary =
      `2 processes, ${world.minted.length} NFT contracts × ${world.channels.length} channels = ` +
      `${t.expected} pairs; lost ${t.lost.length}, duplicates ${t.duplicates}; ` +
      `${((Date.now() - started) / 1000).toFixed(1)} s\nduplicated: ${t.duplicated.slice(0, 10).join(", ")}` +
      `\nbot log (last 20 lines):\n${world.log()}`;
    process.stdout.write(`alerts-crash: ${summary.split("\n")[0]}\n`);

    expect(t.malformed, summary).toEqual([]);
    expect(t.unexpected, summary).toEqual([]);
    expect(t.lost, summary).toEqual([]);
    expect(t.duplicates, summary).toBe(0);
  }, 60_000);
});
