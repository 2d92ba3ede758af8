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
      chains: [],
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

/**
 * Issue 34: on a platform a wallet belongs to one person (SQLite migration 19, PostgreSQL 12). A
 * store from before may hold one address proved by several accounts: the latest proof keeps it
 * (ties: the latest linked, then the lowest user id), the others lose only that row; not proved
 * rows, other platforms and every other row stay as they were.
 */
const PROVED = (platform: string, user: string, address: string, proved: number, linked = proved) =>
  `INSERT INTO wallets (platform, user_id, address, chain, label, proved_at, message, signature, linked_at) VALUES ('${platform}', '${user}', '${address}', 'ethereum', '${address}', ${proved}, 'message of ${user}', '0x01', ${linked})`;
const DUPLICATES = [
  PROVED("discord", "u1", "0xaa", 100),
  PROVED("discord", "u2", "0xaa", 300),
  PROVED("discord", "u3", "0xaa", 200),
  // Linked on the person's word before proofs: no claim, kept.
  "INSERT INTO wallets (platform, user_id, address, chain, label, linked_at) VALUES ('discord', 'u4', '0xaa', '', 'aa.eth', 50)",
  // The same proof time: the later linked keeps it; the same both: the lowest user id.
  PROVED("discord", "u1", "0xbb", 500, 500),
  PROVED("discord", "u2", "0xbb", 500, 400),
  PROVED("discord", "u6", "0xcc", 700),
  PROVED("discord", "u5", "0xcc", 700),
  // Another platform: held apart.
  PROVED("telegram", "u9", "0xaa", 50),
  PROVED("discord", "u1", "0xdd", 10),
];

async function holders(store: Store, platform: string, users: string[], address: string) {
  const found: string[] = [];
  for (const user of users)
    if ((await store.wallets.list(platform, user)).some((w) => w.address === address && w.provedAt))
      found.push(user);
  return found;
}

async function expectResolved(store: Store, insertAgain: () => Promise<unknown>): Promise<void> {
  const users = ["u1", "u2", "u3", "u4", "u5", "u6"];
  expect(await holders(store, "discord", users, "0xaa")).toEqual(["u2"]);
  expect(await holders(store, "discord", users, "0xbb")).toEqual(["u1"]);
  expect(await holders(store, "discord", users, "0xcc")).toEqual(["u5"]);
  expect(await holders(store, "telegram", ["u9"], "0xaa")).toEqual(["u9"]);
  expect((await store.wallets.list("discord", "u1")).map((w) => w.address)).toEqual([
    "0xbb",
    "0xdd",
  ]);
  expect(await store.wallets.list("discord", "u3")).toEqual([]);
  expect(await store.wallets.list("discord", "u4")).toEqual([
    { address: "0xaa", chain: "", label: "aa.eth", provedAt: undefined, linkedAt: 50, chains: [] },
  ]);
  // From now on the database itself refuses a second holder.
  await expect(insertAgain()).rejects.toThrow(/unique/i);
}

describe("a wallet proved by several accounts of one platform: the latest proof keeps it", () => {
  it("SQLite: migration 18 -> 19", async () => {
    const dataDir = mkdtempSync(join(tmpdir(), "wallet-owner-migration-"));
    cleanups.push(() => rmSync(dataDir, { recursive: true, force: true }));
    const old = openDatabase(dataDir, "bot.sqlite", 18);
    for (const sql of DUPLICATES) old.prepare(sql).run();
    old.close();
    const store = openSqliteStore(dataDir);
    cleanups.push(() => store.close());
    await expectResolved(store, async () =>
      store.db.prepare(PROVED("discord", "u3", "0xaa", 900)).run(),
    );
  });

  it.runIf(withPostgres)("PostgreSQL: migration 11 -> 12", async () => {
    const schema = freshSchemaName();
    cleanups.push(() => dropSchema(schema));
    const old = await openPgDb({ url: POSTGRES_URL, schema, max: 1, through: 11 });
    for (const sql of DUPLICATES) await old.query(sql);
    await old.pool.end();
    const store = await openPostgresStore({ url: POSTGRES_URL, schema, max: 2 });
    cleanups.push(() => store.close());
    await expectResolved(store, () => store.pg.query(PROVED("discord", "u3", "0xaa", 900)));
  });
});
