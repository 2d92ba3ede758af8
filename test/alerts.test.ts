import { hostname } from "node:os";
import { afterEach, describe, expect, it } from "vitest";
import { CURSOR_KEY, NewContractPoller, PENDING_GAP_KEY } from "../src/alerts/poller.ts";
import type { DueAlert, OutboxStore, Subscription } from "../src/alerts/store/types.ts";
import type { CacheStats } from "../src/api/cache.ts";
import { isDeadLocalHolder } from "../src/jobs/lease.ts";
import { type Logger, silentLogger } from "../src/log.ts";
import { createMetrics } from "../src/ops/metrics.ts";
import type { ChatSender } from "../src/outbound/types.ts";
import { SqlActionStore } from "../src/store/shared/actions.ts";
import { migrate, openDatabase } from "../src/store/sqlite/index.ts";
import { sqliteSql } from "../src/store/sqlite/query.ts";
import { alertPipeline } from "./alert-helpers.ts";
import { startFakeTelegram, telegramErrors } from "./fakes/telegram/index.ts";
import { capturingLogger, type RuntimeSetup, startRuntime } from "./helpers.ts";
import { telegramAdapterFor } from "./telegram-helpers.ts";

let t: RuntimeSetup;
afterEach(async () => {
  await t?.close();
});

/** Records what would be sent; can be told to fail the next sends. */

const SKEW_MS = 300_000;

function alertsFor(
  setup: RuntimeSetup,
  options: {
    limit?: number;
    now?: () => number;
    holder?: string;
    leader?: () => boolean;
    sender?: ChatSender;
    maxAttempts?: number;
    logger?: Logger;
    onFutureMints?: (count: number) => void;
    onDropped?: (alerts: readonly DueAlert[]) => void;
  } = {},
) {
  const logger = options.logger ?? silentLogger();
  return alertPipeline(setup, {
    ...(options.sender ? { sender: options.sender } : {}),
    worker: {
      logger,
      isLeader: () => options.leader?.() ?? true,
      ...(options.onDropped ? { onDropped: options.onDropped } : {}),
      ...(options.now ? { now: options.now } : {}),
    },
    workerSettings: { maxAttempts: options.maxAttempts ?? 10 },
    poller: {
      logger,
      holder: options.holder ?? "test-holder",
      ...(options.now ? { now: options.now } : {}),
      ...(options.onFutureMints ? { onFutureMints: options.onFutureMints } : {}),
    },
    pollerSettings: { limit: options.limit ?? 100, maxClockSkewMs: SKEW_MS },
  });
}

const subscribe = (
  setup: RuntimeSetup,
  chatId: string,
  types: "all" | "erc721" | "erc1155" = "all",
  chain = "ethereum",
) =>
  setup.subscriptions.upsert({
    platform: "telegram",
    chatId,
    chain,
    types,
    createdBy: "telegram:u1",
    now: Date.now(),
  });

describe("store", () => {
  it("migrates once, in WAL mode, and keeps button actions across a restart", async () => {
    t = await startRuntime();
    expect(t.db.pragma("journal_mode", { simple: true })).toBe("wal");
    expect(migrate(t.db)).toBe(t.db.pragma("user_version", { simple: true }));
    const reply = await t.say(`/audience ${t.sim.fixtures.collection}`);
    const id = reply.buttons?.[0]?.id ?? "";
    const reopened = openDatabase(t.dataDir);
    const stored = await new SqlActionStore(sqliteSql(reopened)).get(id);
    expect(stored?.action).toMatchObject({ command: "audience", action: "samples" });
    reopened.close();
  });
});

