import { type Dialect, Kysely, type Migration, sql } from "kysely";
import type { Sql } from "./query.ts";

/**
 * The one query layer for both databases (issue 35), as the features have it: the store's query
 * runner (src/store/query.ts: Kysely's typed builder, run on the store's own connection, the SQLite
 * handle or the PostgreSQL pool), on which every store is written once, and the runner of the
 * features' migrations, written once with Kysely's schema builder wherever the dialects agree.
 * A feature types its own tables with `sql.q.withTables<T>()`.
 */
export interface SqlLayer extends Sql {
  /**
   * Runs the features' migrations not run yet, in name order, each once: on PostgreSQL all in
   * one transaction under an advisory lock (instances starting together wait for the first), on
   * SQLite each in a transaction (its DDL is transactional too): one that fails half-way leaves
   * nothing. Names are "<feature>/<name>"; their record is the table `feature_migrations`. They
   * run before the chats connect, or, on a start on a full disk, once there is room.
   */
  migrate(migrations: Readonly<Record<string, Migration>>): Promise<string[]>;
}

/** The table that records the features' migrations (the one Kysely's Migrator made, kept). */
const FEATURE_MIGRATIONS_TABLE = "feature_migrations";

/**
 * The layer over a dialect the store builds (Kysely's SqliteDialect over the handle, its
 * PostgresDialect over the pool). The store closes its connection itself: the builder is never
 * destroyed, which would close the handle or end the pool under the other stores.
 */
export function sqlLayer(runner: Sql, makeDialect: () => Dialect): SqlLayer {
  return {
    ...runner,
    async migrate(migrations) {
      if (Object.keys(migrations).length === 0) return [];
      // Kysely's own driver runs the migrations (its Migrator executes them); it is built for
      // them and dropped after, never destroyed (that would close the store's connection).
      const db = new Kysely<MigrationTables>({ dialect: makeDialect() });
      // SQLite: DDL is transactional there too, so each migration is one transaction: one cut
      // half-way (a full disk) leaves nothing, and the next start runs it whole.
      if (runner.dialect !== "postgres") return migrateOn(db, migrations, true);
      // PostgreSQL: instances starting together take turns for the whole run, in one transaction
      // that holds a transaction lock (two creating the record's table at once would collide):
      // the transaction's end frees it, whatever happens (a session lock left on a pooled
      // connection by a failed unlock would hold every other instance's start).
      return db.transaction().execute(async (trx) => {
        await sql`SELECT pg_advisory_xact_lock(hashtext(${FEATURE_MIGRATIONS_TABLE}))`.execute(trx);
        return migrateOn(trx, migrations, false);
      });
    },
  };
}

type MigrationTables = Record<string, { name: string; timestamp: string }>;

/**
 * Runs the migrations not run yet on `db`, in name order, each recorded in the same transaction
 * as its work on PostgreSQL; the names it ran. The record is the table Kysely's Migrator kept
 * (name, timestamp), in the store's own schema (the connection's search path). Not Kysely's
 * Migrator: it reads every schema of the database to see whether its tables exist (so it took
 * another schema's for its own, and failed when another schema was dropped meanwhile), and it
 * refuses every start once a feature that ran a migration is taken off the list.
 */
async function migrateOn(
  db: Kysely<MigrationTables>,
  migrations: Readonly<Record<string, Migration>>,
  transactional: boolean,
): Promise<string[]> {
  await db.schema
    .createTable(FEATURE_MIGRATIONS_TABLE)
    .ifNotExists()
    .addColumn("name", "varchar(255)", (c) => c.notNull().primaryKey())
    .addColumn("timestamp", "varchar(255)", (c) => c.notNull())
    .execute();
  const done = new Set(
    (await db.selectFrom(FEATURE_MIGRATIONS_TABLE).select("name").execute()).map((r) => r.name),
  );
  const ran: string[] = [];
  for (const name of Object.keys(migrations).sort()) {
    const migration = migrations[name];
    if (!migration || done.has(name)) continue;
    const step = async (trx: Kysely<MigrationTables>) => {
      await migration.up(trx as Kysely<unknown>);
      await trx
        .insertInto(FEATURE_MIGRATIONS_TABLE)
        .values({ name, timestamp: new Date().toISOString() })
        .execute();
    };
    try {
      if (transactional) await db.transaction().execute(step);
      else await step(db);
    } catch (error) {
      throw new Error(
        `the migration ${name} failed: ${error instanceof Error ? error.message : String(error)}`,
        { cause: error },
      );
    }
    ran.push(name);
  }
  return ran;
}

/**
 * The SQLite handle as Kysely's SqliteDialect uses it for the migrations, with a close that does
 * nothing: the store closes its handle itself.
 */
export function unclosable<S>(database: { prepare(sql: string): S }): {
  prepare(sql: string): S;
  close(): void;
} {
  return { prepare: (sql) => database.prepare(sql), close() {} };
}
