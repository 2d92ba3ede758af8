/**
 * One send decision, carried out once (issue 35): the same failure of a post is handled the same
 * way whether the post is an alert, a digest or a watch's post. Each kind is set up on a real
 * SQLite store with one post owed to one Telegram chat, and the chat's sends fail as a platform
 * says: a 429 with its Retry-After, a group upgraded to a supergroup (migrate_to_chat_id), and a
 * refusal (the bot was kicked).
 */
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { DeliveryWorker } from "../src/alerts/delivery.ts";
import { alertStoresOf } from "../src/alerts/store/index.ts";
import { DigestScheduler } from "../src/digests/scheduler.ts";
import { digestStoreOf } from "../src/digests/store.ts";
import { silentLogger } from "../src/log.ts";
import type { ChatSender, SendFailure } from "../src/outbound/types.ts";
import { openMemorySqliteStore, type SqliteStore } from "../src/store/sqlite/index.ts";
import { WatchChecker } from "../src/watches/checker.ts";
import { watchStoreOf } from "../src/watches/store.ts";
import { type RuntimeSetup, startRuntime } from "./helpers.ts";
import { outboundOf } from "./outbound-helpers.ts";
import { aContract, subscribe } from "./store/samples.ts";

const CHAT = "-100";
const NEW_CHAT = "-1009";
const HOUR = 3_600_000;
/** Monday 2026-11-23 08:30 UTC: half an hour after a daily 09:00 Berlin digest's slot. */
const START = Date.parse("2026-11-23T08:30:00Z");

/** A Telegram that records the chats it posted to, and fails with the failures queued on it. */
function scriptedSender() {
  const sent: string[] = [];
  const failures: SendFailure[] = [];
  const sender: ChatSender = {
    maxInFlight: 1,
    async sendToChat(chatId) {
      const failure = failures.shift();
      if (failure) throw Object.assign(new Error(failure.kind), { failure });
      sent.push(chatId);
    },
    classifySendError: (error) => (error as { failure: SendFailure }).failure,
  };
  return { sender, sent, failures };
}

/** One kind of post owed to CHAT: a round of its job, and what its own records say of it. */
interface Owed {
  round(): Promise<unknown>;
  /** The failed tries counted for the post. */
  attempts(): Promise<number>;
  /** Whether the post is still owed (not sent, not given up). */
  owed(): Promise<boolean>;
  /** Whether the kind's own things are now under `chatId`. */
  livesIn(chatId: string): Promise<boolean>;
}

interface Kind {
  name: string;
  arrange(store: SqliteStore, sender: ChatSender, now: () => number): Promise<Owed>;
}

let t: RuntimeSetup;

