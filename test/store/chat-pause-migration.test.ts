/**
 * A store from before the pause was the chat's (SQLite migration 19, PostgreSQL 12) keeps its
 * pauses: each chat's earliest pause among its subscriptions, watches and digests becomes the
 * chat's, with that pause's reason; the rows' own columns are gone, and the rows of a chat that
 * was never paused stay unpaused.
 */
import { mkdtempSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { afterEach, describe, expect, it } from "vitest";
import { alertStoresOf } from "../../src/alerts/store/index.ts";
import { digestStoreOf } from "../../src/digests/store.ts";
import { openPgDb } from "../../src/store/postgres/db.ts";
import { openPostgresStore } from "../../src/store/postgres/index.ts";
import { openDatabase } from "../../src/store/sqlite/db.ts";
import { openSqliteStore } from "../../src/store/sqlite/index.ts";
import type { Store } from "../../src/store/types.ts";
import { watchStoreOf } from "../../src/watches/store.ts";
import { POSTGRES_URL, postgresAvailable } from "../services.ts";
import { dropSchema, freshSchemaName } from "./backends.ts";

const cleanups: (() => unknown)[] = [];
afterEach(async () => {
  for (const cleanup of cleanups.splice(0).reverse()) await cleanup();
});

const withPostgres = await postgresAvailable();

/** The rows a bot of migration 19 / 12 left: chat c1 paused three times, c2 never. */
const OLD_ROWS = [
  `INSERT INTO subscriptions (platform, chat_id, chain, types, created_by, created_at, paused_at, pause_reason)
   VALUES ('telegram', 'c1', 'ethereum', 'all', 'u', 1, 30, 'kicked (alerts)'),
          ('telegram', 'c2', 'ethereum', 'all', 'u', 1, NULL, NULL)`,
  `INSERT INTO watches (platform, chat_id, chain, kind, target, label, created_by, created_at, paused_at, pause_reason)
   VALUES ('telegram', 'c1', 'ethereum', 'wallet', '0xaa', 'w', 'u', 1, 20, 'kicked (watch)'),
          ('telegram', 'c2', 'ethereum', 'wallet', '0xaa', 'w', 'u', 1, NULL, NULL)`,
  `INSERT INTO digests (platform, chat_id, chain, cadence, weekday, time, zone, metric, period, created_by, created_at, paused_at, pause_reason)
   VALUES ('telegram', 'c1', 'ethereum', 'daily', NULL, '09:00', 'UTC', 'volume', '1d', 'u', 1, 40, 'kicked (digest)')`,
];

async function expectMigrated(store: Store): Promise<void> {
  expect(await store.chatPauses.get("telegram", "c1")).toEqual({
    platform: "telegram",
    chatId: "c1",
    pausedAt: 20,
    reason: "kicked (watch)",
  });
  expect(await store.chatPauses.get("telegram", "c2")).toBeUndefined();
  const shown = { pausedAt: 20, pauseReason: "kicked (watch)" };
  expect(await alertStoresOf(store).subscriptions.find("telegram", "c1")).toMatchObject(shown);
  expect((await digestStoreOf(store).forChat("telegram", "c1"))[0]).toMatchObject(shown);
  expect((await watchStoreOf(store).forChat("telegram", "c2"))[0]?.pausedAt).toBeNull();
  expect((await alertStoresOf(store).subscriptions.active()).map((s) => s.chatId)).toEqual(["c2"]);
}

describe("row pauses become the chat's", () => {
  it("SQLite: migration 19 -> 20", async () => {
    const dataDir = mkdtempSync(join(tmpdir(), "chat-pause-migration-"));
    cleanups.push(() => rmSync(dataDir, { recursive: true, force: true }));
    const old = openDatabase(dataDir, "bot.sqlite", 19);
    for (const sql of OLD_ROWS) old.prepare(sql).run();
    old.close();

    const store = openSqliteStore(dataDir);
    cleanups.push(() => store.close());
    const columns = store.db
      .prepare<[], { name: string }>("SELECT name FROM pragma_table_info('watches')")
      .all()
      .map((c) => c.name);
    expect(columns).not.toContain("paused_at");
    await expectMigrated(store);
  });

  it.runIf(withPostgres)("PostgreSQL: migration 12 -> 13", async () => {
    const schema = freshSchemaName();
    cleanups.push(() => dropSchema(schema));
    const old = await openPgDb({
      url: POSTGRES_URL,
      schema,
      max: 1,
      through: 12,
    });
    for (const sql of OLD_ROWS) await old.query(sql);
    await old.pool.end();

    const store = await openPostgresStore({ url: POSTGRES_URL, schema, max: 2 });
    cleanups.push(() => store.close());
    await expectMigrated(store);
  });
});
