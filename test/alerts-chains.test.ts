/**
 * Alerts with several chains (issue 17): one poller per chain, each with its own client, cursor
 * and lease; a channel subscribes per chain; an alert names its chain and links to its explorer;
 * one chain's data service failing does not stop the other chain's alerts.
 */
import { mkdtempSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import type { Chat } from "grammy/types";
import { afterEach, describe, expect, it } from "vitest";
import { DeliveryWorker } from "../src/alerts/delivery.ts";
import { alertReply, digestReply } from "../src/alerts/message.ts";
import { cursorKey, NewContractPoller, pendingGapKey } from "../src/alerts/poller.ts";
import { alertStoresOf } from "../src/alerts/store/index.ts";
import type { DueAlert, OutboxStore } from "../src/alerts/store/types.ts";
import { createApiClient } from "../src/api/client.ts";
import { apiClientSettings, type Bot, createBot } from "../src/bot.ts";
import { parseChains } from "../src/chains.ts";
import { parseConfig } from "../src/config.ts";
import type { RenderableReply, Reply } from "../src/core/reply.ts";
import { silentLogger } from "../src/log.ts";
import { Outbound } from "../src/outbound/outbound.ts";
import type { Simulator } from "../src/simulator/index.ts";
import { openSqliteStore } from "../src/store/sqlite/index.ts";
import type { SendWaitStore } from "../src/store/types.ts";
import {
  type FakeTelegram,
  groupChat,
  type RecordedCall,
  startFakeTelegram,
  user,
} from "./fakes/telegram/index.ts";
import { startTestSimulator } from "./test-simulator.ts";

const admin = user(3001, "Ada", "ada");
const both = groupChat(-7001, "Both chains");
const ethOnly = groupChat(-7002, "Ethereum only");
const baseOnly = groupChat(-7003, "Base only");

const cleanups: (() => unknown)[] = [];
afterEach(async () => {
  for (const cleanup of cleanups.splice(0).reverse()) await cleanup();
});

async function startWorld(): Promise<{
  sim: Simulator;
  telegram: FakeTelegram;
  bot: Bot;
  says: (chat: Chat, text: string) => Promise<string>;
  mintOn: (chain: string) => string;
  alertsTo: (chat: Chat, address: string) => RecordedCall[];
}> {
  const sim = await startTestSimulator({ chains: ["ethereum", "base"] });
  cleanups.push(() => sim.close());
  const telegram = await startFakeTelegram();
  cleanups.push(() => telegram.close());
  const dataDir = mkdtempSync(join(tmpdir(), "bot-alerts-chains-"));
  cleanups.push(() => rmSync(dataDir, { recursive: true, force: true }));
  for (const chat of [both, ethOnly, baseOnly])
    telegram.setMemberStatus(chat.id, admin.id, "administrator");
  const config = parseConfig({
    CHAINS: `ethereum=${sim.urlOf("ethereum")},base=${sim.urlOf("base")}`,
    API_KEY: sim.apiKey,
    DATA_DIR: dataDir,
    TELEGRAM_BOT_TOKEN: telegram.token,
    TELEGRAM_API_ROOT: telegram.apiRoot,
    POLL_INTERVAL_S: "1",
    DELIVERY_TICK_MS: "100",
    // A failing chain is not retried for long within one poll.
    API_RETRIES: "0",
  });
  const bot = await createBot(config, { logger: silentLogger() });
  cleanups.push(() => bot.stop());
  await bot.start();

  async function says(chat: Chat, text: string): Promise<string> {
    const before = telegram.sent.length;
    telegram.pushUpdate(telegram.message(chat, admin, text));
    const call = await telegram.waitFor(
      (c) =>
        c.seq > before &&
        c.ok &&
        c.method === "sendMessage" &&
        String(c.params.chat_id) === String(chat.id),
      10_000,
    );
    return String(call.params.text);
  }
  /** Mints on one chain until an NFT contract is among them; returns its address. */
  function mintOn(chain: string): string {
    for (;;) {
      const nft = sim.mint(1, chain).find((c) => !c.types.includes("TYPE_ERC20"));
      if (nft) return nft.address.toLowerCase();
    }
  }
  const alertsTo = (chat: Chat, address: string) =>
    telegram.sent.filter(
      (c) =>
        c.ok &&
        c.method === "sendMessage" &&
        String(c.params.chat_id) === String(chat.id) &&
        String(c.params.text).toLowerCase().includes(address),
    );
  return { sim, telegram, bot, says, mintOn, alertsTo };
}

/** Waits until every chain's poller has its cursor: mints from now on are alerted. */
async function pollersStarted(bot: Bot): Promise<void> {
  for (const chain of ["ethereum", "base"])
    await expect.poll(() => bot.store.kv.get(cursorKey(chain)), { timeout: 10_000 }).toBeTruthy();
}

/** Waits for `chain`'s poller to finish `n` more polls (successful or not). */
async function morePolls(bot: Bot, chain: string, n: number): Promise<void> {
  const poller = bot.pollers.get(chain);
  if (!poller) throw new Error(`no poller for ${chain}`);
  const count = () => poller.stats.polls + poller.stats.failures;
  const target = count() + n;
  await expect.poll(count, { timeout: 15_000 }).toBeGreaterThanOrEqual(target);
}

describe("alerts on several chains", () => {
  it("a poller per chain: a mint on base alerts base's subscribers only, naming Base and linking to its explorer; a channel on both chains gets both", async () => {
    const { telegram, bot, says, mintOn, alertsTo } = await startWorld();
    expect([...bot.pollers.keys()]).toEqual(["ethereum", "base"]);
    expect(bot.poller).toBe(bot.pollers.get("ethereum"));

    expect(await says(both, "/subscribe")).toMatch(/Subscribed: new collections on Ethereum/);
    expect(await says(both, "/subscribe chain:base")).toMatch(
      /Subscribed: new collections on Base/,
    );
    expect(await says(ethOnly, "/subscribe chain:ethereum")).toMatch(/on Ethereum/);
    expect(await says(baseOnly, "/subscribe erc721 chain:Base")).toMatch(/on Base/);
    // An unknown chain: said so, nothing changes.
    expect(await says(ethOnly, "/subscribe chain:solana")).toMatch(
      /There is no chain &quot;solana&quot; here: this bot serves ethereum or base\./,
    );
    expect(
      (await alertStoresOf(bot.store).subscriptions.forChat("telegram", String(ethOnly.id))).length,
    ).toBe(1);
    const listed = await says(both, "/subscriptions");
    expect(listed).toMatch(/Ethereum/);
    expect(listed).toMatch(/Base/);
    await pollersStarted(bot);

    const onBase = mintOn("base");
    const alert = await telegram.waitFor(
      (c) =>
        c.ok &&
        c.method === "sendMessage" &&
        String(c.params.chat_id) === String(baseOnly.id) &&
        String(c.params.text).toLowerCase().includes(onBase),
      15_000,
    );
    expect(String(alert.params.text)).toMatch(/New collection on Base: /);
    expect(String(alert.params.text)).toContain(`https://basescan.org/address/`);
    expect(String(alert.params.text)).not.toContain("etherscan.io");
    // Base's alert also reached the channel on both chains; never the ethereum-only one, though
    // ethereum's poller polled meanwhile.
    await expect.poll(() => alertsTo(both, onBase).length, { timeout: 10_000 }).toBe(1);
    await morePolls(bot, "ethereum", 2);
    expect(alertsTo(ethOnly, onBase)).toEqual([]);

    // A mint on ethereum: the ethereum-only channel and the one on both, with etherscan links.
    const onEthereum = mintOn("ethereum");
    await expect.poll(() => alertsTo(ethOnly, onEthereum).length, { timeout: 15_000 }).toBe(1);
    await expect.poll(() => alertsTo(both, onEthereum).length, { timeout: 10_000 }).toBe(1);
    const ethAlert = String(alertsTo(ethOnly, onEthereum)[0]?.params.text);
    expect(ethAlert).toMatch(/New collection on Ethereum: /);
    expect(ethAlert).toContain("https://etherscan.io/address/");
    await morePolls(bot, "base", 2);
    expect(alertsTo(baseOnly, onEthereum)).toEqual([]);

    // Each chain keeps its own cursor.
    expect(await bot.store.kv.get(cursorKey("ethereum"))).not.toBe(
      await bot.store.kv.get(cursorKey("base")),
    );
    // Unsubscribing from base leaves ethereum's.
    expect(await says(both, "/unsubscribe chain:base")).toMatch(/Unsubscribed: no more Base/);
    expect(
      (await alertStoresOf(bot.store).subscriptions.forChat("telegram", String(both.id))).map(
        (s) => s.chain,
      ),
    ).toEqual(["ethereum"]);
  }, 90_000);

  it("base's data service failing stops only base's alerts: ethereum's still arrive, and base's follow once it is back", async () => {
    const { sim, bot, says, mintOn, alertsTo } = await startWorld();
    expect(await says(both, "/subscribe")).toMatch(/Subscribed/);
    expect(await says(both, "/subscribe chain:base")).toMatch(/Subscribed/);
    await pollersStarted(bot);

    sim.setFaults({ errorRates: { 503: 1 } }, "base");
    const base = bot.pollers.get("base");
    const failuresBefore = base?.stats.failures ?? 0;
    const onBase = mintOn("base");
    const onEthereum = mintOn("ethereum");
    await expect.poll(() => alertsTo(both, onEthereum).length, { timeout: 15_000 }).toBe(1);
    await expect
      .poll(() => base?.stats.failures ?? 0, { timeout: 15_000 })
      .toBeGreaterThan(failuresBefore);
    expect(alertsTo(both, onBase)).toEqual([]);
    // /healthz names each chain's poller.
    const health = await bot.health();
    expect(Object.keys(health.pollers ?? {})).toEqual(["ethereum", "base"]);

    sim.clearFaults();
    await expect.poll(() => alertsTo(both, onBase).length, { timeout: 15_000 }).toBe(1);
    expect(String(alertsTo(both, onBase)[0]?.params.text)).toMatch(/on Base/);
  }, 90_000);
});

describe("pollers per chain, on one store", () => {
  it("each chain has its own lease (two instances may lead two chains), cursor and gap note", async () => {
    const sim = await startTestSimulator({ chains: ["ethereum", "base"] });
    cleanups.push(() => sim.close());
    const dataDir = mkdtempSync(join(tmpdir(), "pollers-per-chain-"));
    cleanups.push(() => rmSync(dataDir, { recursive: true, force: true }));
    const store = openSqliteStore(dataDir);
    cleanups.push(() => store.close());
    const config = parseConfig({ API_KEY: sim.apiKey, API_RETRIES: "0" });
    const poller = (chain: string, holder: string) => {
      const api = createApiClient(
        apiClientSettings(config, sim.urlOf(chain), sim.apiKey),
        silentLogger(),
      );
      cleanups.push(() => api.close());
      return new NewContractPoller({
        chain,
        api,
        alerts: alertStoresOf(store).outbox,
        kv: store.kv,
        leases: store.leases,
        logger: silentLogger(),
        settings: {
          intervalMs: 1000,
          overlapMs: 60_000,
          limit: 100,
          maxPages: 5,
          maxClockSkewMs: 300_000,
        },
        holder,
      });
    };
    // Instance A leads ethereum, instance B base; neither can take the other's chain.
    const aEthereum = poller("ethereum", "host-a:1:a");
    const bBase = poller("base", "host-b:2:b");
    const bEthereum = poller("ethereum", "host-b:2:b");
    expect(await aEthereum.pollOnce()).toMatchObject({ kind: "started" });
    expect(await bBase.pollOnce()).toMatchObject({ kind: "started" });
    expect(await bEthereum.pollOnce()).toEqual({ kind: "not_leader", holder: "host-a:1:a" });
    expect(aEthereum.isLeader && bBase.isLeader).toBe(true);

    const subscribe = (chain: string) =>
      alertStoresOf(store).subscriptions.upsert({
        platform: "telegram",
        chatId: "c1",
        chain,
        types: "all",
        createdBy: "x",
        now: 1,
      });
    await subscribe("ethereum");
    await subscribe("base");
    // A gap noted on base rides on base's next alerts only.
    await store.kv.set(pendingGapKey("base"), "a base gap");
    const ethCursor = await store.kv.get(cursorKey("ethereum"));
    const nftOn = (chain: string) =>
      sim.mint(5, chain).filter((c) => !c.types.includes("TYPE_ERC20")).length;
    const onBase = nftOn("base");
    expect(await aEthereum.pollOnce()).toMatchObject({ kind: "polled", fresh: 0 });
    expect(await store.kv.get(cursorKey("ethereum"))).toBe(ethCursor);
    expect(await bBase.pollOnce()).toMatchObject({ kind: "polled", fresh: onBase });
    const due = await alertStoresOf(store).outbox.due(Date.now() + 1000, 100);
    expect(due.length).toBe(onBase);
    expect(new Set(due.map((a) => `${a.chain} ${a.note}`))).toEqual(new Set(["base a base gap"]));
    expect(await store.kv.get(pendingGapKey("base"))).toBeUndefined();
    await aEthereum.stop();
    await bBase.stop();
    await bEthereum.stop();
  });
});

describe("alert messages name their chain", () => {
  const contract = {
    address: "0x5aaeb6053f3e94c9b9a09f33669435e7ef1beaed",
    name: "Blue Things",
    types: ["TYPE_ERC721"],
    minter: "0xfb6916095ca1df60bb79ce92ce3ea74c37c5d359",
    txHash: `0x${"ab".repeat(32)}`,
    mintedAt: "2026-11-22T11:59:00Z",
  };
  const now = new Date("2026-11-22T12:00:00Z");

  it("an alert on a named chain says so and links to that chain's explorer only", () => {
    const reply = alertReply(
      contract,
      null,
      { explorer: "https://basescan.org", name: "Base", spam: false },
      now,
    );
    expect(reply.title).toBe("New collection on Base: Blue Things");
    expect(reply.fields?.find((f) => f.name === "Chain")?.value).toBe("Base");
    expect(reply.url?.toLowerCase()).toBe(`https://basescan.org/address/${contract.address}`);
    expect(reply.links?.map((l) => l.url.toLowerCase())).toEqual([
      `https://basescan.org/address/${contract.address}`,
      `https://basescan.org/tx/${contract.txHash}`,
    ]);
    // No spam detection on base: no report button.
    expect(reply.buttons ?? []).toEqual([]);
  });

  it("one chain: no chain named, as before; the report button where spam is detected", () => {
    const reply = alertReply(contract, null, "https://etherscan.io", now);
    expect(reply.title).toBe("New collection: Blue Things");
    expect(reply.fields?.some((f) => f.name === "Chain")).toBe(false);
    expect(JSON.stringify(reply.buttons)).toContain("Report spam");
  });

  it("the report button under an alert carries its chain: the report goes to that chain's service", () => {
    const reply = alertReply(
      contract,
      null,
      { id: "polygon", explorer: "https://polygonscan.com", name: "Polygon", spam: true },
      now,
    );
    expect(reply.buttons?.[0]?.action.payload).toMatchObject({ chain: "polygon", kind: "spam" });
  });

  it("a digest names its chain and links to its explorer", () => {
    const reply = digestReply([contract, { ...contract, name: "Two" }], null, {
      explorer: "https://polygonscan.com",
      name: "Polygon",
    });
    expect(reply.title).toBe("2 new collections on Polygon");
    expect(reply.url?.toLowerCase()).toBe(`https://polygonscan.com/address/${contract.address}`);
  });

  it("delivery picks each alert's chain: its name (with several chains) and its explorer", async () => {
    const sent: { chatId: string; reply: Reply }[] = [];
    const due: DueAlert[] = [
      {
        id: 1,
        subscriptionId: 1,
        platform: "telegram",
        chatId: "eth-chat",
        chain: "ethereum",
        attempts: 0,
        note: null,
        contract,
      },
      {
        id: 2,
        subscriptionId: 2,
        platform: "telegram",
        chatId: "base-chat",
        chain: "base",
        attempts: 0,
        note: null,
        contract,
      },
    ];
    let claimed = false;
    const outbox = {
      claim: async () => {
        if (claimed) return [];
        claimed = true;
        return due;
      },
      delivered: async () => {},
      retryLater: async () => {},
      giveUp: async () => {},
    } as unknown as OutboxStore;
    const worker = new DeliveryWorker({
      alerts: outbox,
      outbound: new Outbound({
        senders: {
          telegram: {
            maxInFlight: 1,
            sendToChat: async () => {},
            classifySendError: () => ({ kind: "transient", reason: "x" }),
          },
        },
        materialize: async (_platform, chatId, reply) => {
          sent.push({ chatId, reply });
          return reply as unknown as RenderableReply;
        },
        moveChat: async () => undefined,
        chatPauses: { pause: async () => true },
        waits: {} as SendWaitStore,
      }),
      isLeader: () => true,
      logger: silentLogger(),
      settings: {
        digestThreshold: 5,
        batch: 10,
        tickMs: 1000,
        maxAttempts: 3,
        explorerUrl: "https://etherscan.io",
        chains: parseChains("ethereum=http://a.invalid,base=http://b.invalid", undefined),
      },
    });
    await worker.drain();
    const byChat = new Map(sent.map((s) => [s.chatId, s.reply]));
    expect(byChat.get("eth-chat")?.title).toBe("New collection on Ethereum: Blue Things");
    expect(byChat.get("eth-chat")?.url).toMatch(/^https:\/\/etherscan\.io\//);
    expect(byChat.get("base-chat")?.title).toBe("New collection on Base: Blue Things");
    expect(byChat.get("base-chat")?.url).toMatch(/^https:\/\/basescan\.org\//);
  });
});