const KINDS: Kind[] = [
  {
    name: "an alert",
    async arrange(store, sender, now) {
      await subscribe(alertStoresOf(store).subscriptions, CHAT);
      await alertStoresOf(store).outbox.record({
        chain: "ethereum",
        contracts: [aContract(1)],
        subscriptions: "active",
        cursorKey: "cursor",
        cursor: "x",
        note: null,
        now: now(),
      });
      const worker = new DeliveryWorker({
        alerts: alertStoresOf(store).outbox,
        outbound: outboundOf(store, { telegram: sender }, { now }),
        isLeader: () => true,
        logger: silentLogger(),
        settings: {
          digestThreshold: 5,
          batch: 10,
          tickMs: 1000,
          explorerUrl: "https://etherscan.io",
          maxAttempts: 5,
        },
        now,
      });
      const row = () =>
        store.db.prepare<[], { attempts: number }>("SELECT attempts FROM outbox").get();
      return {
        round: () => worker.drain(),
        attempts: async () => row()?.attempts ?? -1,
        owed: async () => row() !== undefined,
        livesIn: async (chatId) =>
          (await alertStoresOf(store).subscriptions.all()).some((s) => s.chatId === chatId),
      };
    },
  },
  {
    name: "a digest",
    async arrange(store, sender, now) {
      const digest = await digestStoreOf(store).add(
        {
          platform: "telegram",
          chatId: CHAT,
          chain: "ethereum",
          cadence: "daily",
          weekday: null,
          time: "09:00",
          zone: "Europe/Berlin",
          metric: "volume",
          period: "1d",
          createdBy: "telegram:u1",
          createdAt: now() - 48 * HOUR,
        },
        3,
      );
      if (digest === "full") throw new Error("full");
      const scheduler = new DigestScheduler({
        digests: digestStoreOf(store),
        apis: new Map([["ethereum", t.api]]),
        chains: [{ id: "ethereum", name: "Ethereum", symbol: "ETH" }],
        outbound: outboundOf(store, { telegram: sender }, { now }),
        isLeader: () => true,
        holder: "h",
        logger: silentLogger(),
        settings: { tickMs: 1000, lateAfterMs: HOUR, maxAttempts: 5 },
        now,
      });
      const run = async () => (await digestStoreOf(store).runs(digest.id))[0];
      return {
        round: () => scheduler.tick(),
        attempts: async () => (await run())?.attempts ?? -1,
        owed: async () => (await run())?.status === "sending",
        livesIn: async (chatId) =>
          (await digestStoreOf(store).all()).some((d) => d.chatId === chatId),
      };
    },
  },
  {
    name: "a watch's post",
    async arrange(store, sender, now) {
      const added = await watchStoreOf(store).add(
        {
          platform: "telegram",
          chatId: CHAT,
          chain: "ethereum",
          kind: "wallet",
          target: t.sim.fixtures.wallet.toLowerCase(),
          label: "w",
          ownersPercent: null,
          whalesPoints: null,
          createdBy: "telegram:u1",
          createdAt: now(),
        },
        10,
      );
      if (added.kind === "full") throw new Error("full");
      // Read just now (nothing to read for 5 minutes), with a post owed.
      await watchStoreOf(store).advance(
        added.watch.id,
        JSON.stringify({ nftsAt: now(), nfts: [] }),
        JSON.stringify({ reply: { text: "owed post" } }),
      );
      const checker = new WatchChecker({
        watches: watchStoreOf(store),
        apis: t.apis,
        chains: t.chains,
        outbound: outboundOf(store, { telegram: sender }, { now }),
        leases: store.leases,
        holder: "h",
        logger: silentLogger(),
        settings: { tickMs: 1000, checksPerMinute: 100 },
        now,
      });
      return {
        round: () => checker.tick(),
        attempts: async () => (await store.sendWaits.all("watches"))[0]?.attempts ?? 0,
        owed: async () => (await watchStoreOf(store).all())[0]?.pending != null,
        livesIn: async (chatId) =>
          (await watchStoreOf(store).all()).some((w) => w.chatId === chatId),
      };
    },
  },
];

beforeAll(async () => {
  t = await startRuntime();
});
afterAll(async () => {
  await t?.close();
});

describe.each(KINDS)("the outbound module, for $name", (kind) => {
  async function setUp(failure: SendFailure) {
    const store = openMemorySqliteStore();
    let clock = START;
    const { sender, sent, failures } = scriptedSender();
    const owed = await kind.arrange(store, sender, () => clock);
    failures.push(failure);
    await owed.round();
    return {
      store,
      sent,
      owed,
      advance: (ms: number) => {
        clock += ms;
      },
    };
  }

  it("a 429 waits exactly its Retry-After, counts no try, then posts once", async () => {
    const { store, sent, owed, advance } = await setUp({
      kind: "rate_limited",
      retryAfterMs: 7_000,
    });
    expect(sent).toEqual([]);
    expect(await owed.attempts()).toBe(0);
    advance(6_999);
    await owed.round();
    expect(sent).toEqual([]);
    advance(1);
    await owed.round();
    expect(sent).toEqual([CHAT]);
    expect(await owed.owed()).toBe(false);
    await store.close();
  });

  it("a chat that moved is followed: its things move to the new id, the try counts, and the post goes there", async () => {
    const { store, sent, owed } = await setUp({ kind: "moved", newChatId: NEW_CHAT });
    expect(sent).toEqual([]);
    expect(await owed.livesIn(NEW_CHAT)).toBe(true);
    expect(await owed.livesIn(CHAT)).toBe(false);
    expect(await owed.attempts()).toBe(1);
    // Tried again at once, there.
    await owed.round();
    expect(sent).toEqual([NEW_CHAT]);
    expect(await owed.owed()).toBe(false);
    await store.close();
  });

  it("a refusal pauses the chat with its reason; the post stays owed, untried, until the chat works again", async () => {
    const { store, sent, owed, advance } = await setUp({
      kind: "permanent",
      reason: "Forbidden: bot was kicked",
    });
    expect(await store.chatPauses.get("telegram", CHAT)).toMatchObject({
      reason: "Forbidden: bot was kicked",
    });
    expect(await owed.attempts()).toBe(0);
    advance(HOUR / 2);
    await owed.round();
    expect(sent).toEqual([]);
    expect(await owed.owed()).toBe(true);
    // Used again: the pause is lifted, and the post goes out once.
    await store.chatPauses.resume("telegram", CHAT);
    await owed.round();
    expect(sent).toEqual([CHAT]);
    expect(await owed.owed()).toBe(false);
    await store.close();
  });
});
