import { afterAll, describe, expect, it } from "vitest";
import { openPostgresStore, type PostgresStore } from "../../src/store/postgres/index.ts";
import { openMemorySqliteStore } from "../../src/store/sqlite/index.ts";
import { POSTGRES_URL, postgresAvailable } from "../services.ts";
import { dropSchema, freshSchemaName } from "./backends.ts";

/**
 * The two backends' schemas after all migrations agree: the same tables, each with the same
 * columns of the same type family and nullability, and the same indexes (by their columns: names
 * differ, PostgreSQL naming its constraints' indexes and SQLite keeping a rowid for an INTEGER
 * PRIMARY KEY). A column, index or table added to one backend only fails here.
 */

/** Bookkeeping of one backend, not data: the migration log, and what SQLite keeps besides. */
const ONLY_SQLITE = new Set([
  // The first button table: it answers the ids it issued until they expire (SQLite migration 8);
  // no PostgreSQL store ever issued any.
  "button_actions_v1",
  // AUTOINCREMENT's counters.
  "sqlite_sequence",
]);
const ONLY_POSTGRES = new Set(["schema_migrations"]);

/** A column as both backends can say it: name, type family, whether it may be NULL. */
type Column = string;

interface Schema {
  tables: Record<string, Column[]>;
  /** "table (a, b)" per index, primary keys and UNIQUE constraints included. */
  indexes: string[];
}

function family(declared: string): string {
  const type = declared.toLowerCase();
  if (/int|serial/.test(type)) return "integer";
  if (/char|text|clob/.test(type)) return "text";
  if (/real|floa|doub|numeric|decimal/.test(type)) return "real";
  if (/blob|bytea/.test(type)) return "blob";
  if (/bool/.test(type)) return "boolean";
  if (/time|date/.test(type)) return "timestamp";
  return `unknown:${type}`;
}

function sqliteSchema(): Schema {
  const store = openMemorySqliteStore();
  try {
    const { db } = store;
    const names = db
      .prepare<[], { name: string }>(
        "SELECT name FROM sqlite_master WHERE type = 'table' ORDER BY name",
      )
      .all()
      .map((row) => row.name)
      .filter((name) => !ONLY_SQLITE.has(name));
    const tables: Record<string, Column[]> = {};
    const indexes: string[] = [];
    for (const table of names) {
      const columns = db
        .prepare<[], { name: string; type: string; notnull: number; pk: number }>(
          `SELECT name, type, "notnull", pk FROM pragma_table_info('${table}')`,
        )
        .all();
      tables[table] = columns
        .map((c) => `${c.name} ${family(c.type)}${c.notnull || c.pk ? " not null" : ""}`)
        .sort();
      // A primary key is an index in PostgreSQL; in SQLite an INTEGER PRIMARY KEY is the rowid.
      const key = columns.filter((c) => c.pk > 0).sort((a, b) => a.pk - b.pk);
      if (key.length > 0) indexes.push(`${table} (${key.map((c) => c.name).join(", ")})`);
      for (const index of db
        .prepare<[], { name: string; origin: string }>(
          `SELECT name, origin FROM pragma_index_list('${table}')`,
        )
        .all()) {
        if (index.origin === "pk") continue;
        const on = db
          .prepare<[], { name: string }>(
            `SELECT name FROM pragma_index_info('${index.name}') ORDER BY seqno`,
          )
          .all()
          .map((c) => c.name);
        indexes.push(`${table} (${on.join(", ")})`);
      }
    }
    return { tables, indexes: indexes.sort() };
  } finally {
    void store.close();
  }
}

async function postgresSchema(store: PostgresStore, schema: string): Promise<Schema> {
  const { rows: columns } = await store.pg.query<{
    table_name: string;
    column_name: string;
    data_type: string;
    is_nullable: string;
  }>(
    `SELECT table_name, column_name, data_type, is_nullable FROM information_schema.columns
      WHERE table_schema = $1`,
    [schema],
  );
  const tables: Record<string, Column[]> = {};
  for (const c of columns) {
    if (ONLY_POSTGRES.has(c.table_name)) continue;
    // SQLite has no boolean: it keeps one as INTEGER 0/1.
    const kind = family(c.data_type) === "boolean" ? "integer" : family(c.data_type);
    const list = tables[c.table_name] ?? [];
    list.push(`${c.column_name} ${kind}${c.is_nullable === "NO" ? " not null" : ""}`);
    tables[c.table_name] = list;
  }
  for (const list of Object.values(tables)) list.sort();
  const { rows: indexes } = await store.pg.query<{ table_name: string; columns: string[] }>(
    `SELECT t.relname AS table_name,
            array_agg(a.attname::text ORDER BY k.ord) AS columns
       FROM pg_index i
       JOIN pg_class t ON t.oid = i.indrelid
       JOIN pg_namespace n ON n.oid = t.relnamespace
       CROSS JOIN LATERAL unnest(i.indkey) WITH ORDINALITY AS k(attnum, ord)
       JOIN pg_attribute a ON a.attrelid = t.oid AND a.attnum = k.attnum
      WHERE n.nspname = $1
      GROUP BY i.indexrelid, t.relname`,
    [schema],
  );
  return {
    tables: Object.fromEntries(Object.entries(tables).sort(([a], [b]) => a.localeCompare(b))),
    indexes: indexes
      .filter((index) => !ONLY_POSTGRES.has(index.table_name))
      .map((index) => `${index.table_name} (${index.columns.join(", ")})`)
      .sort(),
  };
}

describe.runIf(await postgresAvailable())("SQLite and PostgreSQL schemas", () => {
  const schema = freshSchemaName();
  let store: PostgresStore | undefined;
  afterAll(async () => {
    await store?.close();
    await dropSchema(schema);
  });

  it("have the same tables, columns (type family, nullability) and indexes after all migrations", async () => {
    store = await openPostgresStore({ url: POSTGRES_URL, schema, max: 1 });
    const sqlite = sqliteSchema();
    const postgres = await postgresSchema(store, schema);
    expect(Object.keys(postgres.tables)).toEqual(Object.keys(sqlite.tables));
    for (const [table, columns] of Object.entries(sqlite.tables))
      expect(postgres.tables[table], table).toEqual(columns);
    expect(postgres.indexes).toEqual(sqlite.indexes);
  });
});
