/**
 * Wallets linked before proofs (issue 27: SQLite migration 17, PostgreSQL 10) are kept, as not
 * proved: each person's wallet becomes one row of `wallets` with no chain, no proof and its label
 * and time, and spam reports do not use it until the person proves one with /verify.
 */
import { mkdtempSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { afterEach, describe, expect, it } from "vitest";
import { openPgDb } from "../../src/store/postgres/db.ts";
import { openPostgresStore } from "../../src/store/postgres/index.ts";
import { openDatabase, SQLITE_MIGRATIONS } from "../../src/store/sqlite/db.ts";
import { openSqliteStore } from "../../src/store/sqlite/index.ts";
import type { Store } from "../../src/store/types.ts";
import { POSTGRES_URL, postgresAvailable } from "../services.ts";
import { dropSchema, freshSchemaName } from "./backends.ts";

const cleanups: (() => unknown)[] = [];
afterEach(async () => {
  for (const cleanup of cleanups.splice(0).reverse()) await cleanup();
});

const withPostgres = await postgresAvailable();

const OLD_ROWS = [
  "INSERT INTO linked_wallets (platform, user_id, address, label, linked_at) VALUES ('telegram', 'u1', '0xAbC0000000000000000000000000000000000001', 'me.eth', 1000)",
  "INSERT INTO linked_wallets (platform, user_id, address, label, linked_at) VALUES ('discord', 'u1', '0xdef0000000000000000000000000000000000002', '0xdef0000000000000000000000000000000000002', 2000)",
];

async function expectMigrated(store: Store): Promise<void> {
  expect(await store.wallets.list("telegram", "u1")).toEqual([
    {
      address: "0xabc0000000000000000000000000000000000001",
      chain: "",
      label: "me.eth",
      provedAt: undefined,
      linkedAt: 1000,
    },
  ]);
  expect(await store.wallets.list("discord", "u1")).toHaveLength(1);
  // Not proved: no spam report is made in its name.
  expect(await store.wallets.reportWallet("telegram", "u1")).toBeUndefined();
  // Proving it keeps one row, now proved.
  await store.wallets.addProved({
    platform: "telegram",
    userId: "u1",
    address: "0xabc0000000000000000000000000000000000001",
    chain: "ethereum",
    label: "0xAbC0000000000000000000000000000000000001",
    message: "m",
    signature: "0x01",
    provedAt: 3000,
  });
  expect(await store.wallets.list("telegram", "u1")).toEqual([
    expect.objectContaining({ provedAt: 3000, chain: "ethereum" }),
  ]);
  expect((await store.wallets.reportWallet("telegram", "u1"))?.provedAt).toBe(3000);
}

describe("wallets linked before proofs migrate as not proved", () => {
  it("SQLite: migration 16 -> 17", async () => {
    const dataDir = mkdtempSync(join(tmpdir(), "wallet-migration-"));
    cleanups.push(() => rmSync(dataDir, { recursive: true, force: true }));
    const old = openDatabase(dataDir, "bot.sqlite", 16);
    for (const sql of OLD_ROWS) old.prepare(sql).run();
    old.close();
    const store = openSqliteStore(dataDir);
    cleanups.push(() => store.close());
    expect(store.db.pragma("user_version", { simple: true })).toBe(SQLITE_MIGRATIONS);
    await expectMigrated(store);
  });

  it.runIf(withPostgres)("PostgreSQL: migration 9 -> 10", async () => {
    const schema = freshSchemaName();
    cleanups.push(() => dropSchema(schema));
    const old = await openPgDb({ url: POSTGRES_URL, schema, max: 1, through: 9 });
    for (const sql of OLD_ROWS) await old.query(sql);
    await old.pool.end();
    const store = await openPostgresStore({ url: POSTGRES_URL, schema, max: 2 });
    cleanups.push(() => store.close());
    await expectMigrated(store);
  });
});
