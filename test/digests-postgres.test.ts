/**
 * Scheduled digests on one PostgreSQL store shared by two instances: however their ticks
 * interleave (both believing they lead, as during a lease hand-over), each digest's slot is
 * posted exactly once; an instance that died holding a slot's claim leaves it to the other once
 * the claim expires on the database's clock (it asks again a claim's length after it was told the
 * slot is held).
 */

import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { DigestScheduler } from "../src/digests/scheduler.ts";
import { digestStoreOf } from "../src/digests/store.ts";
import { silentLogger } from "../src/log.ts";
import type { ChatSender } from "../src/outbound/types.ts";
import { openPostgresStore, type PostgresStore } from "../src/store/postgres/index.ts";
import { type ClientSetup, startClient } from "./helpers.ts";
import { outboundOf } from "./outbound-helpers.ts";
import { POSTGRES_URL, postgresAvailable } from "./services.ts";
import { dropSchema, freshSchemaName } from "./store/backends.ts";

const SLOT = Date.parse("2026-11-23T08:00:00Z"); // 09:00 in Berlin

describe.runIf(await postgresAvailable())("digests on PostgreSQL, two instances", () => {
  const schema = freshSchemaName();
  let a: PostgresStore;
  let b: PostgresStore;
  let client: ClientSetup;

  beforeAll(async () => {
    a = await openPostgresStore({ url: POSTGRES_URL, schema });
    b = await openPostgresStore({ url: POSTGRES_URL, schema });
    client = await startClient();
  });
  afterAll(async () => {
    await a?.close();
    await b?.close();
    await client?.close();
    await dropSchema(schema);
  });

  function instance(store: PostgresStore, holder: string, clock: () => number) {
    const sent: string[] = [];
    const sender: ChatSender = {
      maxInFlight: 1,
      async sendToChat(chatId) {
        sent.push(chatId);
      },
      classifySendError: (error) => ({ kind: "transient", reason: String(error) }),
    };
    const scheduler = new DigestScheduler({
      digests: digestStoreOf(store),
      apis: new Map([["ethereum", client.api]]),
      chains: [{ id: "ethereum", name: "Ethereum", symbol: "ETH" }],
      outbound: outboundOf(store, { telegram: sender }, { now: clock }),
      isLeader: () => true,
      holder,
      logger: silentLogger(),
      settings: { tickMs: 1000, lateAfterMs: 300_000, maxAttempts: 3, claimMs: 60_000 },
      now: clock,
    });
    return { scheduler, sent };
  }

  it("each digest's slot posts exactly once however two instances' ticks interleave", async () => {
    for (let i = 0; i < 6; i++)
      await digestStoreOf(a).add(
        {
          platform: "telegram",
          chatId: `chat-${i}`,
          chain: "ethereum",
          cadence: "daily",
          weekday: null,
          time: "09:00",
          zone: "Europe/Berlin",
          metric: "volume",
          period: "1d",
          createdBy: "telegram:u1",
          createdAt: SLOT - 3_600_000,
        },
        5,
      );
    let now = SLOT + 1_000;
    const one = instance(a, "host-a:1:aa", () => now);
    const two = instance(b, "host-b:2:bb", () => now);
    // Several rounds at once on both, then again later in the day.
    await Promise.all([
      one.scheduler.tick(),
      two.scheduler.tick(),
      one.scheduler.tick(),
      two.scheduler.tick(),
    ]);
    now = SLOT + 3_600_000;
    await Promise.all([one.scheduler.tick(), two.scheduler.tick()]);
    const all = [...one.sent, ...two.sent].sort();
    expect(all).toEqual(Array.from({ length: 6 }, (_, i) => `chat-${i}`));
    for (const digest of await digestStoreOf(b).all())
      expect(await digestStoreOf(b).runs(digest.id)).toEqual([
        expect.objectContaining({ slot: SLOT, status: "sent" }),
      ]);
  });

  it("a slot claimed by an instance that died is posted by the other once the claim expires", async () => {
    const [digest] = await digestStoreOf(a).all();
    if (!digest) throw new Error("no digest");
    const next = SLOT + 86_400_000;
    // Instance A claimed the next slot for 1 s (on the database's clock) and died before sending.
    expect(
      await digestStoreOf(a).claimRun({
        digestId: digest.id,
        slot: next,
        holder: "host-a:1:aa",
        now: next,
        claimMs: 1_000,
      }),
    ).toBeDefined();
    let now = next + 30_000;
    const two = instance(b, "host-b:2:bb", () => now);
    await two.scheduler.tick();
    expect(two.sent).not.toContain(digest.chatId);
    // B, told "held" at +30 s, asks again a claim's length (60 s on its clock) later: A's claim is
    // over on the database's clock only after 1 s has really passed.
    now = next + 91_000;
    await two.scheduler.tick();
    expect(two.sent).not.toContain(digest.chatId);
    await new Promise((resolve) => setTimeout(resolve, 1_200));
    now = next + 152_000;
    await two.scheduler.tick();
    expect(two.sent.filter((chat) => chat === digest.chatId)).toEqual([digest.chatId]);
  });
});
