import Database from "better-sqlite3";
import { SqliteDialect } from "kysely";
import { kernelStores } from "../shared/index.ts";
import { sqlLayer, unclosable } from "../sql.ts";
import type { Store, StoreChore } from "../types.ts";
import { type Db, migrate, openDatabaseOnAnyDisk } from "./db.ts";
import { DiskState, isNoRoom, watchWrites } from "./disk.ts";
import { sqliteSql } from "./query.ts";

export { type Db, migrate, openDatabase, openDatabaseOnAnyDisk } from "./db.ts";

/** The SQLite store; `db` is there for operators' checks and tests that look at the tables. */
export interface SqliteStore extends Store {
  readonly db: Db;
  diskFull(): string | undefined;
}

export interface SqliteStoreOptions {
  /** Stored button replies one person may hold (see SqlActionStore). */
  maxButtonsPerUser?: number;
  /**
   * Checkpoint the write-ahead log every this many ms instead of inside the commit that crosses
   * 1,000 pages (a command in a few hundred waited for its fsyncs): the store's `chores()` say
   * so, and the bot runs it as a job. Off when absent.
   */
  checkpointEveryMs?: number;
  /** The directory the database is in: its free space is looked at (see DiskState). */
  dataDir?: string;
  /**
   * Why the database's migrations wait for room (a start on a full disk): the store's `migrations`
   * chore (run first, as a job) tries them again every `checkpointEveryMs` (or second) until they
   * run; `waiting()` says why meanwhile.
   */
  migrationsWait?: string;
}

/**
 * While the migrations wait (a start on a full disk), a statement over a table or column they
 * have not made yet is prepared when first used, not at once: the stores prepare some statements
 * when built, and the bot must start; until the migrations have run, using one fails (that
 * command's apology), and afterwards it works.
 */
function preparedWhenMigrated(db: Db): void {
  const prepare = db.prepare.bind(db);
  db.prepare = ((source: string) => {
    try {
      return prepare(source);
    } catch (error) {
      if (!/no such (table|column)/.test((error as Error).message)) throw error;
      let statement: ReturnType<Db["prepare"]> | undefined;
      return new Proxy({} as ReturnType<Db["prepare"]>, {
        get(_target, key) {
          statement ??= prepare(source);
          const value = Reflect.get(statement, key, statement);
          return typeof value === "function" ? value.bind(statement) : value;
        },
      });
    }
  }) as Db["prepare"];
}

/** The store over an open, migrated database; closing the store closes the database. */
export function sqliteStore(db: Db, options: SqliteStoreOptions = {}): SqliteStore {
  const disk = new DiskState(db, options.dataDir);
  watchWrites(db, disk);
  disk.checkFreeSpace();
  let migrationsWait = options.migrationsWait;
  if (migrationsWait !== undefined) {
    disk.markFull(migrationsWait);
    preparedWhenMigrated(db);
  }
  let migrated: () => void = () => {};
  const ready = new Promise<void>((resolve) => {
    migrated = resolve;
  });
  if (migrationsWait === undefined) migrated();
  const chores: StoreChore[] = [];
  if (migrationsWait !== undefined)
    // Tried again every round until they run (a job with its health: /healthz says why meanwhile).
    chores.push({
      name: "migrations",
      everyMs: options.checkpointEveryMs ?? 1_000,
      first: true,
      run: () => {
        if (migrationsWait === undefined || !db.open) return true;
        try {
          migrate(db);
        } catch (error) {
          if (!isNoRoom(error))
            migrationsWait = `the database's migrations failed: ${(error as Error).message}`;
          return false;
        }
        migrationsWait = undefined;
        migrated();
        return true;
      },
    });
  if (options.checkpointEveryMs !== undefined) {
    db.pragma("wal_autocheckpoint = 0");
    // At once: what a previous run left in the log on a full disk says so before any write.
    disk.checkpoint();
    // A checkpoint on a full disk fails: the disk is marked full, the process goes on.
    chores.push({
      name: "checkpoint",
      everyMs: options.checkpointEveryMs,
      run: () => !db.open || disk.checkpoint(),
    });
  }
  const sql = sqliteSql(db);
  return {
    db,
    ...kernelStores(sql, options),
    sql: sqlLayer(sql, () => new SqliteDialect({ database: unclosable(db) })),
    async healthy() {
      try {
        return db.open && db.prepare("SELECT 1 AS ok").get() !== undefined;
      } catch {
        return false;
      }
    },
    diskFull: () => disk.full,
    waiting: () => migrationsWait,
    ready: () => ready,
    chores: () => chores,
    async close() {
      if (db.open) db.close();
    },
  };
}

/**
 * Opens (creating and migrating) the database under `dataDir` in WAL mode; a directory or
 * database that cannot be used is a StartupError saying which path and why.
 */
export function openSqliteStore(dataDir: string, options: SqliteStoreOptions = {}): SqliteStore {
  const { db, migrationsWait } = openDatabaseOnAnyDisk(dataDir);
  return sqliteStore(db, {
    ...options,
    dataDir,
    ...(migrationsWait === undefined ? {} : { migrationsWait }),
  });
}

/** A store in memory, gone when closed: for tests and runs that keep nothing. */
export function openMemorySqliteStore(options: SqliteStoreOptions = {}): SqliteStore {
  const db = new Database(":memory:");
  db.pragma("foreign_keys = ON");
  migrate(db);
  const { maxButtonsPerUser } = options;
  return sqliteStore(db, maxButtonsPerUser === undefined ? {} : { maxButtonsPerUser });
}
