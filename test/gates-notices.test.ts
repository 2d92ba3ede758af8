/**
 * The gates' private notices as the bot sends them (gateTell over the real outbound module and a
 * SQLite store's waits): a grace warning that did not reach the person is kept in their wait and
 * tried again only once it is over; a person who refused is left alone for hours; a new grace
 * starts afresh; other notices are tried once and keep nothing; made-up data says so.
 */
import { afterEach, describe, expect, it } from "vitest";
import { gateTell } from "../src/gates/feature.ts";
import type { GateTell } from "../src/gates/types.ts";
import { Outbound } from "../src/outbound/outbound.ts";
import type { ChatSender, SendFailure } from "../src/outbound/types.ts";
import { openMemorySqliteStore, type SqliteStore } from "../src/store/sqlite/index.ts";

const HOUR = 3_600_000;
const START = Date.parse("2026-11-23T08:30:00Z");

let store: SqliteStore | undefined;
afterEach(async () => {
  await store?.close();
  store = undefined;
});

function setup(dataMark?: string) {
  store = openMemorySqliteStore();
  const clock = { now: START };
  const sent: { userId: string; message: unknown }[] = [];
  const failures: SendFailure[] = [];
  const sender: ChatSender = {
    maxInFlight: 1,
    async sendToChat() {
      throw new Error("not a chat post");
    },
    async sendPrivately(to, message) {
      const failure = failures.shift();
      if (failure) throw Object.assign(new Error(failure.kind), { failure });
      sent.push({ userId: to.userId, message });
    },
    classifySendError: (error) => (error as { failure: SendFailure }).failure,
  };
  const outbound = new Outbound({
    senders: { discord: sender },
    materialize: async () => {
      throw new Error("not materialized");
    },
    moveChat: async () => {},
    chatPauses: { pause: async () => true },
    waits: store.sendWaits,
    now: () => clock.now,
  });
  const tell = gateTell(() => outbound, dataMark, 1_000);
  const warn = (warning: "first" | "again") =>
    tell({ platform: "discord", userId: "u1", text: "Your role ends soon.", warning });
  return { tell, warn, sent, failures, clock, waits: store.sendWaits };
}

describe("a gate's private notices through the outbound module", () => {
  it("a warning that failed waits its backoff, then is told; the wait goes once told", async () => {
    const { warn, sent, failures, clock, waits } = setup();
    failures.push({ kind: "transient", reason: "503" });
    expect(await warn("first")).toBe(false);
    const wait = await waits.get("gate-warnings", "discord", "u1");
    expect(wait).toMatchObject({ attempts: 1, reason: "503" });
    // The hourly re-check before the wait is over sends nothing.
    clock.now = (wait?.until ?? 0) - 1;
    expect(await warn("again")).toBe(false);
    expect(sent).toEqual([]);
    clock.now = wait?.until ?? 0;
    expect(await warn("again")).toBe(true);
    expect(sent).toHaveLength(1);
    expect(await waits.get("gate-warnings", "discord", "u1")).toBeUndefined();
  });

  it("a person who refused is 'closed' and left alone for 6 hours", async () => {
    const { warn, sent, failures, clock } = setup();
    failures.push({ kind: "permanent", reason: "Cannot send messages to this user" });
    expect(await warn("first")).toBe("closed");
    for (let hour = 1; hour < 6; hour++) {
      clock.now = START + hour * HOUR;
      expect(await warn("again")).toBe(false);
    }
    expect(sent).toEqual([]);
    clock.now = START + 6 * HOUR;
    expect(await warn("again")).toBe(true);
  });

  it("gives a warning up after 5 failed tries; a new grace's warning starts afresh", async () => {
    const { warn, failures, clock, waits } = setup();
    for (let i = 0; i < 5; i++) failures.push({ kind: "transient", reason: "503" });
    expect(await warn("first")).toBe(false);
    for (let i = 1; i < 5; i++) {
      clock.now = (await waits.get("gate-warnings", "discord", "u1"))?.until ?? 0;
      expect(await warn("again")).toBe(false);
    }
    const spent = await waits.get("gate-warnings", "discord", "u1");
    expect(spent).toMatchObject({ attempts: 5 });
    expect(spent?.until).toBe(clock.now + 6 * HOUR);
    // Another gate's grace: its warning is sent at once, the earlier tries forgotten.
    expect(await warn("first")).toBe(true);
    expect(await waits.get("gate-warnings", "discord", "u1")).toBeUndefined();
  });

  it("other notices are tried once and keep no wait; made-up data says so", async () => {
    const { tell, sent, failures, waits } = setup("simulated data");
    const notice: Parameters<GateTell>[0] = {
      platform: "discord",
      userId: "u2",
      text: "To join, prove a wallet.",
    };
    failures.push({ kind: "transient", reason: "503" });
    expect(await tell(notice)).toBe(false);
    expect(await waits.all("gate-warnings")).toEqual([]);
    expect(await tell(notice)).toBe(true);
    expect(sent).toEqual([
      { userId: "u2", message: "To join, prove a wallet.\n\n(simulated data)" },
    ]);
    // A platform this process does not serve: nobody is told.
    expect(await tell({ ...notice, platform: "telegram" })).toBe(false);
  });
});
