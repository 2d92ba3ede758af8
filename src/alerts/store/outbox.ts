import { sql as raw } from "kysely";
import { anyOf, type Sql, type Tx, type Work } from "../../store/query.ts";
import { dueUnder, parseRules } from "../rules.ts";
import { leftOutBy } from "../wants.ts";
import {
  activeFor,
  claimOnServer,
  dueAlerts,
  enqueueMany,
  removeOnServer,
} from "./outbox-queries.ts";
import { toAlert, toContract } from "./rows.ts";
import type { DueAlert, NewBatch, NewContract, OutboxStore, SubscriptionTypes } from "./types.ts";

/** How long a stored error may be. */
const ERROR_MAX = 500;

/**
 * New contracts and the alerts owed for them, shared by every instance. Recording a batch is one
 * transaction (insert the unseen contracts, enqueue one row per matching subscription, move the
 * cursor), and marking an alert delivered is another, so a crash between them loses nothing.
 *
 * Where the dialects differ: a contract's alerts are enqueued in one statement on both (rows from
 * arrays on PostgreSQL, from JSON on SQLite); the other batches are one statement on PostgreSQL
 * (`ANY` arrays: one round trip whatever the number), and on SQLite one prepared statement per row
 * inside one transaction (no round trips; its INSERT OR IGNORE, OR REPLACE kept).
 */
export class SqlOutboxStore implements OutboxStore {
  constructor(private readonly sql: Sql) {}

  async record(
    input: NewBatch,
  ): Promise<{ fresh: NewContract[]; enqueued: number; hidden: number }> {
    const sql = this.sql;
    const { q } = sql;
    return sql.transaction(
      function* (tx) {
        const subscriptions =
          input.subscriptions === "active"
            ? (yield* tx.all(activeFor(sql, input.chain))).map((row) => ({
                id: row.id,
                types: row.types as SubscriptionTypes,
                badActors: row.bad_actors === "show" ? ("show" as const) : ("hide" as const),
                rules: parseRules(row.rules),
              }))
            : input.subscriptions;
        const dueAt = new Map(
          subscriptions.map((s) => [s.id, dueUnder(s.rules ?? {}, input.now)] as const),
        );
        const fresh: NewContract[] = [];
        let enqueued = 0;
        let hidden = 0;
        for (const contract of input.contracts) {
          const address = contract.address.toLowerCase();
          const seen = q.insertInto("seen_contracts").values({
            chain: input.chain,
            address,
            name: contract.name,
            types: JSON.stringify(contract.types),
            minter: contract.minter ?? null,
            tx_hash: contract.txHash ?? null,
            minted_at: contract.mintedAt ?? null,
            seen_at: input.now,
            minter_behavior: contract.minterBehavior ?? null,
          });
          const inserted = yield* tx.run(
            tx.dialect === "sqlite" ? seen.orIgnore() : seen.onConflict((c) => c.doNothing()),
          );
          if (inserted === 0) continue;
          fresh.push(contract);
          const owed: { id: number; dueAt: number; held: boolean }[] = [];
          for (const subscription of subscriptions) {
            const leftOut = leftOutBy(subscription, contract);
            if (leftOut === "bad") hidden++;
            if (leftOut) continue;
            const due = dueAt.get(subscription.id) ?? { dueAt: input.now, held: false };
            owed.push({ id: subscription.id, ...due });
          }
          if (owed.length === 0) continue;
          const batch = { chain: input.chain, address, note: input.note, now: input.now };
          enqueued += yield* tx.run(enqueueMany(sql, batch, owed));
        }
        yield* tx.run(
          q
            .insertInto("kv")
            .values({ key: input.cursorKey, value: input.cursor })
            .onConflict((conflict) =>
              conflict.column("key").doUpdateSet((row) => ({ value: row.ref("excluded.value") })),
            ),
        );
        return { fresh, enqueued, hidden };
      },
      { immediate: true },
    );
  }