describe("subscriptions", () => {
  it("subscribing twice is one subscription; the types can change", async () => {
    t = await startRuntime();
    expect((await t.say("/subscribe")).text).toMatch(/^Subscribed/);
    expect((await t.say("/subscribe erc1155")).text).toMatch(
      /already subscribed; it now gets ERC-1155/,
    );
    expect(await t.subscriptions.all()).toHaveLength(1);
    expect((await t.subscriptions.all())[0]?.types).toBe("erc1155");
    expect((await t.say("/subscriptions")).fields?.find((f) => f.name === "Status")?.value).toBe(
      "active",
    );
    expect((await t.say("/unsubscribe")).text).toMatch(/^Unsubscribed/);
    expect((await t.say("/unsubscribe")).text).toBe("This channel was not subscribed.");
    expect((await t.say("/subscriptions")).text).toMatch(/no alert subscription/);
  });

  it("a channel subscribes per chain (chain:<id>); /subscriptions lists each; /unsubscribe ends one or all", async () => {
    t = await startRuntime({ CHAINS: "ethereum,base,polygon" });
    expect((await t.say("/subscribe")).text).toMatch(/^Subscribed: new collections on Ethereum/);
    expect((await t.say("/subscribe erc721 chain:base")).text).toMatch(
      /^Subscribed: new collections on Base \(ERC-721/,
    );
    expect((await t.say("/subscribe chain:Polygon")).text).toMatch(/on Polygon/);
    expect((await t.say("/subscribe chain:solana")).text).toMatch(
      /There is no chain "solana" here: this bot serves ethereum, base or polygon\./,
    );
    // A leading chain word, as every command takes it.
    expect((await t.say("/subscribe polygon erc1155")).text).toMatch(
      /Polygon; it now gets ERC-1155/,
    );
    expect((await t.say("/subscribe polygon all")).text).toMatch(/Polygon; it now gets All/);
    expect((await t.subscriptions.all()).map((s) => [s.chain, s.types])).toEqual([
      ["ethereum", "all"],
      ["base", "erc721"],
      ["polygon", "all"],
    ]);
    const listed = await t.say("/subscriptions");
    expect(listed.fields?.map((f) => f.name)).toEqual(["Ethereum", "Base", "Polygon"]);
    expect(listed.fields?.[1]?.value).toMatch(/^ERC-721 .*; active$/);
    expect((await t.say("/unsubscribe chain:solana")).text).toMatch(/no chain "solana"/);
    expect((await t.say("/unsubscribe chain:base")).text).toBe(
      "Unsubscribed: no more Base new-collection alerts here.",
    );
    expect((await t.say("/unsubscribe chain:base")).text).toBe(
      "This channel was not subscribed to Base.",
    );
    // A chain the bot no longer serves (CHAINS changed) is left with the rest.
    await t.subscriptions.upsert({
      platform: "telegram",
      chatId: (await t.subscriptions.all())[0]?.chatId ?? "",
      chain: "gone",
      types: "all",
      createdBy: "x",
      now: Date.now(),
    });
    expect((await t.say("/subscriptions")).fields?.map((f) => f.name)).toContain(
      "gone (no longer served)",
    );
    expect((await t.say("/unsubscribe chain:gone")).text).toMatch(/no chain "gone"/);
    expect((await t.say("/unsubscribe")).text).toBe(
      "Unsubscribed: no more new-collection alerts here (Ethereum, Polygon, gone).",
    );
    expect(await t.subscriptions.all()).toEqual([]);
  });

  it("only people who may manage the channel; others change nothing", async () => {
    t = await startRuntime();
    const member = { canManageChannel: async () => false };
    expect((await t.say("/subscribe", member)).text).toMatch(
      /Only people who can manage this channel/,
    );
    expect((await t.say("/unsubscribe", member)).text).toMatch(
      /Only people who can manage this channel/,
    );
    expect(await t.subscriptions.all()).toHaveLength(0);
  });

  it("a paused subscription shows its reason, and subscribing again lifts the pause", async () => {
    t = await startRuntime();
    await t.say("/subscribe");
    // Using the chat lifts its pause after the answer: the refusal below comes after that.
    await t.runtime.settled();
    const id = (await t.subscriptions.all())[0]?.id ?? 0;
    await t.subscriptions.pause(id, "Telegram: Forbidden: bot was kicked", Date.now());
    expect((await t.say("/subscriptions")).fields?.find((f) => f.name === "Status")?.value).toMatch(
      /^paused .*bot was kicked/,
    );
    await t.say("/subscribe");
    expect((await t.subscriptions.all())[0]?.pausedAt).toBeNull();
  });
});

describe("poller", () => {
  it("starts at now: contracts minted before the first start are not sent", async () => {
    t = await startRuntime();
    await subscribe(t, "chat-1");
    const { poller, alerts } = alertsFor(t);
    t.sim.mint(3);
    expect((await poller.pollOnce()).kind).toBe("started");
    const result = await poller.pollOnce();
    expect(result).toMatchObject({ kind: "polled", enqueued: 0 });
    expect(await alerts.depth()).toBe(0);
  });

  it("enqueues each new contract once per matching subscription, and advances the cursor", async () => {
    t = await startRuntime();
    await subscribe(t, "all-chat", "all");
    await subscribe(t, "erc1155-chat", "erc1155");
    const { poller, alerts, kv } = alertsFor(t);
    await poller.pollOnce();
    const minted = t.sim.mint(6).filter((c) => c.types.some((type) => type !== "TYPE_ERC20"));
    const first = await poller.pollOnce();
    const erc1155 = minted.filter((c) => c.types.includes("TYPE_ERC1155")).length;
    expect(first).toMatchObject({
      kind: "polled",
      fresh: minted.length,
      enqueued: minted.length + erc1155,
    });
    const again = await poller.pollOnce();
    expect(again).toMatchObject({ fresh: 0, enqueued: 0 });
    expect(await alerts.depth()).toBe(minted.length + erc1155);
    const newest = Math.max(...minted.map((c) => Date.parse(c.mintEvent.blockTimestamp)));
    expect(Date.parse((await kv.get(CURSOR_KEY)) ?? "")).toBe(newest);
  });

  it("pages on when a full page comes back in ascending order", async () => {
    t = await startRuntime();
    await subscribe(t, "chat-1");
    const { poller } = alertsFor(t, { limit: 3 });
    await poller.pollOnce();
    const minted = t.sim.mint(10).filter((c) => !c.types.includes("TYPE_ERC20"));
    const result = await poller.pollOnce();
    expect(result).toMatchObject({ kind: "polled", fresh: minted.length, gap: undefined });
    expect((result as { pages: number }).pages).toBeGreaterThan(1);
  });

  it("records a gap when a full page comes back newest-first and offsets do not move", async () => {
    t = await startRuntime();
    await subscribe(t, "chat-1");
    const { poller, kv, worker, sender } = alertsFor(t, { limit: 2 });
    await poller.pollOnce();
    const now = Date.now();
    const contract = (i: number) => ({
      address: `0x${(1000 + i).toString(16).padStart(40, "0")}`,
      name: `Desc ${i}`,
      symbol: "D",
      decimals: 0,
      types: ["TYPE_ERC721"],
      mintEvent: {
        blockTimestamp: new Date(now - i * 1000).toISOString(),
        txHash: `0x${i}`,
        minterAddress: `0x${"1".repeat(40)}`,
      },
    });
    const page = JSON.stringify({ contracts: [contract(1), contract(2)] });
    t.sim.script([
      { status: 200, body: page },
      { status: 200, body: page },
    ]);
    const result = await poller.pollOnce();
    expect(result).toMatchObject({ kind: "polled", gap: expect.stringMatching(/may be missing/) });
    expect(poller.stats.gaps).toBe(1);
    expect(await kv.get(PENDING_GAP_KEY)).toBeUndefined();
    await worker.drain();
    expect(sender.sent.map((s) => s.reply.text).filter(Boolean)[0]).toMatch(
      /^Note: contracts minted between .* may be missing\.$/,
    );
  });

  it("two processes on one data directory: only one polls, and the other says so", async () => {
    t = await startRuntime();
    const { logger, lines } = capturingLogger();
    const first = alertsFor(t, { holder: "process-a" });
    const second = new NewContractPoller({
      api: t.api,
      alerts: first.alerts,
      kv: first.kv,
      leases: t.store.leases,
      logger,
      settings: { intervalMs: 1000, overlapMs: 0, limit: 10, maxPages: 1, maxClockSkewMs: SKEW_MS },
      holder: "process-b",
    });
    await first.poller.pollOnce();
    expect(await second.pollOnce()).toEqual({ kind: "not_leader", holder: "process-a" });
    expect(lines.join("\n")).toMatch(/another bot process is polling/);
    // The process that does not poll has no poller health to report, and is not failed for it.
    expect(second.health()).toEqual({
      leader: false,
      lagSeconds: null,
      lastSuccessAgoSeconds: null,
      healthy: true,
    });
    expect(first.poller.health()).toMatchObject({ leader: true, healthy: true });
  });
});

describe("a contract dated in the future", () => {
  const YEAR_9999 = Date.parse("9999-12-31T00:00:00Z");
  /** Mints (dated or now) until an NFT contract comes out: fungible ones get no alert. */
  const mintNft = (setup: RuntimeSetup, datedMs?: number) => {
    for (;;) {
      const [contract] = datedMs === undefined ? setup.sim.mint(1) : setup.sim.mintDated(datedMs);
      if (contract && !contract.types.includes("TYPE_ERC20")) return contract;
    }
  };
  const futureMetrics = () => {
    const metrics = createMetrics({
      cache: (): CacheStats => ({ hits: 0, misses: 0, joins: 0, full: 0, bytes: 0 }),
      charts: () => ({ hits: 0, misses: 0 }),
    });
    const count = async () =>
      /bot_poller_future_mints_total (\d+)/.exec(await metrics.registry.metrics())?.[1];
    return { metrics, count };
  };

  it("is posted once, logged and counted; the cursor stays near now, and later mints still alert", async () => {
    t = await startRuntime();
    await subscribe(t, "chat-1");
    const { logger, lines } = capturingLogger();
    const { metrics, count } = futureMetrics();
    const { poller, worker, sender, kv } = alertsFor(t, {
      logger,
      onFutureMints: metrics.onFutureMints,
    });
    await poller.pollOnce();
    const future = mintNft(t, YEAR_9999);
    expect(await poller.pollOnce()).toMatchObject({ kind: "polled", fresh: 1, enqueued: 1 });
    expect(Date.parse((await kv.get(CURSOR_KEY)) ?? "")).toBeLessThanOrEqual(Date.now() + SKEW_MS);
    await worker.drain();
    expect(sender.sent.map((s) => s.reply.fields?.[0]?.value?.toLowerCase())).toEqual([
      future.address.toLowerCase(),
    ]);

    const normal = mintNft(t);
    // The future contract is read again by every poll (it is after any cursor): never re-posted.
    expect(await poller.pollOnce()).toMatchObject({ seen: 2, fresh: 1, enqueued: 1 });
    await worker.drain();
    expect(sender.sent.map((s) => s.reply.fields?.[0]?.value?.toLowerCase())).toEqual([
      future.address.toLowerCase(),
      normal.address.toLowerCase(),
    ]);
    expect(await poller.pollOnce()).toMatchObject({ fresh: 0, enqueued: 0 });
    expect(Date.parse((await kv.get(CURSOR_KEY)) ?? "")).toBeLessThanOrEqual(Date.now() + SKEW_MS);

    const warnings = lines.map((line) => JSON.parse(line)).filter((entry) => entry.level === 40);
    expect(warnings).toEqual([
      expect.objectContaining({
        address: future.address,
        blockTimestamp: "9999-12-31T00:00:00Z",
        msg: expect.stringMatching(/dated in the future/),
      }),
    ]);
    expect(await count()).toBe("1");
  });

  it("at the first start, and in a cursor stored before this fix, does not stop alerts", async () => {
    t = await startRuntime();
    await subscribe(t, "chat-1");
    const { poller, worker, sender, kv } = alertsFor(t);
    mintNft(t, YEAR_9999);
    expect(await poller.pollOnce()).toMatchObject({ kind: "started" });
    expect(Date.parse((await kv.get(CURSOR_KEY)) ?? "")).toBeLessThanOrEqual(Date.now() + SKEW_MS);
    const first = mintNft(t);
    expect(await poller.pollOnce()).toMatchObject({ fresh: 1, enqueued: 1 });

    await kv.set(CURSOR_KEY, "9999-12-31T00:00:00.000Z");
    const second = mintNft(t);
    expect(await poller.pollOnce()).toMatchObject({ fresh: 1, enqueued: 1 });
    expect(Date.parse((await kv.get(CURSOR_KEY)) ?? "")).toBeLessThanOrEqual(Date.now() + SKEW_MS);
    await worker.drain();
    expect(sender.sent.map((s) => s.reply.fields?.[0]?.value?.toLowerCase())).toEqual([
      first.address.toLowerCase(),
      second.address.toLowerCase(),
    ]);
  });
});

describe("the poller lease after a crash", () => {
  it("a holder on this host whose process is gone is taken over at once; a live one is not", async () => {
    t = await startRuntime();
    const { leases } = t.store;
    const now = Date.now();
    const dead = `${hostname()}:999999:abc`;
    const alive = `${hostname()}:${process.ppid}:abc`;
    const elsewhere = "other-host:999999:abc";
    expect(isDeadLocalHolder(dead)).toBe(true);
    expect(isDeadLocalHolder(alive)).toBe(false);
    expect(isDeadLocalHolder(elsewhere)).toBe(false);
    for (const [previous, expected] of [
      [dead, "me"],
      [alive, alive],
      [elsewhere, elsewhere],
    ] as const) {
      expect(await leases.acquire("poller", previous, 60_000, now)).toBe(previous);
      expect(await leases.acquire("poller", "me", 60_000, now + 1, isDeadLocalHolder)).toBe(
        expected,
      );
      await leases.release("poller", previous);
      await leases.release("poller", "me");
    }
  });
});

describe("delivery", () => {
  it("sends name, address link, types, minter, mint time, transaction link and a Report spam button", async () => {
    t = await startRuntime();
    await subscribe(t, "chat-1");
    const { poller, worker, sender } = alertsFor(t);
    await poller.pollOnce();
    // Mint until an NFT contract is minted (fungible ones get no alert).
    let minted = t.sim.mint(1)[0];
    while (minted?.types.includes("TYPE_ERC20")) minted = t.sim.mint(1)[0];
    await poller.pollOnce();
    await worker.drain();
    expect(sender.sent).toHaveLength(1);
    const reply = sender.sent[0]?.reply ?? {};
    expect(reply.title).toMatch(/^New collection: /);
    expect(reply.url).toMatch(/^https:\/\/etherscan\.io\/address\/0x/);
    expect(reply.fields?.map((f) => f.name)).toEqual([
      "Address",
      "Type",
      "Minter",
      "Minter behavior",
      "Minted",
    ]);
    expect(reply.links?.map((l) => l.label)).toEqual(["Contract", "Mint transaction"]);
    expect(reply.buttons?.[0]?.label).toBe("Report spam");
    expect(
      await t.press(reply.buttons?.[0]?.id ?? "", { chat: { id: "chat-1", kind: "group" } }),
    ).toMatchObject({
      text: expect.stringMatching(/prove yours with \/verify/),
    });
  });

  it("an unnamed collection reads 'Unnamed collection'", async () => {
    t = await startRuntime();
    const { alerts, worker, sender } = alertsFor(t);
    const { subscription } = await subscribe(t, "chat-1");
    await alerts.record({
      contracts: [
        {
          address: `0x${"a".repeat(40)}`,
          name: "",
          types: ["TYPE_ERC721"],
          minter: undefined,
          txHash: undefined,
          mintedAt: undefined,
        },
      ],
      subscriptions: [subscription],
      chain: "ethereum",
      cursorKey: CURSOR_KEY,
      cursor: new Date().toISOString(),
      note: null,
      now: Date.now(),
    });
    await worker.drain();
    expect(sender.sent[0]?.reply.title).toBe("New collection: Unnamed collection");
  });

  it("only the lease holder delivers: a second process sends nothing", async () => {
    t = await startRuntime();
    await subscribe(t, "chat-1");
    let leader = false;
    const { poller, worker, sender, alerts } = alertsFor(t, { leader: () => leader });
    await poller.pollOnce();
    t.sim.mint(3);
    await poller.pollOnce();
    const due = await alerts.depth();
    expect(due).toBeGreaterThan(0);
    await worker.drain();
    expect(sender.sent).toHaveLength(0);
    leader = true;
    await worker.drain();
    expect(await alerts.depth()).toBe(0);
  });

  it("every attempt at one alert carries the same idempotency key; different alerts differ", async () => {
    let now = Date.now();
    t = await startRuntime();
    await subscribe(t, "chat-1");
    const { poller, worker, sender } = alertsFor(t, { now: () => now });
    await poller.pollOnce();
    t.sim.mint(3);
    await poller.pollOnce();
    sender.failures.push({ kind: "transient", reason: "HTTP 502" });
    await worker.drain();
    now += 20 * 60_000;
    await worker.drain();
    const [failedAttempt, ...later] = sender.keys;
    expect(later).toContain(failedAttempt);
    expect(new Set(later).size).toBe(later.length);
    for (const key of sender.keys) expect(key).toMatch(/^[A-Za-z0-9_-]{25}$/);
  });

  it("a burst becomes one digest per channel", async () => {
    t = await startRuntime();
    await subscribe(t, "chat-1");
    await subscribe(t, "chat-2");
    const { poller, worker, sender, alerts } = alertsFor(t);
    await poller.pollOnce();
    t.sim.mint(40);
    await poller.pollOnce();
    await worker.drain();
    expect(sender.sent).toHaveLength(2);
    expect(sender.sent[0]?.reply.title).toMatch(/^\d+ new collections$/);
    expect(await alerts.depth()).toBe(0);
  });

  it("waits out a rate limit, backs off on transient errors, and never loses the alert", async () => {
    let now = Date.now();
    t = await startRuntime();
    await subscribe(t, "chat-1");
    const { poller, worker, sender, alerts } = alertsFor(t, { now: () => now });
    await poller.pollOnce();
    t.sim.mint(2);
    await poller.pollOnce();
    const due = await alerts.depth();
    expect(due).toBeGreaterThan(0);
    expect(due).toBeLessThan(5);
    sender.failures.push({ kind: "rate_limited", retryAfterMs: 5000 });
    await worker.drain();
    expect(sender.sent).toHaveLength(0);
    now += 4000;
    await worker.drain();
    expect(sender.sent).toHaveLength(0);
    now += 1500;
    sender.failures.push({ kind: "transient", reason: "HTTP 502" });
    await worker.drain();
    expect(await alerts.depth()).toBe(due);
    now += 20 * 60_000;
    await worker.drain();
    expect(sender.sent).toHaveLength(due);
    expect(await alerts.depth()).toBe(0);
    expect(await alerts.deliveredCount()).toBe(due);
  });

  it("a permanent error pauses the subscription with its reason, visible in /subscriptions", async () => {
    t = await startRuntime();
    await t.say("/subscribe");
    const { poller, worker, sender, alerts } = alertsFor(t);
    await poller.pollOnce();
    t.sim.mint(2);
    await poller.pollOnce();
    sender.failures.push({
      kind: "permanent",
      reason: "Telegram: Forbidden: bot was blocked by the user",
    });
    await worker.drain();
    expect((await t.subscriptions.all())[0]?.pauseReason).toMatch(/blocked/);
    const status = (await t.say("/subscriptions")).fields?.find((f) => f.name === "Status")?.value;
    expect(status).toMatch(/^paused .*bot was blocked by the user/);
    const kept = await alerts.depth();
    await worker.drain();
    expect(sender.sent).toHaveLength(0);
    expect(await alerts.depth()).toBe(kept);
  });
});

/** A new NFT contract recorded for these subscriptions, as the poller would. */
async function recordContract(
  alerts: OutboxStore,
  subscriptions: Subscription[],
  n: number,
  now = Date.now(),
): Promise<string> {
  const address = `0x${n.toString(16).padStart(40, "0")}`;
  await alerts.record({
    contracts: [
      {
        address,
        name: `Collection ${n}`,
        types: ["TYPE_ERC721"],
        minter: undefined,
        txHash: undefined,
        mintedAt: undefined,
      },
    ],
    subscriptions,
    chain: "ethereum",
    cursorKey: CURSOR_KEY,
    cursor: new Date(now).toISOString(),
    note: null,
    now,
  });
  return address;
}

describe("a chat that moved", () => {
  it("moves the subscription and its queued alerts; merged with one already there, nothing twice", async () => {
    t = await startRuntime();
    const { alerts, worker, sender } = alertsFor(t);
    sender.maxInFlight = 1; // as on Telegram
    const old = (await subscribe(t, "-4001")).subscription;
    const there = (await subscribe(t, "-1004001", "erc721")).subscription;
    // Contract 1 is queued for both chats, contract 2 only for the old one.
    await recordContract(alerts, [old, there], 1);
    await recordContract(alerts, [old], 2);
    sender.failures.push({ kind: "moved", newChatId: "-1004001" });
    await worker.drain();
    await worker.drain();
    expect(await t.subscriptions.all()).toMatchObject([
      { id: there.id, chatId: "-1004001", types: "erc721", pausedAt: null },
    ]);
    const titles = sender.sent.map((s) => `${s.chatId} ${s.reply.title}`).sort();
    expect(titles).toEqual([
      "-1004001 New collection: Collection 1",
      "-1004001 New collection: Collection 2",
    ]);
    expect(await alerts.depth()).toBe(0);
  });
});

describe("bounded tries", () => {
  it("an alert a chat always refuses is tried ALERT_MAX_ATTEMPTS times, then dropped, recorded and counted", async () => {
    t = await startRuntime();
    const fake = await startFakeTelegram();
    // No waiting inside grammY: each delivery try is one request.
    const adapter = telegramAdapterFor(fake, t.runtime, {
      retry: { maxDelaySeconds: 0, maxRetryAttempts: 0 },
    });
    let now = Date.now();
    const { logger, lines } = capturingLogger();
    const metrics = createMetrics({
      cache: () => t.api.cacheStats,
      charts: () => ({ hits: 0, misses: 0 }),
    });
    const { alerts, worker } = alertsFor(t, {
      now: () => now,
      sender: adapter,
      maxAttempts: 3,
      logger,
      onDropped: (dropped) => metrics.onAlertsDropped(dropped.length),
    });
    const broken = (await subscribe(t, "-4001")).subscription;
    const fine = (await subscribe(t, "-4002")).subscription;
    await recordContract(alerts, [broken, fine], 1, now);
    // A rate limit is not the alert's fault: it does not count as a try.
    fake.failNext("sendMessage", telegramErrors.tooManyRequests(1), { chatId: -4001 });
    fake.failNext(
      "sendMessage",
      { error_code: 400, description: "Bad Request: something never seen" },
      { chatId: -4001, times: 100 },
    );
    for (let round = 0; round < 8; round++) {
      await worker.drain();
      now += 3_600_000;
    }
    const tries = (chat: number) =>
      fake.sent
        .filter((c) => c.method === "sendMessage" && c.params.chat_id === chat)
        .map((c) => c.error?.error_code ?? 200);
    expect(tries(-4001)).toEqual([429, 400, 400, 400]);
    expect(tries(-4002)).toEqual([200]);
    expect(await alerts.depth()).toBe(0);
    expect(worker.stats.dropped).toBe(1);
    expect(
      t.db.prepare("SELECT subscription_id, attempts, last_error FROM failed_alerts").all(),
    ).toEqual([
      {
        subscription_id: broken.id,
        attempts: 3,
        last_error: expect.stringMatching(/something never seen/),
      },
    ]);
    expect(lines.filter((line) => line.includes("alert dropped"))).toHaveLength(1);
    expect(await metrics.registry.metrics()).toMatch(/^bot_alerts_dropped_total 1$/m);
    await fake.close();
  });
});
