import { afterEach, describe, expect, it } from "vitest";
import { DeliveryWorker } from "../src/alerts/delivery.ts";
import { alertStoresOf } from "../src/alerts/store/index.ts";
import type { RenderableReply } from "../src/core/reply.ts";
import { silentLogger } from "../src/log.ts";
import type { ChatSender, SendFailure } from "../src/outbound/types.ts";
import { openPostgresStore, type PostgresStore } from "../src/store/postgres/index.ts";
import { outboundOf } from "./outbound-helpers.ts";
import { POSTGRES_URL, postgresAvailable } from "./services.ts";
import { dropSchema, freshSchemaName } from "./store/backends.ts";
import { aContract } from "./store/samples.ts";

/** What "the platform" accepted, from every instance. */
type Accepted = string[];

/** Accepts sends; after `dieAfter` sends it accepts one more and never returns (the process dies). */
class Sender implements ChatSender {
  maxInFlight = 1;
  constructor(
    private readonly accepted: Accepted,
    private readonly dieAfter = Number.POSITIVE_INFINITY,
  ) {}
  async sendToChat(chatId: string): Promise<void> {
    this.accepted.push(chatId);
    if (this.accepted.length > this.dieAfter) await new Promise(() => {});
  }
  classifySendError(error: unknown): SendFailure {
    return { kind: "transient", reason: String(error) };
  }
}

const worker = (store: PostgresStore, holder: string, sender: ChatSender, claimMs: number) =>
  new DeliveryWorker({
    alerts: alertStoresOf(store).outbox,
    outbound: outboundOf(
      store,
      { telegram: sender },
      {
        moveChat: (platform, from, to) =>
          alertStoresOf(store).subscriptions.moveChat(platform, from, to),
      },
    ),
    isLeader: () => true,
    holder,
    logger: silentLogger(),
    settings: {
      digestThreshold: 1_000,
      batch: 500,
      tickMs: 1_000,
      explorerUrl: "https://etherscan.io",
      maxAttempts: 10,
      claimMs,
    },
  });

describe.runIf(await postgresAvailable())("alert delivery across instances on PostgreSQL", () => {
  const cleanups: (() => Promise<void>)[] = [];
  afterEach(async () => {
    for (const cleanup of cleanups.splice(0).reverse()) await cleanup();
  });

  it("an instance killed mid fan-out: another delivers the rest once its claim expires, one duplicate at most", async () => {
    const schema = freshSchemaName();
    cleanups.push(() => dropSchema(schema));
    const [a, b] = await Promise.all(
      [1, 2].map(() => openPostgresStore({ url: POSTGRES_URL, schema, max: 3 })),
    );
    if (!a || !b) throw new Error("two stores expected");
    cleanups.push(() => a.close());
    cleanups.push(() => b.close());
    const channels = Array.from({ length: 20 }, (_, i) => `chat-${i}`);
    const subscriptions = [];
    for (const chatId of channels)
      subscriptions.push(
        (
          await alertStoresOf(a).subscriptions.upsert({
            platform: "telegram",
            chatId,
            chain: "ethereum",
            types: "all",
            createdBy: "t",
            now: 0,
          })
        ).subscription,
      );
    await alertStoresOf(a).outbox.record({
      contracts: [aContract(1)],
      subscriptions,
      chain: "ethereum",
      cursorKey: "cursor",
      cursor: "x",
      note: null,
      now: 0,
    });
    const accepted: Accepted = [];
    const claimMs = 800;
    // A takes the whole round, marks 5 delivered, has a 6th accepted and dies before marking it.
    void worker(a, "host-a:1:a", new Sender(accepted, 5), claimMs).drain();
    await expect.poll(() => accepted.length).toBe(6);
    // B, the next leader, finds everything claimed: nothing is sent twice meanwhile.
    const successor = worker(b, "host-b:1:b", new Sender(accepted), claimMs);
    expect(await successor.drain()).toBe(0);
    expect(accepted).toHaveLength(6);
    // Once A's claim has expired, B sends what A had not marked delivered.
    await new Promise((resolve) => setTimeout(resolve, claimMs + 200));
    expect(await successor.drain()).toBe(15);
    expect(new Set(accepted)).toEqual(new Set(channels));
    expect(accepted.length - channels.length).toBe(1);
    expect(await alertStoresOf(b).outbox.depth()).toBe(0);
  });

  it("two instances delivering at once never send the same alert", async () => {
    const schema = freshSchemaName();
    cleanups.push(() => dropSchema(schema));
    const [a, b] = await Promise.all(
      [1, 2].map(() => openPostgresStore({ url: POSTGRES_URL, schema, max: 3 })),
    );
    if (!a || !b) throw new Error("two stores expected");
    cleanups.push(() => a.close());
    cleanups.push(() => b.close());
    const subscriptions = [];
    for (let i = 0; i < 40; i++)
      subscriptions.push(
        (
          await alertStoresOf(a).subscriptions.upsert({
            platform: "telegram",
            chatId: `chat-${i}`,
            chain: "ethereum",
            types: "all",
            createdBy: "t",
            now: 0,
          })
        ).subscription,
      );
    await alertStoresOf(a).outbox.record({
      contracts: [aContract(1), aContract(2)],
      subscriptions,
      chain: "ethereum",
      cursorKey: "cursor",
      cursor: "x",
      note: null,
      now: 0,
    });
    const accepted: Accepted = [];
    const small = (store: PostgresStore, holder: string) => {
      const w = worker(store, holder, new Sender(accepted), 60_000);
      return async () => {
        let total = 0;
        for (let n = await w.drain(); n > 0; n = await w.drain()) total += n;
        return total;
      };
    };
    // Both loop until the outbox is empty, in rounds of at most 500 (one round here).
    const [sentA, sentB] = await Promise.all([small(a, "a")(), small(b, "b")()]);
    expect(sentA + sentB).toBe(80);
    expect(accepted).toHaveLength(80);
    expect(await alertStoresOf(a).outbox.deliveredCount()).toBe(80);
  });
});