  async unseen(chain: string, addresses: readonly string[]): Promise<string[]> {
    const { q } = this.sql;
    const distinct = [...new Set(addresses.map((address) => address.toLowerCase()))];
    if (distinct.length === 0) return [];
    const seen = new Set<string>();
    if (this.sql.dialect === "postgres") {
      // One round trip for the lot.
      const rows = await this.sql.all(
        q
          .selectFrom("seen_contracts")
          .select("address")
          .where("chain", "=", chain)
          .where("address", "=", anyOf(distinct, "text")),
      );
      for (const row of rows) seen.add(row.address);
    } else {
      // A primary-key read per address on the prepared statement (one text, whatever the number).
      for (const address of distinct) {
        const row = await this.sql.first(
          q
            .selectFrom("seen_contracts")
            .select(raw<number>`1`.as("n"))
            .where("chain", "=", chain)
            .where("address", "=", address),
        );
        if (row) seen.add(address);
      }
    }
    return distinct.filter((address) => !seen.has(address));
  }

  /** Out of the outbox and into suppressed_alerts, in one transaction. */
  async suppress(
    alerts: readonly DueAlert[],
    input: { reports: number; noted: boolean; now: number },
  ): Promise<void> {
    if (alerts.length === 0) return;
    const sql = this.sql;
    const { q } = sql;
    await sql.transaction(function* (tx) {
      yield* remove(sql, tx, alerts);
      // Once told, a channel stays told (noted is BOOLEAN in PostgreSQL, 0 or 1 in SQLite).
      const noted =
        tx.dialect === "postgres"
          ? raw<boolean>`suppressed_alerts.noted OR excluded.noted`
          : raw<boolean>`MAX(suppressed_alerts.noted, excluded.noted)`;
      for (const alert of alerts) {
        yield* tx.run(
          q
            .insertInto("suppressed_alerts")
            .values({
              platform: alert.platform,
              chat_id: alert.chatId,
              chain: alert.chain,
              contract: alert.contract.address.toLowerCase(),
              reports: input.reports,
              noted: input.noted,
              suppressed_at: input.now,
            })
            .onConflict((conflict) =>
              conflict
                .columns(["platform", "chat_id", "chain", "contract"])
                .doUpdateSet((row) => ({ reports: row.ref("excluded.reports"), noted })),
            ),
        );
      }
    });
  }

  async alreadyNoted(alerts: readonly DueAlert[]): Promise<Set<number>> {
    const { q } = this.sql;
    const ids = new Set<number>();
    if (alerts.length === 0) return ids;
    const key = (p: string, c: string, ch: string, a: string) =>
      `${p}\u0000${c}\u0000${ch}\u0000${a}`;
    if (this.sql.dialect === "postgres") {
      // One round trip for the lot.
      const list = (pick: (alert: DueAlert) => string) => raw`${alerts.map(pick)}::text[]`;
      const rows = await this.sql.all(
        q
          .selectFrom("suppressed_alerts")
          .select(["platform", "chat_id", "chain", "contract"])
          .where(
            raw<boolean>`noted AND (platform, chat_id, chain, contract) IN
              (SELECT * FROM unnest(${list((a) => a.platform)}, ${list((a) => a.chatId)},
                                    ${list((a) => a.chain)}, ${list((a) => a.contract.address.toLowerCase())}))`,
          ),
      );
      const noted = new Set(rows.map((r) => key(r.platform, r.chat_id, r.chain, r.contract)));
      for (const a of alerts)
        if (noted.has(key(a.platform, a.chatId, a.chain, a.contract.address.toLowerCase())))
          ids.add(a.id);
      return ids;
    }
    // SQLite: a primary-key read per alert on the prepared statement.
    for (const alert of alerts) {
      const row = await this.sql.first(
        q
          .selectFrom("suppressed_alerts")
          .select(raw<number>`1`.as("n"))
          .where("platform", "=", alert.platform)
          .where("chat_id", "=", alert.chatId)
          .where("chain", "=", alert.chain)
          .where("contract", "=", alert.contract.address.toLowerCase())
          .where("noted", "=", 1),
      );
      if (row) ids.add(alert.id);
    }
    return ids;
  }

