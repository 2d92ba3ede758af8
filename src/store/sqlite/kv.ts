import type { KeyValueStore, LeaseStore } from "../types.ts";
import type { Db } from "./db.ts";

/** Small named values: the poller's cursor, a pending gap note. */
export class SqliteKeyValueStore implements KeyValueStore {
  constructor(private readonly db: Db) {}

  async get(key: string): Promise<string | undefined> {
    return this.db
      .prepare<[string], { value: string }>("SELECT value FROM kv WHERE key = ?")
      .get(key)?.value;
  }

  async set(key: string, value: string): Promise<void> {
    this.db
      .prepare(
        "INSERT INTO kv (key, value) VALUES (?, ?) ON CONFLICT (key) DO UPDATE SET value = excluded.value",
      )
      .run(key, value);
  }

  async delete(key: string): Promise<void> {
    this.db.prepare("DELETE FROM kv WHERE key = ?").run(key);
  }
}

/**
 * A lease so that only one process on a data directory polls. It is taken when free or expired,
 * and renewed by its holder; another process sees who holds it.
 */
export class SqliteLeaseStore implements LeaseStore {
  constructor(private readonly db: Db) {}

  /**
   * Takes or renews the lease; returns the current holder. `isDead` may say that the holder is
   * known to be gone (a crashed process on this host), so a restart need not wait for expiry.
   */
  async acquire(
    name: string,
    holder: string,
    ttlMs: number,
    now: number,
    isDead: (holder: string) => boolean = () => false,
  ): Promise<string> {
    return this.db
      .transaction(() => {
        const row = this.db
          .prepare<[string], { holder: string; expires_at: number }>(
            "SELECT holder, expires_at FROM leases WHERE name = ?",
          )
          .get(name);
        if (!row || row.holder === holder || row.expires_at <= now || isDead(row.holder)) {
          this.db
            .prepare(
              "INSERT INTO leases (name, holder, expires_at) VALUES (?, ?, ?) ON CONFLICT (name) DO UPDATE SET holder = excluded.holder, expires_at = excluded.expires_at",
            )
            .run(name, holder, now + ttlMs);
          return holder;
        }
        return row.holder;
      })
      .immediate();
  }

  async release(name: string, holder: string): Promise<void> {
    this.db.prepare("DELETE FROM leases WHERE name = ? AND holder = ?").run(name, holder);
  }
}