describe.runIf(await postgresAvailable())("an instance that hangs inside a transaction", () => {
  const cleanups: (() => Promise<unknown>)[] = [];
  afterEach(async () => {
    for (const cleanup of cleanups.splice(0).reverse()) await cleanup();
  });

  it("does not hold the alert it was marking delivered for ever: the server ends its transaction, and another instance sends it", async () => {
    const schema = freshSchemaName();
    cleanups.push(() => dropSchema(schema));
    // A: frozen (a stopped VM, a host cut off) between the DELETE and the COMMIT of `delivered`.
    const a = await openPostgresStore({
      url: POSTGRES_URL,
      schema,
      max: 2,
      idleInTransactionMs: 500,
    });
    const b = await openPostgresStore({ url: POSTGRES_URL, schema, max: 2 });
    cleanups.push(() => a.close());
    cleanups.push(() => b.close());
    const { subscription } = await alertStoresOf(a).subscriptions.upsert({
      platform: "telegram",
      chatId: "chat-1",
      chain: "ethereum",
      types: "all",
      createdBy: "t",
      now: 0,
    });
    await alertStoresOf(a).outbox.record({
      chain: "ethereum",
      contracts: [aContract(1)],
      subscriptions: [subscription],
      cursorKey: "cursor",
      cursor: "x",
      note: null,
      now: 0,
    });
    const claimMs = 300;
    const [alert] = await alertStoresOf(a).outbox.claim({
      now: 1,
      limit: 10,
      holder: "a",
      claimMs,
    });
    expect(alert).toBeDefined();
    let thaw: () => void = () => {};
    const frozen = new Promise<void>((resolve) => {
      thaw = resolve;
    });
    const hung = a.pg
      .tx(async (client) => {
        await client.query("DELETE FROM outbox WHERE id = $1", [alert?.id]);
        await frozen;
      })
      .catch((error: unknown) => error);
    cleanups.push(async () => {
      thaw();
      await hung;
    });

    // B, the next leader, gets the alert once A's claim has expired: its row is not locked for ever.
    await expect
      .poll(() => alertStoresOf(b).outbox.claim({ now: 2, limit: 10, holder: "b", claimMs }), {
        timeout: 5_000,
        interval: 200,
      })
      .toHaveLength(1);
    // A, thawed, finds its transaction ended; nothing it did stands.
    thaw();
    expect(await hung).toBeInstanceOf(Error);
    expect(await alertStoresOf(b).outbox.depth()).toBe(1);
  });

  it("bad actors' mints hidden or marked per subscription; reported spam suppressed with one note, across instances", async () => {
    const schema = freshSchemaName();
    cleanups.push(() => dropSchema(schema));
    const [a, b] = await Promise.all(
      [1, 2].map(() => openPostgresStore({ url: POSTGRES_URL, schema, max: 3 })),
    );
    if (!a || !b) throw new Error("two stores expected");
    cleanups.push(() => a.close());
    cleanups.push(() => b.close());
    const sub = async (chatId: string, badActors: "hide" | "show") =>
      (
        await alertStoresOf(a).subscriptions.upsert({
          platform: "telegram",
          chatId,
          chain: "ethereum",
          types: "all",
          badActors,
          createdBy: "t",
          now: 0,
        })
      ).subscription;
    await sub("hides", "hide");
    const shows = await sub("shows", "show");
    const recorded = await alertStoresOf(a).outbox.record({
      contracts: [
        { ...aContract(1), minterBehavior: "BEHAVIOR_BADACTOR" },
        { ...aContract(2), minterBehavior: "NOT_BADACTOR" },
      ],
      subscriptions: "active",
      chain: "ethereum",
      cursorKey: "cursor",
      cursor: "c",
      note: null,
      now: 0,
    });
    expect(recorded).toMatchObject({ enqueued: 3, hidden: 1 });
    for (const user of ["u1", "u2"])
      await a.reports.create(
        {
          platform: "telegram",
          chatId: "shows",
          userId: user,
          userName: user,
          wallet: `0x${"1".repeat(40)}`,
          contract: aContract(2).address,
          tokenId: "",
          kind: "spam",
          feedback: null,
        },
        0,
      );
    const sent: { chatId: string; reply: RenderableReply }[] = [];
    const recording: ChatSender = {
      maxInFlight: 1,
      async sendToChat(chatId, reply) {
        sent.push({ chatId, reply });
      },
      classifySendError: (error) => ({ kind: "transient", reason: String(error) }),
    };
    const deliver = (store: PostgresStore) =>
      new DeliveryWorker({
        alerts: alertStoresOf(store).outbox,
        reports: store.reports,
        outbound: outboundOf(
          store,
          { telegram: recording },
          {
            moveChat: (platform, from, to) =>
              alertStoresOf(store).subscriptions.moveChat(platform, from, to),
          },
        ),
        isLeader: () => true,
        holder: "h",
        logger: silentLogger(),
        settings: {
          digestThreshold: 1_000,
          batch: 500,
          tickMs: 1_000,
          explorerUrl: "https://etherscan.io",
          maxAttempts: 10,
        },
      });
    await deliver(a).drain();
    const to = (chatId: string) =>
      sent.filter((s) => s.chatId === chatId).map((s) => s.reply.title ?? s.reply.text);
    expect(to("hides")).toEqual(["New collection: Collection 2"]);
    expect(to("shows").sort()).toEqual([
      "Likely spam: new collection: Collection 1",
      expect.stringMatching(/^Not posted here: Collection 2 .*2 members of this channel/),
    ]);
    expect(await alertStoresOf(a).outbox.depth()).toBe(0);
    // Queued again (as after a crash), taken by the other instance: dropped, no second note.
    await b.pg.query(
      "INSERT INTO outbox (subscription_id, chain, contract, note, due_at, created_at) VALUES ($1, 'ethereum', $2, NULL, 0, 0)",
      [shows.id, aContract(2).address],
    );
    const before = sent.length;
    await deliver(b).drain();
    expect(sent.length).toBe(before);
    expect(await alertStoresOf(b).outbox.depth()).toBe(0);
  });
});