  /** Alerts due now for active subscriptions, oldest first, claimed or not. */
  async due(now: number, limit: number, platform?: string): Promise<DueAlert[]> {
    return (await this.sql.all(dueAlerts(this.sql, { now, limit, platform }))).map(toAlert);
  }

  /**
   * Alerts due and unclaimed (or whose claim has expired), claimed for `claimMs`. On SQLite in
   * one immediate transaction (a read, then a stamp per alert, with the write lock held
   * throughout); on PostgreSQL in one statement (claimOnServer), timed by the database's clock.
   */
  async claim(input: {
    now: number;
    limit: number;
    platform?: string | undefined;
    holder: string;
    claimMs: number;
    isDead?: ((holder: string) => boolean) | undefined;
  }): Promise<DueAlert[]> {
    const sql = this.sql;
    const { q } = sql;
    // The holders whose claims are live, of which those known to be gone (not this one).
    const holders = q
      .selectFrom("outbox")
      .select("claimed_by")
      .distinct()
      .where("claimed_until", ">", sql.clock(input.now))
      .where("claimed_by", "is not", null);
    const dead = (rows: readonly { claimed_by: string | null }[]) =>
      rows
        .map((row) => row.claimed_by as string)
        .filter((other) => other !== input.holder && input.isDead?.(other));
    const free = q.updateTable("outbox").set({ claimed_until: null, claimed_by: null });
    if (sql.dialect === "postgres") {
      if (input.isDead) {
        const gone = dead(await sql.all(holders));
        if (gone.length > 0) await sql.run(free.where("claimed_by", "=", anyOf(gone, "text")));
      }
      const rows = await sql.all(claimOnServer(sql, input));
      return rows.sort((a, b) => a.due_at - b.due_at || a.id - b.id).map(toAlert);
    }
    return sql.transaction(
      function* (tx) {
        if (input.isDead)
          for (const other of dead(yield* tx.all(holders)))
            yield* tx.run(free.where("claimed_by", "=", other));
        const alerts = yield* tx.all(dueAlerts(sql, { ...input, unclaimedAt: input.now }));
        for (const alert of alerts)
          yield* tx.run(
            q
              .updateTable("outbox")
              .set({ claimed_until: input.now + input.claimMs, claimed_by: input.holder })
              .where("id", "=", alert.id),
          );
        return alerts.map(toAlert);
      },
      { immediate: true },
    );
  }

  /** Removes delivered alerts from the outbox and records them, in one transaction. */
  async delivered(alerts: readonly DueAlert[], now: number): Promise<void> {
    if (alerts.length === 0) return;
    const sql = this.sql;
    const { q } = sql;
    await sql.transaction(function* (tx) {
      yield* remove(sql, tx, alerts);
      if (tx.dialect === "postgres") {
        yield* tx.run(
          q
            .insertInto("deliveries")
            .columns(["subscription_id", "contract", "delivered_at"])
            .expression(
              raw`SELECT s, c, ${now} FROM unnest(${alerts.map((a) => a.subscriptionId)}::bigint[],
                                                 ${alerts.map((a) => a.contract.address)}::text[]) AS t (s, c)`,
            )
            .onConflict((conflict) => conflict.doNothing()),
        );
        return;
      }
      for (const alert of alerts)
        yield* tx.run(
          q.insertInto("deliveries").orIgnore().values({
            subscription_id: alert.subscriptionId,
            contract: alert.contract.address,
            delivered_at: now,
          }),
        );
    });
  }

