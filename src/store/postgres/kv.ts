import type { KeyValueStore, LeaseStore } from "../types.ts";
import { DB_NOW_MS, type PgDb } from "./db.ts";

/** Small named values: the poller's cursor, a pending gap note. */
export class PgKeyValueStore implements KeyValueStore {
  constructor(private readonly db: PgDb) {}

  async get(key: string): Promise<string | undefined> {
    const { rows } = await this.db.query<{ value: string }>("SELECT value FROM kv WHERE key = $1", [
      key,
    ]);
    return rows[0]?.value;
  }

  async set(key: string, value: string): Promise<void> {
    await this.db.query(
      "INSERT INTO kv (key, value) VALUES ($1, $2) ON CONFLICT (key) DO UPDATE SET value = excluded.value",
      [key, value],
    );
  }

  async delete(key: string): Promise<void> {
    await this.db.query("DELETE FROM kv WHERE key = $1", [key]);
  }
}

/**
 * A lease shared by every instance on the database, timed by the DATABASE's clock: expiry is
 * computed and compared with now() on the server, so instances whose clocks disagree still agree
 * on who leads. The `now` argument of acquire() is therefore ignored here.
 */
export class PgLeaseStore implements LeaseStore {
  constructor(private readonly db: PgDb) {}

  async acquire(
    name: string,
    holder: string,
    ttlMs: number,
    _now: number,
    isDead: (holder: string) => boolean = () => false,
  ): Promise<string> {
    // Free, ours or expired: taken (or renewed) in one statement; the row lock orders rivals.
    const taken = await this.db.query<{ holder: string }>(
      `INSERT INTO leases (name, holder, expires_at) VALUES ($1, $2, ${DB_NOW_MS} + $3)
       ON CONFLICT (name) DO UPDATE SET holder = excluded.holder, expires_at = excluded.expires_at
         WHERE leases.holder = excluded.holder OR leases.expires_at <= ${DB_NOW_MS}
       RETURNING holder`,
      [name, holder, Math.round(ttlMs)],
    );
    if (taken.rows[0]) return holder;
    const { rows } = await this.db.query<{ holder: string }>(
      "SELECT holder FROM leases WHERE name = $1",
      [name],
    );
    const current = rows[0]?.holder;
    if (current === undefined) return this.acquire(name, holder, ttlMs, _now, isDead);
    if (!isDead(current)) return current;
    // Its holder is known to be gone: taken from that holder only (not from one who took it since).
    const replaced = await this.db.query<{ holder: string }>(
      `UPDATE leases SET holder = $2, expires_at = ${DB_NOW_MS} + $3
        WHERE name = $1 AND holder = $4 RETURNING holder`,
      [name, holder, Math.round(ttlMs), current],
    );
    if (replaced.rows[0]) return holder;
    return this.acquire(name, holder, ttlMs, _now, () => false);
  }

  async release(name: string, holder: string): Promise<void> {
    await this.db.query("DELETE FROM leases WHERE name = $1 AND holder = $2", [name, holder]);
  }
}
