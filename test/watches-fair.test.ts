/**
 * The watch checker shares its read budget fairly and follows the one send policy: the least
 * recently read watches go first with chats taking turns, a rate limit waits its Retry-After, and
 * a chat that refuses the bot pauses its watches (not read again) until the chat works again.
 */
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import type { RenderableReply } from "../src/core/reply.ts";
import { silentLogger } from "../src/log.ts";
import type { ChatSender, SendFailure } from "../src/outbound/types.ts";
import { openMemorySqliteStore } from "../src/store/sqlite/index.ts";
import type { Store } from "../src/store/types.ts";
import { FRESHNESS_MS, WatchChecker } from "../src/watches/checker.ts";
import { watchStoreOf } from "../src/watches/store.ts";
import { type RuntimeSetup, startRuntime } from "./helpers.ts";
import { outboundOf } from "./outbound-helpers.ts";

const MIN = 60_000;
/** The defaults of WATCH_CHECKS_PER_MINUTE and WATCH_TICK_MS. */
const DEFAULTS = { checksPerMinute: 30, tickMs: 30_000 };

const walletOf = (n: number) => `0x${(0xfa11 + n).toString(16).padStart(40, "0")}`;

function scriptedSender() {
  const sent: string[] = [];
  const failures: SendFailure[] = [];
  let tries = 0;
  const sender: ChatSender & { sent: string[]; tries(): number; failWith(f: SendFailure): void } = {
    sent,
    maxInFlight: 1,
    tries: () => tries,
    failWith(failure) {
      failures.push(failure);
    },
    async sendToChat(chatId: string, reply: RenderableReply) {
      tries++;
      const failure = failures.shift();
      if (failure) throw Object.assign(new Error(failure.kind), { failure });
      sent.push(`${chatId}: ${reply.text ?? ""}`);
    },
    classifySendError: (error) => (error as { failure: SendFailure }).failure,
  };
  return sender;
}