  /** Tries again later; `countAttempt` is false for rate limits (not the alert's fault). */
  async retryLater(
    alerts: readonly DueAlert[],
    dueAt: number,
    error: string,
    countAttempt: boolean,
  ): Promise<void> {
    if (alerts.length === 0) return;
    const sql = this.sql;
    const update = sql.q.updateTable("outbox").set((row) => ({
      due_at: dueAt,
      last_error: error.slice(0, ERROR_MAX),
      attempts: row("attempts", "+", countAttempt ? 1 : 0),
      claimed_until: null,
      claimed_by: null,
    }));
    // PostgreSQL: one statement; SQLite: one per alert, in one transaction.
    if (sql.dialect === "postgres")
      await sql.run(
        update.where(
          "id",
          "=",
          anyOf(
            alerts.map((a) => a.id),
            "bigint",
          ),
        ),
      );
    else
      await sql.transaction(function* (tx) {
        for (const alert of alerts) yield* tx.run(update.where("id", "=", alert.id));
      });
  }

  /**
   * Gives up on alerts: out of the outbox and into failed_alerts with their last error, in one
   * transaction. They are never tried again.
   */
  async giveUp(alerts: readonly DueAlert[], error: string, now: number): Promise<void> {
    if (alerts.length === 0) return;
    const sql = this.sql;
    const { q } = sql;
    const lastError = error.slice(0, ERROR_MAX);
    await sql.transaction(function* (tx) {
      yield* remove(sql, tx, alerts);
      if (tx.dialect === "postgres") {
        yield* tx.run(
          q
            .insertInto("failed_alerts")
            .columns(["subscription_id", "contract", "attempts", "last_error", "failed_at"])
            .expression(
              raw`SELECT s, c, n, ${lastError}, ${now}
                    FROM unnest(${alerts.map((a) => a.subscriptionId)}::bigint[],
                                ${alerts.map((a) => a.contract.address)}::text[],
                                ${alerts.map((a) => a.attempts + 1)}::int[]) AS t (s, c, n)`,
            )
            .onConflict((conflict) =>
              conflict.columns(["subscription_id", "contract"]).doUpdateSet((row) => ({
                attempts: row.ref("excluded.attempts"),
                last_error: row.ref("excluded.last_error"),
                failed_at: row.ref("excluded.failed_at"),
              })),
            ),
        );
        return;
      }
      for (const alert of alerts)
        yield* tx.run(
          q
            .insertInto("failed_alerts")
            .orReplace()
            .values({
              subscription_id: alert.subscriptionId,
              contract: alert.contract.address,
              attempts: alert.attempts + 1,
              last_error: lastError,
              failed_at: now,
            }),
        );
    });
  }

  async seenSince(chain: string, since: number, limit: number): Promise<NewContract[]> {
    const { q } = this.sql;
    const rows = await this.sql.all(
      q
        .selectFrom("seen_contracts")
        .select(["address", "name", "types", "minter", "tx_hash", "minted_at", "minter_behavior"])
        .where("chain", "=", chain)
        .where("seen_at", ">=", since)
        .orderBy("seen_at")
        .orderBy("address")
        .limit(limit),
    );
    return rows.map(toContract);
  }

  async depth(): Promise<number> {
    return this.count("outbox");
  }

  async deliveredCount(): Promise<number> {
    return this.count("deliveries");
  }

  private async count(table: "outbox" | "deliveries"): Promise<number> {
    const { q } = this.sql;
    const row = await this.sql.first(
      q.selectFrom(table).select((row) => row.fn.countAll<number>().as("n")),
    );
    return Number(row?.n ?? 0);
  }
}

/** The alerts' rows out of the outbox: one statement on PostgreSQL, one per alert on SQLite. */
function* remove(sql: Sql, tx: Tx, alerts: readonly DueAlert[]): Work<void> {
  if (tx.dialect === "postgres") {
    yield* tx.run(
      removeOnServer(
        sql,
        alerts.map((a) => a.id),
      ),
    );
    return;
  }
  for (const alert of alerts) yield* tx.run(sql.q.deleteFrom("outbox").where("id", "=", alert.id));
}
