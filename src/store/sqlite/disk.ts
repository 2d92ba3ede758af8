import { statfsSync } from "node:fs";
import type Database from "better-sqlite3";

/** The database handle (db.ts's Db), named here without importing db.ts, which uses isNoRoom. */
type Db = Database.Database;

/**
 * What SQLite says when a write finds no room: SQLITE_FULL (the file system or max_page_count),
 * and the I/O errors a file system out of space gives on the paths that do not map ENOSPC to it.
 */
const NO_ROOM = new Set([
  "SQLITE_FULL",
  "SQLITE_IOERR_WRITE",
  "SQLITE_IOERR_FSYNC",
  "SQLITE_IOERR_DIR_FSYNC",
  "SQLITE_IOERR_TRUNCATE",
  "SQLITE_IOERR_SHMSIZE",
]);

export function isNoRoom(error: unknown): boolean {
  const code = (error as { code?: unknown } | null)?.code;
  return typeof code === "string" && NO_ROOM.has(code);
}

/**
 * Whether the store can write, as its writes found it: a write that found no room marks the disk
 * full (with why) until a probe finds room again. Only the probe clears it: some writes still
 * succeed on a full disk (into pages with room), and health must not flap with them.
 */
export class DiskState {
  private why: string | undefined;

  constructor(
    private readonly db: Db,
    private readonly dir: string | undefined,
  ) {}

  /** Why writes fail for lack of room, or undefined while they do not. */
  get full(): string | undefined {
    return this.why;
  }

  /** Notes a failed write; whether it failed for lack of room. */
  failed(error: unknown): boolean {
    if (!isNoRoom(error)) return false;
    this.why ??= `disk full: ${(error as { code: string }).code} on a write to the database`;
    return true;
  }

  /** Marks the disk full for a reason found elsewhere (migrations that found no room at open). */
  markFull(why: string): void {
    this.why ??= why;
  }

  /** At open: a file system with no room left is said at once, before any write fails. */
  checkFreeSpace(): string | undefined {
    if (this.dir === undefined || this.freeBytes() > 0) return undefined;
    this.why ??= `disk full: no free space under ${this.dir}`;
    return this.why;
  }

  /**
   * Checkpoints the write-ahead log, the checkpoint job's round; on a full disk it fails (the
   * database file must grow) and marks the disk full instead of ending the process (false). While
   * marked, it also looks for room (free space, and a page the database may allocate: rolled
   * back, so nothing is written) and clears the mark when there is.
   */
  checkpoint(): boolean {
    try {
      this.db.pragma("wal_checkpoint(PASSIVE)");
      if (this.why !== undefined && this.roomAgain()) this.why = undefined;
      return true;
    } catch (error) {
      if (!this.failed(error)) throw error;
      return false;
    }
  }

  private roomAgain(): boolean {
    if (this.dir !== undefined && this.freeBytes() === 0) return false;
    this.db.exec("SAVEPOINT disk_probe");
    try {
      // More than a page: it needs pages of its own, as a growing table would.
      const bytes = (this.db.pragma("page_size", { simple: true }) as number) * 2;
      this.db
        .prepare("INSERT OR REPLACE INTO kv (key, value) VALUES ('disk_probe', zeroblob(?))")
        .run(bytes);
      return true;
    } catch {
      // No room, or another process holding the write lock: no answer yet; the next tick asks.
      return false;
    } finally {
      // A write that finds no room may have rolled the whole transaction back already.
      if (this.db.inTransaction) this.db.exec("ROLLBACK TO disk_probe; RELEASE disk_probe");
    }
  }

  private freeBytes(): number {
    try {
      const stats = statfsSync(this.dir ?? ".");
      return stats.bavail * stats.bsize;
    } catch {
      // A file system that cannot say is not taken for a full one.
      return Number.POSITIVE_INFINITY;
    }
  }
}

/**
 * Makes every write on `db` report a failure for lack of room to `disk` (and still throw it):
 * statements that write, exec, and transactions (whose COMMIT is where a full disk shows in WAL
 * mode). Done on the connection, so no store class has to remember it.
 */
export function watchWrites(db: Db, disk: DiskState): void {
  const watched = <F extends (...args: never[]) => unknown>(fn: F): F =>
    ((...args: Parameters<F>) => {
      try {
        return fn(...args);
      } catch (error) {
        disk.failed(error);
        throw error;
      }
    }) as F;
  const prepare = db.prepare.bind(db);
  db.prepare = ((source: string) => {
    const statement = prepare(source);
    if (statement.readonly) return statement;
    statement.run = watched(statement.run.bind(statement));
    statement.get = watched(statement.get.bind(statement));
    statement.all = watched(statement.all.bind(statement));
    return statement;
  }) as Db["prepare"];
  db.exec = watched(db.exec.bind(db));
  const transaction = db.transaction.bind(db);
  db.transaction = ((fn: (...args: never[]) => unknown) => {
    const tx = transaction(fn);
    const outer = watched(tx) as typeof tx;
    outer.deferred = watched(tx.deferred);
    outer.immediate = watched(tx.immediate);
    outer.exclusive = watched(tx.exclusive);
    outer.default = outer;
    return outer;
  }) as Db["transaction"];
}
