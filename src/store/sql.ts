import type { Kysely, Migration } from "kysely";

/**
 * The one query layer for both databases (issue 35): Kysely, a maintained, typed SQL builder with
 * a dialect for better-sqlite3 and one for pg, over the store's own connection (the SQLite handle,
 * the PostgreSQL pool). A feature's store is written once against it, and its migrations once with
 * Kysely's schema builder, wherever the dialects agree.
 *
 * Kysely is loaded on first use only: a bot whose features use none of it (the built-in ones keep
 * their prepared statements, whose hot paths it measured slower on SQLite) never loads it.
 *
 * On SQLite the connection is the store's single one. Kysely runs each statement synchronously
 * inside its own mutex, so single statements interleave safely with the other stores'; a
 * feature's transaction spanning awaits would not be isolated from them, so features write with
 * single statements (an upsert, an INSERT ... SELECT) and leave transactions to the store's own.
 */
export interface SqlLayer {
  readonly dialect: "sqlite" | "postgres";
  /** The builder over the store's connection; `withTables<T>()` types a feature's own tables. */
  db(): Promise<Kysely<unknown>>;
  /**
   * Runs the features' migrations not run yet, in name order, each once, in a transaction under
   * Kysely's migration lock (instances starting together wait for the first). Names are
   * "<feature>/<name>"; their record is the table `feature_migrations`.
   */
  migrate(migrations: Readonly<Record<string, Migration>>): Promise<string[]>;
}

/** The table that records the features' migrations, and its lock's. */
export const FEATURE_MIGRATIONS_TABLE = "feature_migrations";
const FEATURE_MIGRATIONS_LOCK_TABLE = "feature_migrations_lock";

/**
 * The layer over a dialect the store builds (Kysely's SqliteDialect over the handle, its
 * PostgresDialect over the pool). The store closes its connection itself: the builder is never
 * destroyed, which would close the handle or end the pool under the other stores.
 */
export function sqlLayer(
  dialect: SqlLayer["dialect"],
  makeDialect: (kysely: typeof import("kysely")) => import("kysely").Dialect,
): SqlLayer {
  let built: Promise<Kysely<unknown>> | undefined;
  const db = () => {
    built ??= import("kysely").then(
      (kysely) => new kysely.Kysely<unknown>({ dialect: makeDialect(kysely) }),
    );
    return built;
  };
  return {
    dialect,
    db,
    async migrate(migrations) {
      if (Object.keys(migrations).length === 0) return [];
      const { Migrator } = await import("kysely");
      const migrator = new Migrator({
        db: await db(),
        provider: { getMigrations: async () => ({ ...migrations }) },
        migrationTableName: FEATURE_MIGRATIONS_TABLE,
        migrationLockTableName: FEATURE_MIGRATIONS_LOCK_TABLE,
        // Features are added over time, each with its own names: a new feature's first migration
        // may sort before another's last one already run.
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
    },
  };
}

/** Prepared statements kept per SQLite connection for the query layer: its queries' SQL repeats. */
const STATEMENTS_KEPT = 200;

/**
 * The SQLite handle as Kysely's SqliteDialect uses it, with its prepared statements kept by SQL
 * text: Kysely's driver prepares every query anew, and preparing costs more than a small read
 * (`.prof`-style measure, 20,000 primary-key reads on one core: 23.9 µs a query as Kysely runs
 * it, 10.5 µs with statements kept, 1.4 µs for a statement prepared by hand).
 */
export function keptStatements<S>(database: { prepare(sql: string): S; close(): void }): {
  prepare(sql: string): S;
  close(): void;
} {
  const kept = new Map<string, S>();
  return {
    prepare(sql) {
      let statement = kept.get(sql);
      if (statement === undefined) {
        statement = database.prepare(sql);
        if (kept.size >= STATEMENTS_KEPT) kept.delete(kept.keys().next().value as string);
        kept.set(sql, statement);
      }
      return statement;
    },
    // The store closes its handle itself (see sqlLayer).
    close() {},
  };
}
