/**
 * Private messages through the outbound module (issue 35: gate notices and proofs' confirmations
 * go through it too): the same send decision as posts to chats, with the person's wait and tries
 * kept in the store when the post names a stream. A refusal is the person's (their messages are
 * closed), never a chat's pause.
 */
import { afterEach, describe, expect, it } from "vitest";
import { Outbound, type PrivatePost } from "../src/outbound/outbound.ts";
import type { ChatSender, SendFailure } from "../src/outbound/types.ts";
import { openMemorySqliteStore, type SqliteStore } from "../src/store/sqlite/index.ts";

const HOUR = 3_600_000;
const START = Date.parse("2026-11-23T08:30:00Z");

/** A platform that records what it was asked to send privately, failing as queued. */
function scriptedSender() {
  const sent: { userId: string; message: unknown }[] = [];
  const failures: (SendFailure | "hang")[] = [];
  const sender: ChatSender = {
    maxInFlight: 1,
    async sendToChat() {
      throw new Error("not a chat post");
    },
    async sendPrivately(to, message, signal) {
      const failure = failures.shift();
      if (failure === "hang")
        return new Promise((_, reject) =>
          signal?.addEventListener("abort", () => reject(new Error("aborted"))),
        );
      if (failure) throw Object.assign(new Error(failure.kind), { failure });
      sent.push({ userId: to.userId, message });
    },
    classifySendError: (error) => (error as { failure: SendFailure }).failure,
  };
  return { sender, sent, failures };
}

let store: SqliteStore | undefined;
afterEach(async () => {
  await store?.close();
  store = undefined;
});

function setup() {
  store = openMemorySqliteStore();
  const clock = { now: START };
  const telegram = scriptedSender();
  const pauses: string[] = [];
  const outbound = new Outbound({
    senders: { telegram: telegram.sender },
    materialize: async () => {
      throw new Error("private messages are not materialized");
    },
    moveChat: async () => undefined,
    chatPauses: {
      pause: async (_platform, chatId) => {
        pauses.push(chatId);
        return true;
      },
    },
    waits: store.sendWaits,
    now: () => clock.now,
  });
  const post = (extra: Partial<PrivatePost> = {}): PrivatePost => ({
    platform: "telegram",
    to: { userId: "42" },
    message: "You no longer pass the gate.",
    what: "gate warning",
    timeoutMs: 1_000,
    stream: "gate-warnings",
    policy: { maxAttempts: 3, backoff: { baseMs: 60_000, jitter: false }, closedWaitMs: 6 * HOUR },
    ...extra,
  });
  return { outbound, telegram, clock, pauses, post, waits: store.sendWaits };
}

describe("the outbound module's private messages", () => {
  it("sends, and a sender without private messages is unserved", async () => {
    const { outbound, telegram, post } = setup();
    expect(await outbound.tell(post())).toEqual({ outcome: "sent" });
    expect(telegram.sent).toEqual([{ userId: "42", message: "You no longer pass the gate." }]);
    expect(await outbound.tell(post({ platform: "discord" }))).toEqual({ outcome: "unserved" });
  });

  it("a failure counts a try and keeps the person's wait; before it is over nothing is sent; then it is tried again and the wait goes", async () => {
    const { outbound, telegram, clock, post, waits } = setup();
    telegram.failures.push({ kind: "transient", reason: "502 Bad Gateway" });
    expect(await outbound.tell(post())).toEqual({
      outcome: "failed",
      until: START + 60_000,
      attempts: 1,
      reason: "502 Bad Gateway",
    });
    expect(await waits.get("gate-warnings", "telegram", "42")).toMatchObject({ attempts: 1 });
    clock.now += 30_000;
    expect(await outbound.tell(post())).toMatchObject({ outcome: "waiting" });
    expect(telegram.sent).toEqual([]);
    clock.now += 30_000;
    expect(await outbound.tell(post())).toEqual({ outcome: "sent" });
    expect(await waits.get("gate-warnings", "telegram", "42")).toBeUndefined();
  });

  it("a 429 waits its Retry-After without counting a try", async () => {
    const { outbound, telegram, post } = setup();
    telegram.failures.push({ kind: "rate_limited", retryAfterMs: 7_000 });
    expect(await outbound.tell(post())).toMatchObject({
      outcome: "failed",
      until: START + 7_000,
      attempts: 0,
    });
  });

  it("a refusal is the person's: closed, left alone for hours, and no chat is paused", async () => {
    const { outbound, telegram, clock, post, pauses } = setup();
    telegram.failures.push({ kind: "permanent", reason: "Forbidden: bot was blocked by the user" });
    expect(await outbound.tell(post())).toEqual({
      outcome: "closed",
      reason: "Forbidden: bot was blocked by the user",
    });
    expect(pauses).toEqual([]);
    clock.now += 5 * HOUR;
    expect(await outbound.tell(post())).toMatchObject({ outcome: "waiting" });
    clock.now += HOUR;
    expect(await outbound.tell(post())).toEqual({ outcome: "sent" });
  });

  it("spent tries are given up, and the person left alone like a refusal", async () => {
    const { outbound, telegram, clock, post } = setup();
    for (let i = 0; i < 3; i++) telegram.failures.push({ kind: "transient", reason: "timeout" });
    expect(await outbound.tell(post())).toMatchObject({ outcome: "failed", attempts: 1 });
    clock.now += HOUR;
    expect(await outbound.tell(post())).toMatchObject({ outcome: "failed", attempts: 2 });
    clock.now += HOUR;
    expect(await outbound.tell(post())).toMatchObject({ outcome: "spent", attempts: 3 });
    clock.now += 5 * HOUR;
    expect(await outbound.tell(post())).toMatchObject({ outcome: "waiting" });
  });

  it("a platform that does not answer is cut at the bound, a transient failure", async () => {
    const { outbound, telegram, post } = setup();
    telegram.failures.push("hang");
    const told = await outbound.tell(post({ timeoutMs: 50 }));
    expect(told).toMatchObject({ outcome: "failed", attempts: 1 });
    expect(told.outcome === "failed" && told.reason).toMatch(/did not answer within/);
  });

  it("without a stream it is a single try and nothing is kept", async () => {
    const { outbound, telegram, post, waits } = setup();
    telegram.failures.push({ kind: "transient", reason: "502" });
    expect(await outbound.tell(post({ stream: undefined }))).toMatchObject({ outcome: "failed" });
    expect(await waits.all("gate-warnings")).toEqual([]);
    expect(await outbound.tell(post({ stream: undefined }))).toEqual({ outcome: "sent" });
  });
});
