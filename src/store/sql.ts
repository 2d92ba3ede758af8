import { type Dialect, Kysely, type Migration, Migrator, sql } from "kysely";
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
   * Runs the features' migrations not run yet, in name order, each once, under Kysely's migration
   * lock (PostgreSQL: instances starting together wait for the first, and each migration is one
   * transaction). Names are "<feature>/<name>"; their record is the table `feature_migrations`.
   * On SQLite, Kysely runs DDL outside a transaction (its adapter has no transactional DDL): a
   * migration that fails half-way leaves what it made, so a feature's migration is one statement
   * or safe to run again. They run before the chats connect, or, on a start on a full disk, once
   * there is room.
   */
  migrate(migrations: Readonly<Record<string, Migration>>): Promise<string[]>;
}

/** The table that records the features' migrations, and its lock's. */
const FEATURE_MIGRATIONS_TABLE = "feature_migrations";
const FEATURE_MIGRATIONS_LOCK_TABLE = "feature_migrations_lock";

/**
 * The layer over a dialect the store builds (Kysely's SqliteDialect over the handle, its
 * PostgresDialect over the pool). The store closes its connection itself: the builder is never
 * destroyed, which would close the handle or end the pool under the other stores.
 */
export function sqlLayer(runner: Sql, makeDialect: () => Dialect, schema?: string): SqlLayer {
  return {
    ...runner,
    async migrate(migrations) {
      if (Object.keys(migrations).length === 0) return [];
      // Kysely's own driver runs the migrations (its Migrator executes them); it is built for
      // them and dropped after, never destroyed (that would close the store's connection).
      const db = new Kysely<MigrationTables>({ dialect: makeDialect() });
      if (runner.dialect !== "postgres") return migrateOn(db, migrations, undefined);
      // PostgreSQL: instances starting together take turns for the whole run, on one connection
      // that holds a session lock. Kysely's own lock is taken only once its tables exist, and two
      // instances creating them at once fail ("relation feature_migrations_lock does not exist").
      return db.connection().execute(async (connection) => {
        await sql`SELECT pg_advisory_lock(hashtext(${FEATURE_MIGRATIONS_TABLE}))`.execute(
          connection,
        );
        try {
          return await migrateOn(connection, migrations, schema);
        } finally {
          await sql`SELECT pg_advisory_unlock(hashtext(${FEATURE_MIGRATIONS_TABLE}))`.execute(
            connection,
          );
        }
      });
    },
  };
}

type MigrationTables = Record<string, { name: string }>;

/** Runs the migrations not run yet on `db`; the names it ran. */
async function migrateOn(
  db: Kysely<MigrationTables>,
  migrations: Readonly<Record<string, Migration>>,
  schema: string | undefined,
): Promise<string[]> {
  // A feature taken off the list leaves its migrations run: they stand as done (an empty step,
  // never run again) instead of Kysely's "corrupted migrations" refusing every start.
  const done = await db
    .selectFrom(FEATURE_MIGRATIONS_TABLE)
    .select("name")
    .execute()
    .catch(() => []);
  const gone = Object.fromEntries(
    done
      .filter((row) => !(row.name in migrations))
      .map((row) => [row.name, { up: async () => {} }]),
  );
  const migrator = new Migrator({
    db,
    provider: { getMigrations: async () => ({ ...gone, ...migrations }) },
    migrationTableName: FEATURE_MIGRATIONS_TABLE,
    migrationLockTableName: FEATURE_MIGRATIONS_LOCK_TABLE,
    // PostgreSQL: the store's own schema. Without it Kysely takes a table of that name in any
    // schema of the database (another instance's, a test's) for its own and never makes it.
    ...(schema === undefined ? {} : { migrationTableSchema: schema }),
    // Features are added over time, each with its own names: a new feature's first migration may
    // sort before another's last one already run.
    allowUnorderedMigrations: true,
  });
  const { error, results } = await migrator.migrateToLatest();
  if (error) {
    const failed = results?.find((result) => result.status === "Error")?.migrationName;
    throw new Error(
      `the migration ${failed ?? "of a feature"} failed: ${error instanceof Error ? error.message : String(error)}`,
      { cause: error },
    );
  }
  return (results ?? []).map((result) => result.migrationName);
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
