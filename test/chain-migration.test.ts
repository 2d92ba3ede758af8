/**
 * Issue 17: an existing single-chain store migrates. The collection index it held becomes
 * ethereum's (SQLite migration 11, PostgreSQL 4), and chats start with no default chain.
 */
import { mkdtempSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { afterEach, describe, expect, it } from "vitest";
import type { Address } from "../src/api/validate.ts";
import { migratePg, openPostgresStore } from "../src/store/postgres/index.ts";
import { migrate, openDatabase, sqliteStore } from "../src/store/sqlite/index.ts";
import { POSTGRES_URL, postgresAvailable } from "./services.ts";
import { dropSchema, freshSchemaName } from "./store/backends.ts";

const cleanups: (() => Promise<void> | void)[] = [];
afterEach(async () => {
  for (const cleanup of cleanups.splice(0).reverse()) await cleanup();
});

const ADDRESS = "0xBC4CA0EdA7647A8aB7C2061c2E118A18a936f13D" as Address;

const withPostgres = await postgresAvailable();

describe("an existing single-chain store", () => {
  it("SQLite: the known collections become ethereum's; base starts empty; chat settings start unset", async () => {
    const dataDir = mkdtempSync(join(tmpdir(), "chain-migration-"));
    cleanups.push(() => rmSync(dataDir, { recursive: true, force: true }));
    // The store as it was before chains (migration 9, the last on main before issue 17).
    const db = openDatabase(dataDir, "bot.sqlite", 9);
    db.prepare(
      `INSERT INTO known_collections (address, name, symbol, name_key, top_rank, source, seen_at)
       VALUES (?, 'Bored Ape Yacht Club', 'BAYC', 'boredapeyachtclub', 0, 'top', 5)`,
    ).run(ADDRESS);
    db.prepare(
      `INSERT INTO spam_reports (platform, chat_id, user_id, user_name, wallet, contract, token_id, kind, status, created_at, updated_at)
       VALUES ('telegram', 'c1', 'u1', 'Tester', '0xabc', ?, '', 'spam', 'sent', 1, 1)`,
    ).run(ADDRESS.toLowerCase());
    migrate(db);
    const store = sqliteStore(db);
    expect(await store.reports.forChat("telegram", "c1")).toMatchObject([
      { chain: "ethereum", wallet: "0xabc", status: "sent" },
    ]);
    cleanups.push(() => store.close());
    expect(db.prepare("SELECT chain, address FROM known_collections").all() as unknown[]).toEqual([
      { chain: "ethereum", address: ADDRESS },
    ]);
    expect(await store.collections.forChain("ethereum").load()).toMatchObject([
      { address: ADDRESS, name: "Bored Ape Yacht Club", symbol: "BAYC", rank: 0 },
    ]);
    expect(await store.collections.forChain("base").load()).toEqual([]);
    expect(await store.chatSettings.get("discord", "c1")).toEqual({ chain: undefined });
  });

  it.runIf(withPostgres)(
    "PostgreSQL: the known collections become ethereum's, keyed by (chain, address)",
    async () => {
      const schema = freshSchemaName();
      cleanups.push(() => dropSchema(schema));
      // Before chains: PostgreSQL migration 2.
      const old = await openPostgresStore({ url: POSTGRES_URL, schema, max: 2, through: 2 });
      cleanups.push(() => old.close());
      await old.pg.query(
        `INSERT INTO known_collections (address, name, symbol, name_key, top_rank, source, seen_at)
         VALUES ($1, 'Bored Ape Yacht Club', 'BAYC', 'boredapeyachtclub', 0, 'top', 5)`,
        [ADDRESS],
      );
      await old.pg.query(
        `INSERT INTO spam_reports (platform, chat_id, user_id, user_name, wallet, contract, token_id, kind, status, created_at, updated_at)
         VALUES ('telegram', 'c1', 'u1', 'Tester', '0xabc', $1, '', 'spam', 'sent', 1, 1)`,
        [ADDRESS.toLowerCase()],
      );
      await migratePg(old.pg);
      expect(await old.reports.forChat("telegram", "c1")).toMatchObject([
        { chain: "ethereum", status: "sent" },
      ]);
      // One report per person per chain: the same one on polygon is another.
      const again = {
        platform: "telegram",
        chatId: "c1",
        userId: "u1",
        userName: "Tester",
        wallet: "0xabc",
        contract: ADDRESS,
        tokenId: "",
        kind: "spam" as const,
        feedback: null,
      };
      expect((await old.reports.create(again, 2)).created).toBe(false);
      expect((await old.reports.create({ ...again, chain: "polygon" }, 2)).created).toBe(true);
      const { rows } = await old.pg.query("SELECT chain, address FROM known_collections");
      expect(rows).toEqual([{ chain: "ethereum", address: ADDRESS }]);
      expect(await old.collections.forChain("ethereum").load()).toMatchObject([
        { address: ADDRESS, name: "Bored Ape Yacht Club" },
      ]);
      // The same address may now be another collection on another chain.
      await old.collections.forChain("base").write({
        put: [
          {
            address: ADDRESS,
            name: "Another on Base",
            symbol: "",
            rank: undefined,
            source: "answer",
            seenAt: 6,
          },
        ],
        remove: [],
      });
      expect((await old.collections.forChain("base").load()).map((c) => c.name)).toEqual([
        "Another on Base",
      ]);
      expect(await old.chatSettings.get("telegram", "c1")).toEqual({ chain: undefined });
    },
  );
});
