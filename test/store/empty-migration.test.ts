/**
 * Migration numbers another change owns may be empty strings on a branch (SQLite 11, PostgreSQL
 * 4 here): both runners apply them as nothing, count them, and go on to the next.
 */
import { mkdtempSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { afterEach, describe, expect, it } from "vitest";
import { openPgDb } from "../../src/store/postgres/db.ts";
import { openDatabase } from "../../src/store/sqlite/db.ts";
import { POSTGRES_URL, postgresAvailable } from "../services.ts";
import { dropSchema, freshSchemaName } from "./backends.ts";

const cleanups: (() => unknown)[] = [];
afterEach(async () => {
  for (const cleanup of cleanups.splice(0).reverse()) await cleanup();
});

const hasTable = (names: { name: string }[], name: string) => names.some((n) => n.name === name);

const withPostgres = await postgresAvailable();

describe("an empty migration", () => {
  it("SQLite: 10 -> 11 (empty) adds nothing; 11 -> 12 adds the digests", () => {
    const dir = mkdtempSync(join(tmpdir(), "empty-migration-"));
    cleanups.push(() => rmSync(dir, { recursive: true, force: true }));
    const tables = (db: ReturnType<typeof openDatabase>) =>
      db.prepare("SELECT name FROM sqlite_master WHERE type = 'table'").all() as { name: string }[];
    const ten = openDatabase(dir, "bot.sqlite", 10);
    const before = tables(ten).length;
    ten.close();
    const eleven = openDatabase(dir, "bot.sqlite", 11);
    expect(eleven.pragma("user_version", { simple: true })).toBe(11);
    expect(tables(eleven)).toHaveLength(before);
    eleven.close();
    const latest = openDatabase(dir);
    cleanups.push(() => latest.close());
    expect(latest.pragma("user_version", { simple: true })).toBeGreaterThanOrEqual(12);
    expect(hasTable(tables(latest), "digest_runs")).toBe(true);
  });

  it.runIf(withPostgres)("PostgreSQL: 3 -> 4 (empty) is recorded; 5 adds the digests", async () => {
    const schema = freshSchemaName();
    cleanups.push(() => dropSchema(schema));
    const four = await openPgDb({ url: POSTGRES_URL, schema, through: 4 });
    const versions = async (db: typeof four) =>
      (await db.query<{ v: number }>("SELECT MAX(version) AS v FROM schema_migrations")).rows[0]?.v;
    expect(await versions(four)).toBe(4);
    await four.pool.end();
    const latest = await openPgDb({ url: POSTGRES_URL, schema });
    cleanups.push(() => latest.pool.end());
    expect(await versions(latest)).toBeGreaterThanOrEqual(5);
    const { rows } = await latest.query<{ r: string | null }>(
      "SELECT to_regclass('digest_runs')::text AS r",
    );
    expect(rows[0]?.r).toBe("digest_runs");
  });
});
