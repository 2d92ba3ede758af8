import { PostgresDialect } from "kysely";
import { kernelStores } from "../shared/index.ts";
import { sqlLayer } from "../sql.ts";
import type { Store } from "../types.ts";
import { openPgDb, type PgDb, type PgOpenOptions } from "./db.ts";
import { postgresSql } from "./query.ts";

export {
  describeUrl,
  migratePg,
  openPgDb,
  PgDb,
  type PgOpenOptions,
  POSTGRES_MIGRATIONS,
} from "./db.ts";

/** The PostgreSQL store; `pg` is there for tests and the migration script. */
export interface PostgresStore extends Store {
  readonly pg: PgDb;
}

export interface PostgresStoreOptions extends PgOpenOptions {
  /** Stored button replies one person may hold (see SqlActionStore). */
  maxButtonsPerUser?: number;
}

/** The store over an open, migrated database; closing the store ends its pool. */
export function postgresStore(
  db: PgDb,
  options: { maxButtonsPerUser?: number } = {},
): PostgresStore {
  let closed: Promise<void> | undefined;
  const sql = postgresSql(db);
  return {
    pg: db,
    ...kernelStores(sql, options),
    sql: sqlLayer(sql, () => new PostgresDialect({ pool: db.pool })),
    async healthy() {
      try {
        return (await db.query("SELECT 1 AS ok")).rows.length === 1;
      } catch {
        return false;
      }
    },
    /** Waits for the queries under way (pool.end lets checked-out clients finish). */
    close() {
      closed ??= db.pool.end();
      return closed;
    },
  };
}

/**
 * Connects to DATABASE_URL, creates the schema if missing and migrates it (once, under a lock,
 * however many instances start together). An unreachable server is a StartupError naming
 * DATABASE_URL and the host.
 */
export async function openPostgresStore(options: PostgresStoreOptions): Promise<PostgresStore> {
  const { maxButtonsPerUser, ...open } = options;
  return postgresStore(
    await openPgDb(open),
    maxButtonsPerUser === undefined ? {} : { maxButtonsPerUser },
  );
}
