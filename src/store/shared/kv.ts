import { sql } from "kysely";
import type { Sql } from "../query.ts";
import type { KeyValueStore, LeaseStore } from "../types.ts";

/** Small named values: the poller's cursor, a pending gap note. */
export class SqlKeyValueStore implements KeyValueStore {
  constructor(private readonly sql: Sql) {}

  async get(key: string): Promise<string | undefined> {
    const { q } = this.sql;
    return (await this.sql.first(q.selectFrom("kv").select("value").where("key", "=", key)))?.value;
  }

  async set(key: string, value: string): Promise<void> {
    const { q } = this.sql;
    await this.sql.run(
      q
        .insertInto("kv")
        .values({ key, value })
        .onConflict((conflict) =>
          conflict.column("key").doUpdateSet((row) => ({ value: row.ref("excluded.value") })),
        ),
    );
  }

  async delete(key: string): Promise<void> {
    const { q } = this.sql;
    await this.sql.run(q.deleteFrom("kv").where("key", "=", key));
  }
}

/**
 * A lease so that one process (or one instance of many) does a piece of work: taken when free or
 * expired, renewed by its holder; the others see who holds it. On PostgreSQL it is timed by the
 * database's clock (expiry computed and compared on the server), so instances whose clocks
 * disagree still agree on who leads, and acquire()'s `now` is not used; on SQLite every process
 * shares the host's clock.
 */
export class SqlLeaseStore implements LeaseStore {
  constructor(private readonly sql: Sql) {}

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
    const { q } = this.sql;
    const clock = this.sql.clock(now);
    const expiresAt = sql<number>`${clock} + ${Math.round(ttlMs)}`;
    // Free, ours or expired: taken (or renewed) in one statement; the row's lock orders rivals.
    const taken = await this.sql.first(
      q
        .insertInto("leases")
        .values({ name, holder, expires_at: expiresAt })
        .onConflict((conflict) =>
          conflict
            .column("name")
            .doUpdateSet((row) => ({
              holder: row.ref("excluded.holder"),
              expires_at: row.ref("excluded.expires_at"),
            }))
            .where((row) =>
              row.or([
                row("leases.holder", "=", row.ref("excluded.holder")),
                row("leases.expires_at", "<=", clock),
              ]),
            ),
        )
        .returning("holder"),
    );
    if (taken) return holder;
    const current = (
      await this.sql.first(q.selectFrom("leases").select("holder").where("name", "=", name))
    )?.holder;
    if (current === undefined) return this.acquire(name, holder, ttlMs, now, isDead);
    if (!isDead(current)) return current;
    // Its holder is known to be gone: taken from that holder only (not from one who took it since).
    const replaced = await this.sql.first(
      q
        .updateTable("leases")
        .set({ holder, expires_at: expiresAt })
        .where("name", "=", name)
        .where("holder", "=", current)
        .returning("holder"),
    );
    if (replaced) return holder;
    return this.acquire(name, holder, ttlMs, now, () => false);
  }

  async release(name: string, holder: string): Promise<void> {
    const { q } = this.sql;
    await this.sql.run(
      q.deleteFrom("leases").where("name", "=", name).where("holder", "=", holder),
    );
  }
}
