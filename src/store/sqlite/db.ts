import { accessSync, constants, mkdirSync } from "node:fs";
import { join } from "node:path";
import Database from "better-sqlite3";
import { StartupError } from "../../errors.ts";
import { isNoRoom } from "./disk.ts";
import { MIGRATIONS } from "./migrations.ts";

export type Db = Database.Database;

/** How many migrations the SQLite store has: a store opened by this code is at this version. */
export const SQLITE_MIGRATIONS = MIGRATIONS.length;

/** The data directory made if need be, and writable; else a StartupError saying which and why. */
function usableDataDir(dataDir: string): void {
  try {
    mkdirSync(dataDir, { recursive: true });
    accessSync(dataDir, constants.W_OK | constants.X_OK);
  } catch (error) {
    const code = (error as NodeJS.ErrnoException).code;
    throw new StartupError(
      `DATA_DIR ${dataDir} is not a writable directory${code ? ` (${code})` : ""}`,
      { cause: error },
    );
  }
}

/**
 * A connection to `path` in WAL mode. `exclusive`: SQLite's exclusive locking mode, set before the
 * first read, where the write-ahead log's index is kept in the process's memory instead of the
 * `-shm` file beside the database: a full disk has no room for that file (SQLITE_IOERR_SHMSIZE,
 * even to read), and this way the database can still be read. Other processes cannot read it
 * meanwhile.
 */
function connect(path: string, exclusive: boolean): Db {
  const db = new Database(path);
  try {
    if (exclusive) db.pragma("locking_mode = EXCLUSIVE");
    db.pragma("journal_mode = WAL");
    // Another process (a second bot, a backup) holding the write lock is waited for, not failed on.
    db.pragma("busy_timeout = 5000");
    db.pragma("foreign_keys = ON");
    db.pragma("synchronous = NORMAL");
    return db;
  } catch (error) {
    db.close();
    throw error;
  }
}

function readable(db: Db): boolean {
  try {
    db.prepare("SELECT count(*) FROM sqlite_master").get();
    return true;
  } catch {
    return false;
  }
}

const noRoomLine = (path: string, error: unknown) =>
  `Cannot migrate the database ${path}: the disk is full (${(error as { code: string }).code}); free space under DATA_DIR and start again`;

/**
 * Opens (creating) the database under `dataDir`, in WAL mode, and migrates it. A data directory
 * or database that cannot be used is a StartupError saying which path and why. `through` stops the
 * migrations early (for tests of an older store).
 */
export function openDatabase(
  dataDir: string,
  file = "bot.sqlite",
  through = MIGRATIONS.length,
): Db {
  usableDataDir(dataDir);
  const path = join(dataDir, file);
  let db: Db | undefined;
  try {
    db = connect(path, false);
    migrate(db, through);
    return db;
  } catch (error) {
    db?.close();
    if (isNoRoom(error)) throw new StartupError(noRoomLine(path, error), { cause: error });
    throw new StartupError(`Cannot open the database ${path}: ${(error as Error).message}`, {
      cause: error,
    });
  }
}

/** The bot's database as it could be opened: migrated, or waiting for room to migrate. */
export interface OpenedDatabase {
  db: Db;
  /** Why its migrations wait (the disk is full), or undefined when it is migrated. */
  migrationsWait: string | undefined;
  /** Opened in exclusive locking mode (no room for the `-shm` file): other processes cannot read. */
  exclusive: boolean;
}

/**
 * The bot's open: like openDatabase, but a full disk does not stop the start (issue 34). With no
 * room for the `-shm` file, the database is opened in exclusive locking mode (see connect); with
 * no room to migrate, it is returned as it is, its migrations waiting (`migrationsWait`):
 * commands that need no write answer, and the store runs the migrations once there is room.
 */
export function openDatabaseOnAnyDisk(dataDir: string, file = "bot.sqlite"): OpenedDatabase {
  usableDataDir(dataDir);
  const path = join(dataDir, file);
  let firstError: unknown;
  for (const exclusive of [false, true]) {
    let db: Db | undefined;
    try {
      db = connect(path, exclusive);
    } catch (error) {
      if (!isNoRoom(error) || exclusive) {
        const line = isNoRoom(error)
          ? noRoomLine(path, error)
          : `Cannot open the database ${path}: ${(error as Error).message}`;
        throw new StartupError(line, { cause: error });
      }
      firstError = error;
      continue;
    }
    try {
      migrate(db);
      return { db, migrationsWait: undefined, exclusive };
    } catch (error) {
      if (!isNoRoom(error)) {
        db.close();
        throw new StartupError(`Cannot open the database ${path}: ${(error as Error).message}`, {
          cause: error,
        });
      }
      // No room for the -shm file (SQLITE_IOERR_SHMSIZE): not even a read goes; once more
      // without it.
      if (!exclusive && !readable(db)) {
        db.close();
        firstError = error;
        continue;
      }
      const version = db.pragma("user_version", { simple: true }) as number;
      return {
        db,
        migrationsWait: `disk full: the database's migrations (${version} of ${MIGRATIONS.length} applied) wait for room (${(error as { code: string }).code})`,
        exclusive,
      };
    }
  }
  throw new StartupError(noRoomLine(path, firstError), { cause: firstError });
}

/** Applies the migrations not applied yet (up to `through`, for tests of an older store). */
export function migrate(db: Db, through = MIGRATIONS.length): number {
  const current = db.pragma("user_version", { simple: true }) as number;
  for (let version = current; version < through; version++) {
    db.transaction(() => {
      db.exec(MIGRATIONS[version] ?? "");
      db.pragma(`user_version = ${version + 1}`);
    }).immediate();
  }
  return through;
}
