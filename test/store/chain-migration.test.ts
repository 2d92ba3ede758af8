/**
 * A store of one chain (before chains: SQLite migration 9, PostgreSQL 2) migrates to chains: its
 * subscriptions, seen contracts, queued alerts, cursor and gap note become ethereum's, and go on
 * working (the same contract is not alerted again on ethereum; on base it is a new one).
 */
import { mkdtempSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { afterEach, describe, expect, it } from "vitest";
import { cursorKey, pendingGapKey } from "../../src/alerts/poller.ts";
import { alertStoresOf } from "../../src/alerts/store/index.ts";
import { openPgDb } from "../../src/store/postgres/db.ts";
import { openPostgresStore } from "../../src/store/postgres/index.ts";
import { openDatabase, SQLITE_MIGRATIONS } from "../../src/store/sqlite/db.ts";
import { openSqliteStore } from "../../src/store/sqlite/index.ts";
import type { Store } from "../../src/store/types.ts";
import { POSTGRES_URL, postgresAvailable } from "../services.ts";
import { dropSchema, freshSchemaName } from "./backends.ts";
import { aContract, subscribe } from "./samples.ts";

const cleanups: (() => unknown)[] = [];
afterEach(async () => {
  for (const cleanup of cleanups.splice(0).reverse()) await cleanup();
});

const withPostgres = await postgresAvailable();

const ADDRESS = aContract(1).address.toLowerCase();
const OTHER = aContract(2).address.toLowerCase();

/** The rows a single-chain bot left: two chats, two contracts seen, one alert queued, a cursor. */
const OLD_ROWS: [string, unknown[]][] = [
  [
    "INSERT INTO subscriptions (id, platform, chat_id, types, created_by, created_at) VALUES (1, 'telegram', 'c1', 'all', 'telegram:u1', 1000)",
    [],
  ],
  [
    "INSERT INTO subscriptions (id, platform, chat_id, types, created_by, created_at, paused_at, pause_reason) VALUES (2, 'discord', 'c2', 'erc721', 'discord:u2', 1000, 5, 'gone')",
    [],
  ],
  [
    `INSERT INTO seen_contracts (address, name, types, minter, tx_hash, minted_at, seen_at) VALUES ('${ADDRESS}', 'Old One', '["TYPE_ERC721"]', NULL, NULL, '2025-01-01T00:00:00Z', 10)`,
    [],
  ],
  [
    `INSERT INTO seen_contracts (address, name, types, minter, tx_hash, minted_at, seen_at) VALUES ('${OTHER}', 'Old Two', '["TYPE_ERC721"]', NULL, NULL, '2025-01-01T00:00:00Z', 10)`,
    [],
  ],
  [
    `INSERT INTO outbox (subscription_id, contract, note, due_at, attempts, created_at) VALUES (1, '${OTHER}', 'an old gap', 10, 2, 10)`,
    [],
  ],
  ["INSERT INTO kv (key, value) VALUES ('poll_cursor', '2025-01-01T00:00:00.000Z')", []],
  ["INSERT INTO kv (key, value) VALUES ('poll_pending_gap', 'a pending gap')", []],
];

/** What every migrated store must show, and that it still works, on ethereum and on base. */
async function expectMigrated(store: Store): Promise<void> {
  expect(
    (await alertStoresOf(store).subscriptions.all()).map((s) => [s.id, s.chatId, s.chain, s.types]),
  ).toEqual([
    [1, "c1", "ethereum", "all"],
    [2, "c2", "ethereum", "erc721"],
  ]);
  expect(await alertStoresOf(store).subscriptions.find("telegram", "c1", "ethereum")).toMatchObject(
    { id: 1 },
  );
  expect(await alertStoresOf(store).subscriptions.find("telegram", "c1", "base")).toBeUndefined();
  expect(await store.kv.get(cursorKey("ethereum"))).toBe("2025-01-01T00:00:00.000Z");
  expect(await store.kv.get(pendingGapKey("ethereum"))).toBe("a pending gap");
  expect(await store.kv.get("poll_cursor")).toBeUndefined();
  const due = await alertStoresOf(store).outbox.due(100, 10);
  expect(due.map((a) => [a.subscriptionId, a.chain, a.contract.name, a.note, a.attempts])).toEqual([
    [1, "ethereum", "Old Two", "an old gap", 2],
  ]);

  // Seen on ethereum already: not alerted again.
  expect(
    await alertStoresOf(store).outbox.record({
      chain: "ethereum",
      contracts: [aContract(1)],
      subscriptions: "active",
      cursorKey: cursorKey("ethereum"),
      cursor: "2025-01-02T00:00:00.000Z",
      note: null,
      now: 100,
    }),
  ).toEqual({ fresh: [], enqueued: 0, hidden: 0 });
  // The same address on base is a new contract there, for base's subscribers.
  const onBase = (
    await subscribe(alertStoresOf(store).subscriptions, "c1", "all", "telegram", "base")
  ).subscription;
  expect(onBase.id).toBeGreaterThan(2);
  const base = await alertStoresOf(store).outbox.record({
    chain: "base",
    contracts: [aContract(1)],
    subscriptions: "active",
    cursorKey: cursorKey("base"),
    cursor: "2025-01-03T00:00:00.000Z",
    note: null,
    now: 100,
  });
  expect(base).toMatchObject({ enqueued: 1 });
  const claimed = await alertStoresOf(store).outbox.claim({
    now: 100,
    limit: 10,
    holder: "h",
    claimMs: 1_000,
  });
  expect(claimed.map((a) => [a.chatId, a.chain]).sort()).toEqual([
    ["c1", "base"],
    ["c1", "ethereum"],
  ]);
  await alertStoresOf(store).outbox.delivered(claimed, 101);
  expect(await alertStoresOf(store).outbox.depth()).toBe(0);
  // Unsubscribing from ethereum leaves base.
  expect(await alertStoresOf(store).subscriptions.remove("telegram", "c1", "ethereum")).toBe(true);
  expect(
    (await alertStoresOf(store).subscriptions.forChat("telegram", "c1")).map((s) => s.chain),
  ).toEqual(["base"]);
}

describe("a single-chain store migrates to chains", () => {
  it("SQLite: migration 9 -> 10 makes every row ethereum's, and it goes on working", async () => {
    const dataDir = mkdtempSync(join(tmpdir(), "chain-migration-"));
    cleanups.push(() => rmSync(dataDir, { recursive: true, force: true }));
    const old = openDatabase(dataDir, "bot.sqlite", 9);
    expect(old.pragma("user_version", { simple: true })).toBe(9);
    for (const [sql] of OLD_ROWS) old.prepare(sql).run();
    old.close();

    const store = openSqliteStore(dataDir);
    cleanups.push(() => store.close());
    expect(store.db.pragma("user_version", { simple: true })).toBe(SQLITE_MIGRATIONS);
    expect(store.db.pragma("foreign_key_check")).toEqual([]);
    await expectMigrated(store);
  });

  it.runIf(withPostgres)(
    "PostgreSQL: migration 2 -> 3 makes every row ethereum's, and it goes on working",
    async () => {
      const schema = freshSchemaName();
      cleanups.push(() => dropSchema(schema));
      const old = await openPgDb({ url: POSTGRES_URL, schema, max: 1, through: 2 });
      for (const [sql, values] of OLD_ROWS) await old.query(sql, values);
      await old.query("SELECT setval(pg_get_serial_sequence('subscriptions', 'id'), 2)");
      await old.pool.end();

      const store = await openPostgresStore({ url: POSTGRES_URL, schema, max: 2 });
      cleanups.push(() => store.close());
      await expectMigrated(store);
    },
  );
});