describe("watch checker: fair reads and the send policy", () => {
  let t: RuntimeSetup;
  let store: Store;
  let clock: number;
  beforeAll(async () => {
    t = await startRuntime();
  });
  afterAll(async () => {
    await t?.close();
  });

  function checker(sender: ChatSender, settings = DEFAULTS) {
    return new WatchChecker({
      watches: watchStoreOf(store),
      apis: t.apis,
      chains: t.chains,
      outbound: outboundOf(store, { telegram: sender }, { now: () => clock }),
      leases: store.leases,
      holder: "fair-holder",
      logger: silentLogger(),
      settings,
      now: () => clock,
    });
  }

  async function addWallet(chatId: string, target: string) {
    const result = await watchStoreOf(store).add(
      {
        platform: "telegram",
        chatId,
        chain: "ethereum",
        kind: "wallet",
        target,
        label: target,
        ownersPercent: null,
        whalesPoints: null,
        createdBy: "telegram:u1",
        createdAt: clock,
      },
      1000,
    );
    if (result.kind === "full") throw new Error("full");
    return result.watch;
  }

  /** Reads of each wallet's NFTs since `from` (an index into the simulator's requests). */
  function readsOf(wallets: readonly string[], from: number): number[] {
    const counts = new Map(wallets.map((w) => [w, 0]));
    for (const request of t.sim.requests.slice(from)) {
      if (!request.path.endsWith("/nfts")) continue;
      const wallet = wallets.find((w) => request.path.toLowerCase().includes(w));
      if (wallet) counts.set(wallet, (counts.get(wallet) ?? 0) + 1);
    }
    return wallets.map((w) => counts.get(w) ?? 0);
  }

  /** An hour of ticks at the default tick on the fake clock. */
  async function anHour(c: WatchChecker) {
    for (let at = 0; at < 60 * MIN; at += DEFAULTS.tickMs) {
      await c.tick();
      clock += DEFAULTS.tickMs;
    }
  }

  it("300 watches on default settings: in an hour every watch is read, all about as often", async () => {
    store = openMemorySqliteStore();
    clock = Date.parse("2026-11-25T00:00:00Z");
    const wallets = Array.from({ length: 300 }, (_, i) => walletOf(i));
    for (const [i, wallet] of wallets.entries()) await addWallet(`chat-${i % 30}`, wallet);
    const from = t.sim.requests.length;
    await anHour(checker(scriptedSender()));
    const reads = readsOf(wallets, from);
    // The budget is 30 a minute: 1,800 reads in the hour, 6 a watch when shared evenly.
    expect(reads.reduce((a, b) => a + b, 0)).toBeLessThanOrEqual(60 * DEFAULTS.checksPerMinute);
    expect(Math.min(...reads)).toBeGreaterThanOrEqual(5);
    expect(Math.max(...reads) - Math.min(...reads)).toBeLessThanOrEqual(2);
    await store.close();
  });

  it("a chat with 200 watches does not starve a chat with 2", async () => {
    store = openMemorySqliteStore();
    clock = Date.parse("2026-11-25T00:00:00Z");
    const busy = Array.from({ length: 200 }, (_, i) => walletOf(1000 + i));
    const quiet = [walletOf(2000), walletOf(2001)];
    for (const wallet of busy) await addWallet("busy", wallet);
    for (const wallet of quiet) await addWallet("quiet", wallet);
    const from = t.sim.requests.length;
    await anHour(checker(scriptedSender()));
    // The quiet chat's watches are read at their freshness (every 5 minutes: 12 in the hour).
    for (const reads of readsOf(quiet, from)) expect(reads).toBeGreaterThanOrEqual(10);
    expect(Math.min(...readsOf(busy, from))).toBeGreaterThanOrEqual(1);
    await store.close();
  });

  it("a rate-limited post waits its Retry-After, then goes out once; the chat's other watches wait too", async () => {
    store = openMemorySqliteStore();
    clock = Date.parse("2026-11-25T00:00:00Z");
    const wallet = walletOf(3000);
    const neighbour = walletOf(3001);
    await addWallet("limited", wallet);
    await addWallet("limited", neighbour);
    const sender = scriptedSender();
    const c = checker(sender, { checksPerMinute: 100, tickMs: 1000 });
    await c.tick();
    t.sim.giveNft(wallet);
    clock += FRESHNESS_MS.nfts;
    const from = t.sim.requests.length;
    sender.failWith({ kind: "rate_limited", retryAfterMs: 10 * MIN });
    await c.tick();
    expect(sender.tries()).toBe(1);
    // Every minute for 9 minutes: not tried again before the platform said, and the neighbour,
    // due since the limited read, is not read either (its post would meet the same limit).
    for (let i = 0; i < 9; i++) {
      clock += MIN;
      await c.tick();
    }
    expect(sender.tries()).toBe(1);
    expect(readsOf([wallet, neighbour], from)).toEqual([1, 0]);
    clock += MIN;
    await c.tick();
    expect(sender.tries()).toBe(2);
    expect(sender.sent).toHaveLength(1);
    expect(readsOf([wallet, neighbour], from)).toEqual([1, 1]);
    await store.close();
  });

  it("a chat that refuses the bot pauses its watches: no more reads, the post is kept; resumed, it goes out", async () => {
    store = openMemorySqliteStore();
    clock = Date.parse("2026-11-25T00:00:00Z");
    const wallet = walletOf(4000);
    const other = walletOf(4001);
    await addWallet("dead", wallet);
    await addWallet("dead", other);
    await addWallet("alive", walletOf(4002));
    const sender = scriptedSender();
    const c = checker(sender, { checksPerMinute: 100, tickMs: 1000 });
    await c.tick();
    t.sim.giveNft(wallet);
    clock += FRESHNESS_MS.nfts;
    sender.failWith({ kind: "permanent", reason: "Telegram: Bad Request: chat not found" });
    await c.tick();
    const dead = await watchStoreOf(store).forChat("telegram", "dead");
    expect(dead.map((w) => w.pauseReason)).toEqual([
      "Telegram: Bad Request: chat not found",
      "Telegram: Bad Request: chat not found",
    ]);
    expect(dead[0]?.pending).not.toBeNull();

    const from = t.sim.requests.length;
    for (let i = 0; i < 4; i++) {
      clock += FRESHNESS_MS.nfts;
      await c.tick();
    }
    expect(readsOf([wallet, other], from)).toEqual([0, 0]);
    expect(readsOf([walletOf(4002)], from)).toEqual([4]);
    expect(sender.tries()).toBe(1);

    expect(await store.chatPauses.resume("telegram", "dead")).toBe(true);
    await c.tick();
    expect(sender.sent).toEqual([expect.stringMatching(/^dead: A new NFT/)]);
    // The owed post goes first (the wallet with it is read at the next round); the other is read.
    expect(readsOf([wallet, other], from)).toEqual([0, 1]);
    await store.close();
  });
});
