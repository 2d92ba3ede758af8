import { mkdtempSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { afterEach, describe, expect, it } from "vitest";
import { alertStoresOf } from "../../src/alerts/store/index.ts";
import type { Address } from "../../src/api/validate.ts";
import { ConfigError } from "../../src/config.ts";
import { digestStoreOf } from "../../src/digests/store.ts";
import { StartupError } from "../../src/errors.ts";
import { migrateStore } from "../../src/store/migrate.ts";
import { openPostgresStore } from "../../src/store/postgres/index.ts";
import { openSqliteStore } from "../../src/store/sqlite/index.ts";
import { watchStoreOf } from "../../src/watches/store.ts";
import { POSTGRES_URL, postgresAvailable } from "../services.ts";
import { dropSchema, freshSchemaName } from "./backends.ts";
import { aContract, aReport, subscribe } from "./samples.ts";

const cleanups: (() => Promise<void> | void)[] = [];
afterEach(async () => {
  for (const cleanup of cleanups.splice(0).reverse()) await cleanup();
});

const tempDir = () => {
  const dir = mkdtempSync(join(tmpdir(), "migrate-store-"));
  cleanups.push(() => rmSync(dir, { recursive: true, force: true }));
  return dir;
};

describe("npm run migrate-store: its refusals", () => {
  it("needs DATABASE_URL, and a SQLite store to copy", async () => {
    await expect(migrateStore({ DATA_DIR: tempDir() })).rejects.toThrow(ConfigError);
    await expect(
      migrateStore({ DATA_DIR: tempDir(), DATABASE_URL: "postgres://127.0.0.1/x" }),
    ).rejects.toThrow(StartupError);
  });
});

describe.runIf(await postgresAvailable())("npm run migrate-store", () => {
  it("copies a SQLite store into an empty PostgreSQL store; old buttons, ids and alerts carry on; a second run refuses", async () => {
    const dataDir = tempDir();
    const sqlite = openSqliteStore(dataDir);
    const sub = (await subscribe(alertStoresOf(sqlite).subscriptions, "c1")).subscription;
    const paused = (
      await subscribe(alertStoresOf(sqlite).subscriptions, "c2", "erc1155", "discord")
    ).subscription;
    await alertStoresOf(sqlite).subscriptions.pause(paused.id, "gone", 5);
    // Channel rules (/alerts) are copied with their subscription.
    await alertStoresOf(sqlite).subscriptions.setRules(paused.id, {
      quiet: { from: "23:00", to: "07:00", zone: "Europe/Berlin" },
      keywords: { exclude: ["airdrop"] },
    });
    // The same chat on base, owed the same address on base: chains are copied along.
    const onBase = (
      await subscribe(alertStoresOf(sqlite).subscriptions, "c1", "all", "telegram", "base")
    ).subscription;
    await alertStoresOf(sqlite).outbox.record({
      contracts: [aContract(2)],
      subscriptions: [onBase],
      chain: "base",
      cursorKey: "poll_cursor:base",
      cursor: "2025-02-01T00:00:00.000Z",
      note: null,
      now: 11,
    });
    await alertStoresOf(sqlite).outbox.record({
      contracts: [aContract(1), aContract(2)],
      subscriptions: [sub],
      chain: "ethereum",
      cursorKey: "poll_cursor:ethereum",
      cursor: "2025-01-01T00:00:00.000Z",
      note: "a gap",
      now: 10,
    });
    const [first] = await alertStoresOf(sqlite).outbox.due(10, 1);
    if (!first) throw new Error("an alert expected");
    await alertStoresOf(sqlite).outbox.delivered([first], 20);
    const { report } = await sqlite.reports.create(aReport(), 30);
    await sqlite.reports.queue(report.id, "HTTP 503", 40, 35);
    await sqlite.wallets.link("telegram", "u1", "0xabc", "me.eth", 50);
    // One wallet proved on each platform (one person's on each): copied under the unique index.
    const proved = {
      address: "0xdef",
      chain: "ethereum",
      label: "0xDEF",
      message: "m",
      signature: "0x01",
    };
    await sqlite.wallets.addProved({ ...proved, platform: "discord", userId: "d1", provedAt: 51 });
    await sqlite.wallets.addProved({ ...proved, platform: "telegram", userId: "u1", provedAt: 52 });
    await sqlite.updates.firstSeen("telegram:1", 77, 60);
    // A Discord interaction id past 2^53, where a double would round it to its neighbour.
    await sqlite.updates.firstSeen("discord", 2n ** 60n + 1n, 60);
    await sqlite.leases.acquire("new-contract-poller", "old-host:1:a", 60_000, Date.now());
    await sqlite.collections.write({
      put: [
        {
          address: aContract(1).address as Address,
          name: "Collection 1",
          symbol: "C1",
          rank: 3,
          source: "top",
          seenAt: 70,
        },
      ],
      remove: [],
    });
    await sqlite.collections.forChain("base").write({
      put: [
        {
          address: aContract(1).address as Address,
          name: "Collection 1 on Base",
          symbol: "",
          rank: undefined,
          source: "answer",
          seenAt: 71,
        },
      ],
      remove: [],
    });
    await sqlite.chatSettings.setChain("discord", "c2", "polygon", 72);
    const watch = await watchStoreOf(sqlite).add(
      {
        platform: "telegram",
        chatId: "c1",
        chain: "base",
        kind: "collection",
        target: aContract(1).address.toLowerCase(),
        label: "Collection 1 on Base",
        ownersPercent: 7.5,
        whalesPoints: null,
        createdBy: "telegram:u1",
        createdAt: 73,
      },
      10,
    );
    if (watch.kind === "full") throw new Error("full");
    await watchStoreOf(sqlite).advance(watch.watch.id, '{"ownersOver":1}', null);
    // A chat whose watch post failed twice waits, and keeps its count, after the move.
    const wait = {
      stream: "watches",
      platform: "telegram",
      chatId: "c1",
      attempts: 2,
      until: 1_700_000_060_000,
      reason: "try again",
    };
    await sqlite.sendWaits.set(wait);
    const buttons = await sqlite.actions.putMany([
      {
        platform: "telegram",
        chatId: "c1",
        userId: "u1",
        action: { command: "c", action: "a", payload: { n: 1 } },
        expiresAt: Date.now() + 60_000,
      },
    ]);
    const digest = await digestStoreOf(sqlite).add(
      {
        platform: "telegram",
        chatId: "c1",
        chain: "ethereum",
        cadence: "weekly",
        weekday: 1,
        time: "09:00",
        zone: "Europe/Berlin",
        metric: "sales",
        period: "7d",
        createdBy: "telegram:u1",
        createdAt: 80,
      },
      5,
    );
    if (digest === "full") throw new Error("full");
    await digestStoreOf(sqlite).claimRun({
      digestId: digest.id,
      slot: 1_000,
      holder: "h",
      now: 90,
      claimMs: 1,
    });
    await digestStoreOf(sqlite).finishRun(digest.id, 1_000, "sent", 95);
    await sqlite.close();

    const schema = freshSchemaName();
    cleanups.push(() => dropSchema(schema));
    const env = { DATA_DIR: dataDir, DATABASE_URL: POSTGRES_URL, DATABASE_SCHEMA: schema };
    const summary = await migrateStore(env);
    expect(summary).toMatch(/3 subscriptions, 3 seen_contracts, 2 outbox, 1 deliveries/);

    const pg = await openPostgresStore({ url: POSTGRES_URL, schema, max: 2 });
    cleanups.push(() => pg.close());
    expect(
      (await alertStoresOf(pg).subscriptions.all()).map((s) => [
        s.id,
        s.chatId,
        s.chain,
        s.pausedAt,
      ]),
    ).toEqual([
      [sub.id, "c1", "ethereum", null],
      [paused.id, "c2", "ethereum", 5],
      [onBase.id, "c1", "base", null],
    ]);
    expect((await alertStoresOf(pg).subscriptions.find("discord", "c2"))?.rules).toEqual({
      quiet: { from: "23:00", to: "07:00", zone: "Europe/Berlin" },
      keywords: { exclude: ["airdrop"] },
    });
    expect(await pg.kv.get("poll_cursor:ethereum")).toBe("2025-01-01T00:00:00.000Z");
    expect(await pg.kv.get("poll_cursor:base")).toBe("2025-02-01T00:00:00.000Z");
    expect(await alertStoresOf(pg).outbox.deliveredCount()).toBe(1);
    expect(
      (await alertStoresOf(pg).outbox.due(100, 10)).map((a) => [a.chain, a.contract.name, a.note]),
    ).toEqual([
      ["ethereum", "Collection 2", "a gap"],
      ["base", "Collection 2", null],
    ]);
    expect(await pg.reports.due(100, 10)).toMatchObject([{ id: report.id, status: "queued" }]);
    expect(await pg.wallets.list("telegram", "u1")).toEqual([
      {
        address: "0xdef",
        chain: "ethereum",
        label: "0xDEF",
        provedAt: 52,
        linkedAt: 52,
        chains: ["ethereum"],
      },
      {
        address: "0xabc",
        chain: "",
        label: "me.eth",
        provedAt: undefined,
        linkedAt: 50,
        chains: [],
      },
    ]);
    expect((await pg.wallets.list("discord", "d1")).map((w) => w.provedAt)).toEqual([51]);
    expect(await pg.updates.firstSeen("telegram:1", 77, 80)).toBe(false);
    expect(await pg.updates.firstSeen("discord", 2n ** 60n + 1n, 80)).toBe(false);
    expect(await pg.updates.firstSeen("discord", 2n ** 60n, 80)).toBe(true);
    expect(await pg.collections.load()).toMatchObject([{ name: "Collection 1", rank: 3 }]);
    expect(await pg.collections.forChain("base").load()).toMatchObject([
      { name: "Collection 1 on Base" },
    ]);
    expect(await pg.chatSettings.get("discord", "c2")).toEqual({ chain: "polygon" });
    // A watch carries on with what it saw (no repost after the move), and new ones follow its id.
    expect(await watchStoreOf(pg).all()).toEqual([{ ...watch.watch, state: '{"ownersOver":1}' }]);
    expect(await pg.sendWaits.all("watches")).toEqual([wait]);
    const nextWatch = await watchStoreOf(pg).add({ ...watch.watch, chain: "ethereum" }, 10);
    expect(nextWatch.kind === "added" && nextWatch.watch.id).toBeGreaterThan(watch.watch.id);
    // A button under an old message works after the move.
    expect(await pg.actions.get(buttons[0] ?? "")).toMatchObject({ chatId: "c1", userId: "u1" });
    // Digests and their sent slots: a slot posted on SQLite is not posted again on PostgreSQL.
    expect(await digestStoreOf(pg).all()).toEqual([digest]);
    expect(
      await digestStoreOf(pg).claimRun({
        digestId: digest.id,
        slot: 1_000,
        holder: "h2",
        now: 10_000,
        claimMs: 1,
      }),
    ).toBeUndefined();
    expect(await digestStoreOf(pg).runs(digest.id)).toMatchObject([
      { slot: 1_000, status: "sent" },
    ]);
    // New rows take ids after the copied ones.
    const added = (await subscribe(alertStoresOf(pg).subscriptions, "c3")).subscription;
    expect(added.id).toBeGreaterThan(onBase.id);
    const [next] = await pg.actions.putMany([
      {
        platform: "telegram",
        chatId: "c1",
        userId: "u2",
        action: { command: "c", action: "b", payload: {} },
        expiresAt: Date.now() + 60_000,
      },
    ]);
    expect(await pg.actions.get(next ?? "")).toMatchObject({ userId: "u2" });
    expect(await pg.actions.get(buttons[0] ?? "")).toMatchObject({ userId: "u1" });
    // The old process's lease is not copied: the first instance on PostgreSQL takes it at once.
    expect(await pg.leases.acquire("new-contract-poller", "new-host:1:b", 6_000, 0)).toBe(
      "new-host:1:b",
    );

    // Run again: refused, with what the target holds, and nothing changed.
    await expect(migrateStore(env)).rejects.toThrow(
      /is not empty \(4 in subscriptions, .*\): migrate-store copies only into an empty store, and copied nothing/,
    );
    expect(await alertStoresOf(pg).subscriptions.all()).toHaveLength(4);
  });
});
