import { mkdtempSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { afterEach, describe, expect, it } from "vitest";
import { gateStoreOf } from "../../src/gates/store.ts";
import type { GateCriterion, GateMember, GateStore, NewGate } from "../../src/gates/types.ts";
import { migrateStore } from "../../src/store/migrate.ts";
import { openPostgresStore } from "../../src/store/postgres/index.ts";
import { openSqliteStore } from "../../src/store/sqlite/index.ts";
import type { Store } from "../../src/store/types.ts";
import { POSTGRES_URL, postgresAvailable } from "../services.ts";
import { dropSchema, freshSchemaName } from "./backends.ts";

const cleanups: (() => Promise<void> | void)[] = [];
afterEach(async () => {
  for (const cleanup of cleanups.splice(0).reverse()) await cleanup();
});

const tempDir = () => {
  const dir = mkdtempSync(join(tmpdir(), "gates-store-"));
  cleanups.push(() => rmSync(dir, { recursive: true, force: true }));
  return dir;
};

/** Two stores on one database, as two instances of the bot have. */
type OpenPair = () => Promise<[Store, Store]>;

const sqlitePair: OpenPair = async () => {
  const dir = tempDir();
  const a = openSqliteStore(dir);
  const b = openSqliteStore(dir);
  cleanups.push(() => a.close());
  cleanups.push(() => b.close());
  return [a, b];
};

const postgresPair: OpenPair = async () => {
  const schema = freshSchemaName();
  cleanups.push(() => dropSchema(schema));
  const a = await openPostgresStore({ url: POSTGRES_URL, schema, max: 4 });
  cleanups.push(() => a.close());
  const b = await openPostgresStore({ url: POSTGRES_URL, schema, max: 4 });
  cleanups.push(() => b.close());
  return [a, b];
};

const criteria: GateCriterion[] = [
  {
    kind: "holds",
    chain: "ethereum",
    contract: "0xBC4CA0EdA7647A8aB7C2061c2E118A18a936f13D",
    name: "BAYC",
    min: 2,
  },
  { kind: "behavior", chain: "ethereum", behaviors: ["BEHAVIOR_COLLECTOR"], not: false },
  { kind: "spend", chain: "base", volumeGte: "1.5", lastPurchaseDaysLte: 30 },
];

const discordGate = (guildId: string, roleId = "r1", createdAt = 1): NewGate => ({
  platform: "discord",
  chatId: guildId,
  target: { platform: "discord", guildId, roleId, roleName: `Role ${roleId}` },
  criteria,
  createdBy: "discord:m1",
  createdAt,
});

const telegramGate = (chatId: string): NewGate => ({
  platform: "telegram",
  chatId,
  target: { platform: "telegram", chatId, title: "Holders", inviteLink: "https://t.me/+abc" },
  criteria: [criteria[1] as GateCriterion],
  createdBy: "telegram:m1",
  createdAt: 2,
});

async function added(gates: GateStore, gate: NewGate, max = 10) {
  const result = await gates.add(gate, max);
  if (result.kind !== "added") throw new Error(`full at ${result.count}`);
  return result.gate;
}

const granted = (gateId: number, userId: string, extra: Partial<GateMember> = {}): GateMember => ({
  gateId,
  userId,
  status: "granted",
  since: 10,
  ...extra,
});

function gateStoreSuite(name: string, pair: OpenPair) {
  describe(`gate store: ${name}`, () => {
    const fresh = async () => gateStoreOf((await pair())[0]);

    it("adds gates and gives them back whole; a chat's gates oldest first", async () => {
      const gates = await fresh();
      const first = await added(gates, discordGate("g1", "r1", 30));
      const tg = await added(gates, telegramGate("-100"));
      // Created "earlier" by the clock, added later: numbering follows the order of adding.
      const second = await added(gates, discordGate("g1", "r2", 5));
      expect(first).toEqual({ ...discordGate("g1", "r1", 30), id: first.id });
      expect(first).not.toHaveProperty("pausedAt");
      expect(tg.target).toEqual({
        platform: "telegram",
        chatId: "-100",
        title: "Holders",
        inviteLink: "https://t.me/+abc",
      });
      expect(await gates.get(second.id)).toEqual(second);
      expect(await gates.get(second.id + 1000)).toBeUndefined();
      expect((await gates.forChat("discord", "g1")).map((g) => g.id)).toEqual([
        first.id,
        second.id,
      ]);
      expect(await gates.forChat("telegram", "g1")).toEqual([]);
      expect((await gates.all("telegram")).map((g) => g.id)).toEqual([tg.id]);
      expect((await gates.all()).map((g) => g.id)).toEqual([first.id, tg.id, second.id]);
    });

    it("a group that got a new id takes its gates along, their target's chat id too; members stay", async () => {
      const gates = await fresh();
      const tg = await added(gates, telegramGate("-100"));
      const other = await added(gates, telegramGate("-200"));
      const dc = await added(gates, discordGate("-100"));
      await gates.putMember(granted(tg.id, "u1"));
      await gates.moveChat("telegram", "-100", "-1001");
      expect(await gates.forChat("telegram", "-100")).toEqual([]);
      const moved = await gates.forChat("telegram", "-1001");
      expect(moved.map((g) => g.id)).toEqual([tg.id]);
      expect(moved[0]?.target).toMatchObject({ platform: "telegram", chatId: "-1001" });
      expect((await gates.member(tg.id, "u1"))?.status).toBe("granted");
      // Another group, and a Discord server of the same id, stay where they were.
      expect((await gates.get(other.id))?.chatId).toBe("-200");
      expect((await gates.get(dc.id))?.chatId).toBe("-100");
    });

    it("a chat holds at most `max` gates, paused ones counted; another chat is not counted", async () => {
      const gates = await fresh();
      const one = await added(gates, discordGate("g1", "r1"), 3);
      await gates.pause(one.id, "no Manage Roles", 5);
      await added(gates, discordGate("g1", "r2"), 3);
      await added(gates, discordGate("g1", "r3"), 3);
      expect(await gates.add(discordGate("g1", "r4"), 3)).toEqual({ kind: "full", count: 3 });
      expect((await gates.add(discordGate("g2"), 3)).kind).toBe("added");
      expect((await gates.add(telegramGate("g1"), 3)).kind).toBe("added");
      await gates.remove("discord", "g1", one.id);
      expect((await gates.add(discordGate("g1", "r4"), 3)).kind).toBe("added");
    });

    it("two instances adding at once never pass the max", async () => {
      const [a, b] = await pair();
      const results = await Promise.all(
        Array.from({ length: 20 }, (_, i) =>
          gateStoreOf(i % 2 === 0 ? a : b).add(discordGate("g1", `r${i}`), 10),
        ),
      );
      expect(results.filter((r) => r.kind === "added")).toHaveLength(10);
      expect(results.filter((r) => r.kind === "full")).toHaveLength(10);
      expect(await gateStoreOf(a).forChat("discord", "g1")).toHaveLength(10);
    });

    it("keeps a person's standing, replaced whole by putMember", async () => {
      const gates = await fresh();
      const gate = await added(gates, telegramGate("-100"));
      const pending: GateMember = {
        gateId: gate.id,
        userId: "u1",
        status: "pending",
        since: 10,
        userChatId: "555",
        decideBy: 610,
        lastCheckedAt: 11,
      };
      await gates.putMember(pending);
      expect(await gates.member(gate.id, "u1")).toEqual(pending);
      const grace: GateMember = {
        gateId: gate.id,
        userId: "u1",
        status: "grace",
        since: 10,
        failingSince: 100,
        graceUntil: 200,
        toldAt: 101,
        lastCheckedAt: 100,
      };
      await gates.putMember(grace);
      // What the new standing leaves out is gone (the request's chat and deadline).
      expect(await gates.member(gate.id, "u1")).toEqual(grace);
      await gates.putMember(granted(gate.id, "u2", { since: 5 }));
      expect((await gates.members(gate.id)).map((m) => m.userId)).toEqual(["u2", "u1"]);
      await gates.removeMember(gate.id, "u1");
      expect(await gates.member(gate.id, "u1")).toBeUndefined();
      expect(await gates.members(gate.id)).toEqual([granted(gate.id, "u2", { since: 5 })]);
    });

    it("a person's memberships across gates, of one platform", async () => {
      const gates = await fresh();
      const g1 = await added(gates, discordGate("g1"));
      const g2 = await added(gates, discordGate("g2"));
      const other = await added(gates, discordGate("g2", "r2"));
      const tg = await added(gates, telegramGate("u1"));
      await gates.putMember(granted(g2.id, "u1"));
      await gates.putMember(granted(g1.id, "u1", { status: "grace", graceUntil: 99 }));
      await gates.putMember(granted(other.id, "u2"));
      await gates.putMember(granted(tg.id, "u1", { status: "pending", decideBy: 5 }));
      expect(await gates.memberships("discord", "u1")).toEqual([
        granted(g1.id, "u1", { status: "grace", graceUntil: 99 }),
        granted(g2.id, "u1"),
      ]);
      expect(await gates.memberships("telegram", "u1")).toEqual([
        granted(tg.id, "u1", { status: "pending", decideBy: 5 }),
      ]);
      expect(await gates.memberships("discord", "u3")).toEqual([]);
    });

    it("due: never checked first, then the oldest check, up to the limit; paused gates left out", async () => {
      const gates = await fresh();
      const g1 = await added(gates, discordGate("g1"));
      const g2 = await added(gates, discordGate("g2"));
      const paused = await added(gates, discordGate("g3"));
      await gates.putMember(granted(g1.id, "a", { lastCheckedAt: 50 }));
      await gates.putMember(granted(g1.id, "b"));
      await gates.putMember(granted(g2.id, "c", { lastCheckedAt: 20, status: "grace" }));
      await gates.putMember(granted(g2.id, "d", { lastCheckedAt: 100 }));
      await gates.putMember(granted(g2.id, "e", { status: "pending" }));
      await gates.putMember(granted(paused.id, "f"));
      await gates.putMember(granted(paused.id, "g", { lastCheckedAt: 1 }));
      await gates.pause(paused.id, "role above the bot's", 7);
      const ids = (members: GateMember[]) => members.map((m) => m.userId);
      expect(ids(await gates.due(100, 10))).toEqual(["b", "e", "c", "a"]);
      expect(ids(await gates.due(100, 3))).toEqual(["b", "e", "c"]);
      expect(ids(await gates.due(21, 10))).toEqual(["b", "e", "c"]);
      expect(ids(await gates.due(101, 10))).toEqual(["b", "e", "c", "a", "d"]);
      await gates.resume(paused.id);
      expect(ids(await gates.due(101, 10))).toEqual(["b", "e", "f", "g", "c", "a", "d"]);
    });

    it("expiredRequests: pending requests whose deadline has come", async () => {
      const gates = await fresh();
      const tg = await added(gates, telegramGate("-100"));
      const tg2 = await added(gates, telegramGate("-200"));
      const request = (gateId: number, userId: string, decideBy: number): GateMember => ({
        gateId,
        userId,
        status: "pending",
        since: 1,
        userChatId: `chat-${userId}`,
        decideBy,
      });
      await gates.putMember(request(tg.id, "late", 300));
      await gates.putMember(request(tg2.id, "first", 100));
      await gates.putMember(request(tg.id, "second", 200));
      // Approved meanwhile: no longer a request, whatever its old deadline.
      await gates.putMember(granted(tg.id, "in", { decideBy: 50 }));
      expect(await gates.expiredRequests(99)).toEqual([]);
      expect((await gates.expiredRequests(200)).map((m) => m.userId)).toEqual(["first", "second"]);
      expect(await gates.expiredRequests(1_000)).toEqual([
        request(tg2.id, "first", 100),
        request(tg.id, "second", 200),
        request(tg.id, "late", 300),
      ]);
    });

    it("the log, newest first, up to the limit; lines of one millisecond newest added first", async () => {
      const gates = await fresh();
      const gate = await added(gates, discordGate("g1"));
      const other = await added(gates, discordGate("g2"));
      await gates.log({ gateId: gate.id, userId: "u1", at: 10, action: "granted", reason: "a" });
      await gates.log({ gateId: gate.id, userId: "u1", at: 30, action: "grace", reason: "b" });
      await gates.log({ gateId: gate.id, userId: "u2", at: 20, action: "approved", reason: "c" });
      await gates.log({ gateId: gate.id, userId: "u1", at: 30, action: "removed", reason: "d" });
      await gates.log({ gateId: other.id, userId: "u1", at: 40, action: "failed", reason: "e" });
      expect((await gates.logOf(gate.id, 10)).map((l) => l.reason)).toEqual(["d", "b", "c", "a"]);
      expect(await gates.logOf(gate.id, 2)).toEqual([
        { gateId: gate.id, userId: "u1", at: 30, action: "removed", reason: "d" },
        { gateId: gate.id, userId: "u1", at: 30, action: "grace", reason: "b" },
      ]);
      expect(await gates.logOf(other.id, 10)).toHaveLength(1);
    });

    it("removing a gate removes its members and log; other gates keep theirs; late writes are dropped", async () => {
      const gates = await fresh();
      const gate = await added(gates, discordGate("g1"));
      const kept = await added(gates, discordGate("g1", "r2"));
      for (const g of [gate, kept]) {
        await gates.putMember(granted(g.id, "u1"));
        await gates.log({ gateId: g.id, userId: "u1", at: 1, action: "granted", reason: "ok" });
      }
      expect(await gates.remove("discord", "g2", gate.id)).toBe(false);
      expect(await gates.remove("telegram", "g1", gate.id)).toBe(false);
      expect(await gates.remove("discord", "g1", gate.id)).toBe(true);
      expect(await gates.remove("discord", "g1", gate.id)).toBe(false);
      expect(await gates.get(gate.id)).toBeUndefined();
      expect(await gates.members(gate.id)).toEqual([]);
      expect(await gates.logOf(gate.id, 10)).toEqual([]);
      expect(await gates.memberships("discord", "u1")).toEqual([granted(kept.id, "u1")]);
      expect(await gates.logOf(kept.id, 10)).toHaveLength(1);
      // A re-check that was under way when the gate went writes nothing, and does not fail.
      await gates.putMember(granted(gate.id, "u2"));
      await gates.log({ gateId: gate.id, userId: "u2", at: 2, action: "granted", reason: "late" });
      expect(await gates.members(gate.id)).toEqual([]);
      expect(await gates.logOf(gate.id, 10)).toEqual([]);
      expect(await gates.counts()).toMatchObject({ gates: 1, granted: 1 });
    });

    it("pause keeps the first pause's time and reason; resume lifts it", async () => {
      const gates = await fresh();
      const gate = await added(gates, discordGate("g1"));
      await gates.pause(gate.id, "Missing Permissions: Manage Roles", 5);
      await gates.pause(gate.id, "later", 9);
      expect(await gates.get(gate.id)).toMatchObject({
        pausedAt: 5,
        pauseReason: "Missing Permissions: Manage Roles",
      });
      expect((await gates.forChat("discord", "g1"))[0]?.pausedAt).toBe(5);
      await gates.resume(gate.id);
      const resumed = await gates.get(gate.id);
      expect(resumed).not.toHaveProperty("pausedAt");
      expect(resumed).not.toHaveProperty("pauseReason");
    });

    it("counts gates, paused gates and members by status", async () => {
      const gates = await fresh();
      expect(await gates.counts()).toEqual({
        gates: 0,
        paused: 0,
        granted: 0,
        grace: 0,
        pending: 0,
        owed: 0,
      });
      const g1 = await added(gates, discordGate("g1"));
      const g2 = await added(gates, telegramGate("-100"));
      await added(gates, discordGate("g2"));
      await gates.pause(g1.id, "refused", 3);
      await gates.putMember(granted(g1.id, "a"));
      await gates.putMember(granted(g1.id, "b", { status: "grace" }));
      await gates.putMember(granted(g2.id, "a"));
      await gates.putMember(granted(g2.id, "c", { status: "pending" }));
      await gates.putMember(granted(g2.id, "d", { status: "pending" }));
      expect(await gates.counts()).toEqual({
        gates: 3,
        paused: 1,
        granted: 2,
        grace: 1,
        pending: 2,
        owed: 0,
      });
    });

    it("keeps grants owed: replaced by a later try, due by retry time, gone with the gate", async () => {
      const gates = await fresh();
      const g1 = await added(gates, discordGate("g1"));
      const g2 = await added(gates, discordGate("g2"));
      const owed = {
        gateId: g1.id,
        userId: "a",
        action: "granted" as const,
        reason: "holds 2 of BAYC",
        since: 100,
        attempts: 1,
        retryAt: 160,
        lastError: "Discord 503",
      };
      await gates.oweGrant(owed);
      await gates.oweGrant({ ...owed, userId: "b", retryAt: 150 });
      await gates.oweGrant({ ...owed, gateId: g2.id, retryAt: 500 });
      await gates.oweGrant({ ...owed, attempts: 2, retryAt: 220, lastError: "Discord 429" });
      expect(await gates.owedGrant(g1.id, "a")).toEqual({
        ...owed,
        attempts: 2,
        retryAt: 220,
        lastError: "Discord 429",
      });
      expect((await gates.owedDue(300, 10)).map((o) => o.userId)).toEqual(["b", "a"]);
      expect(await gates.owedDue(149, 10)).toEqual([]);
      expect((await gates.counts()).owed).toBe(3);
      // A paused gate's grants wait; a removed gate's go with it, and take no new one.
      await gates.pause(g1.id, "refused", 1);
      expect(await gates.owedDue(1_000, 10)).toMatchObject([{ gateId: g2.id }]);
      await gates.remove("discord", "g2", g2.id);
      await gates.oweGrant({ ...owed, gateId: g2.id });
      expect(await gates.owedGrant(g2.id, "a")).toBeUndefined();
      await gates.dropOwed(g1.id, "b");
      expect(await gates.owedGrant(g1.id, "b")).toBeUndefined();
      expect((await gates.counts()).owed).toBe(1);
    });

    it("counts the members in grace who were not warned", async () => {
      const gates = await fresh();
      const g1 = await added(gates, discordGate("g1"));
      await gates.putMember(granted(g1.id, "a", { status: "grace", graceUntil: 5, toldAt: 2 }));
      await gates.putMember(granted(g1.id, "b", { status: "grace", graceUntil: 5 }));
      await gates.putMember(granted(g1.id, "c"));
      expect(await gates.unwarned(g1.id)).toBe(1);
    });
  });
}

gateStoreSuite("sqlite", sqlitePair);
if (await postgresAvailable()) gateStoreSuite("postgres", postgresPair);

describe.runIf(await postgresAvailable())("npm run migrate-store: gates", () => {
  it("copies gates, their members and log; new gates take ids after the copied ones", async () => {
    const dataDir = tempDir();
    const sqlite = openSqliteStore(dataDir);
    const gate = await added(gateStoreOf(sqlite), discordGate("g1"));
    const tg = await added(gateStoreOf(sqlite), telegramGate("-100"));
    await gateStoreOf(sqlite).pause(tg.id, "can't invite users", 7);
    const grace = granted(gate.id, "u1", {
      status: "grace",
      failingSince: 20,
      graceUntil: 86_400_020,
      toldAt: 21,
      lastCheckedAt: 20,
    });
    const request: GateMember = {
      gateId: tg.id,
      userId: "u2",
      status: "pending",
      since: 30,
      userChatId: "42",
      decideBy: 630,
    };
    await gateStoreOf(sqlite).putMember(grace);
    await gateStoreOf(sqlite).putMember(request);
    await gateStoreOf(sqlite).log({
      gateId: gate.id,
      userId: "u1",
      at: 10,
      action: "granted",
      reason: "a",
    });
    await gateStoreOf(sqlite).log({
      gateId: gate.id,
      userId: "u1",
      at: 20,
      action: "grace",
      reason: "b",
    });
    const gatesBefore = await gateStoreOf(sqlite).all();
    await sqlite.close();

    const schema = freshSchemaName();
    cleanups.push(() => dropSchema(schema));
    const summary = await migrateStore({
      DATA_DIR: dataDir,
      DATABASE_URL: POSTGRES_URL,
      DATABASE_SCHEMA: schema,
    });
    expect(summary).toMatch(/2 gates, 2 gate_members, 2 gate_log/);

    const pg = await openPostgresStore({ url: POSTGRES_URL, schema, max: 2 });
    cleanups.push(() => pg.close());
    expect(await gateStoreOf(pg).all()).toEqual(gatesBefore);
    expect(await gateStoreOf(pg).member(gate.id, "u1")).toEqual(grace);
    expect(await gateStoreOf(pg).expiredRequests(1_000)).toEqual([request]);
    expect((await gateStoreOf(pg).logOf(gate.id, 10)).map((l) => l.reason)).toEqual(["b", "a"]);
    const next = await added(gateStoreOf(pg), discordGate("g1", "r2"));
    expect(next.id).toBeGreaterThan(tg.id);
    await gateStoreOf(pg).log({
      gateId: gate.id,
      userId: "u1",
      at: 20,
      action: "removed",
      reason: "c",
    });
    expect((await gateStoreOf(pg).logOf(gate.id, 1)).map((l) => l.reason)).toEqual(["c"]);
  });
});
