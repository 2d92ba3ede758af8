import type { Statement } from "better-sqlite3";
import { dueUnder, parseRules } from "../../alerts/rules.ts";
import { leftOutBy } from "../../alerts/wants.ts";
import { type ContractRow, type DueRow, toAlert, toContract } from "../rows.ts";
import { chatNotPaused } from "../rows-chat-pause.ts";
import type { DueAlert, NewBatch, NewContract, OutboxStore, Subscription } from "../types.ts";
import type { Db } from "./db.ts";

/**
 * New contracts and the alerts owed for them. Recording a batch is one transaction (insert
 * the unseen contracts, enqueue one row per matching subscription, move the cursor), and
 * marking an alert delivered is another, so a crash between them loses nothing.
 */
export class SqliteOutboxStore implements OutboxStore {
  private readonly statements = new Map<string, Statement>();

  constructor(private readonly db: Db) {}

  /**
   * The statement for `source`, compiled on first use and kept: the delivery worker marks every
   * send delivered, and compiling its two statements cost more than running them.
   */
  private statement<P extends unknown[] = unknown[], R = unknown>(source: string): Statement<P, R> {
    let statement = this.statements.get(source);
    if (!statement) {
      statement = this.db.prepare(source);
      this.statements.set(source, statement);
    }
    return statement as unknown as Statement<P, R>;
  }

  async record(
    input: NewBatch,
  ): Promise<{ fresh: NewContract[]; enqueued: number; hidden: number }> {
    const insertSeen = this.statement(
      "INSERT OR IGNORE INTO seen_contracts (chain, address, name, types, minter, tx_hash, minted_at, seen_at, minter_behavior) VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?)",
    );
    const enqueue = this.statement(
      "INSERT OR IGNORE INTO outbox (subscription_id, chain, contract, note, due_at, created_at, held) VALUES (?, ?, ?, ?, ?, ?, ?)",
    );
    const setCursor = this.statement(
      "INSERT INTO kv (key, value) VALUES (?, ?) ON CONFLICT (key) DO UPDATE SET value = excluded.value",
    );
    const active = this.statement<
      [string],
      Pick<Subscription, "id" | "types"> & { bad_actors: string; rules: string | null }
    >(
      `SELECT id, types, bad_actors, rules FROM subscriptions s WHERE ${chatNotPaused("s")} AND chain = ? ORDER BY id`,
    );
    return this.db
      .transaction(() => {
        const subscriptions =
          input.subscriptions === "active"
            ? active.all(input.chain).map((row) => ({
                id: row.id,
                types: row.types,
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
          const inserted = insertSeen.run(
            input.chain,
            contract.address.toLowerCase(),
            contract.name,
            JSON.stringify(contract.types),
            contract.minter ?? null,
            contract.txHash ?? null,
            contract.mintedAt ?? null,
            input.now,
            contract.minterBehavior ?? null,
          ).changes;
          if (inserted === 0) continue;
          fresh.push(contract);
          for (const subscription of subscriptions) {
            const leftOut = leftOutBy(subscription, contract);
            if (leftOut === "bad") hidden++;
            if (leftOut) continue;
            const due = dueAt.get(subscription.id) ?? { dueAt: input.now, held: false };
            enqueued += enqueue.run(
              subscription.id,
              input.chain,
              contract.address.toLowerCase(),
              input.note,
              due.dueAt,
              input.now,
              due.held ? 1 : 0,
            ).changes;
          }
        }
        setCursor.run(input.cursorKey, input.cursor);
        return { fresh, enqueued, hidden };
      })
      .immediate();
  }

  async unseen(chain: string, addresses: readonly string[]): Promise<string[]> {
    const seen = this.statement<[string, string], { n: number }>(
      "SELECT 1 AS n FROM seen_contracts WHERE chain = ? AND address = ?",
    );
    const distinct = [...new Set(addresses.map((address) => address.toLowerCase()))];
    return distinct.filter((address) => seen.get(chain, address) === undefined);
  }

  /** Out of the outbox and into suppressed_alerts, in one transaction. */
  async suppress(
    alerts: readonly DueAlert[],
    input: { reports: number; noted: boolean; now: number },
  ): Promise<void> {
    const remove = this.statement("DELETE FROM outbox WHERE id = ?");
    const log = this.statement(
      `INSERT INTO suppressed_alerts (platform, chat_id, chain, contract, reports, noted, suppressed_at)
       VALUES (?, ?, ?, ?, ?, ?, ?)
       ON CONFLICT (platform, chat_id, chain, contract) DO UPDATE
         SET reports = excluded.reports, noted = MAX(noted, excluded.noted)`,
    );
    this.db.transaction(() => {
      for (const alert of alerts) {
        remove.run(alert.id);
        log.run(
          alert.platform,
          alert.chatId,
          alert.chain,
          alert.contract.address.toLowerCase(),
          input.reports,
          input.noted ? 1 : 0,
          input.now,
        );
      }
    })();
  }

  async alreadyNoted(alerts: readonly DueAlert[]): Promise<Set<number>> {
    const noted = this.statement<[string, string, string, string], { n: number }>(
      "SELECT 1 AS n FROM suppressed_alerts WHERE platform = ? AND chat_id = ? AND chain = ? AND contract = ? AND noted = 1",
    );
    const ids = new Set<number>();
    for (const alert of alerts)
      if (
        noted.get(alert.platform, alert.chatId, alert.chain, alert.contract.address.toLowerCase())
      )
        ids.add(alert.id);
    return ids;
  }

  /** Alerts due now for active subscriptions, oldest first, claimed or not. */
  async due(now: number, limit: number, platform?: string): Promise<DueAlert[]> {
    return this.selectDue(now, limit, platform, false);
  }

  /** Alerts due and unclaimed (or claimed before `now - claimMs`), claimed in one transaction. */
  async claim(input: {
    now: number;
    limit: number;
    platform?: string | undefined;
    holder: string;
    claimMs: number;
    isDead?: ((holder: string) => boolean) | undefined;
  }): Promise<DueAlert[]> {
    const stamp = this.statement(
      "UPDATE outbox SET claimed_until = ?, claimed_by = ? WHERE id = ?",
    );
    const holders = this.statement<[number], { claimed_by: string }>(
      "SELECT DISTINCT claimed_by FROM outbox WHERE claimed_until > ? AND claimed_by IS NOT NULL",
    );
    const free = this.statement(
      "UPDATE outbox SET claimed_until = NULL, claimed_by = NULL WHERE claimed_by = ?",
    );
    return this.db
      .transaction(() => {
        if (input.isDead)
          for (const { claimed_by: other } of holders.all(input.now))
            if (other !== input.holder && input.isDead(other)) free.run(other);
        const alerts = this.selectDue(input.now, input.limit, input.platform, true);
        for (const alert of alerts) stamp.run(input.now + input.claimMs, input.holder, alert.id);
        return alerts;
      })
      .immediate();
  }

  private selectDue(
    now: number,
    limit: number,
    platform: string | undefined,
    unclaimed: boolean,
  ): DueAlert[] {
    return this.statement<[number, string | null, string | null, number, number, number], DueRow>(
      `SELECT o.id, o.subscription_id, s.platform, s.chat_id, o.chain, o.attempts, o.note, o.held,
                c.address, c.name, c.types, c.minter, c.tx_hash, c.minted_at, c.minter_behavior
           FROM outbox o
           JOIN subscriptions s ON s.id = o.subscription_id AND ${chatNotPaused("s")}
           JOIN seen_contracts c ON c.chain = o.chain AND c.address = o.contract
          WHERE o.due_at <= ? AND (? IS NULL OR s.platform = ?)
            AND (? = 0 OR o.claimed_until IS NULL OR o.claimed_until <= ?)
          ORDER BY o.due_at, o.id
          LIMIT ?`,
    )
      .all(now, platform ?? null, platform ?? null, unclaimed ? 1 : 0, now, limit)
      .map(toAlert);
  }

  /** Removes delivered alerts from the outbox and records them, in one transaction. */
  async delivered(alerts: readonly DueAlert[], now: number): Promise<void> {
    const remove = this.statement("DELETE FROM outbox WHERE id = ?");
    const log = this.statement(
      "INSERT OR IGNORE INTO deliveries (subscription_id, contract, delivered_at) VALUES (?, ?, ?)",
    );
    this.db.transaction(() => {
      for (const alert of alerts) {
        remove.run(alert.id);
        log.run(alert.subscriptionId, alert.contract.address, now);
      }
    })();
  }

  /** Tries again later; `countAttempt` is false for rate limits (not the alert's fault). */
  async retryLater(
    alerts: readonly DueAlert[],
    dueAt: number,
    error: string,
    countAttempt: boolean,
  ): Promise<void> {
    const update = this.statement(
      "UPDATE outbox SET due_at = ?, last_error = ?, attempts = attempts + ?, claimed_until = NULL, claimed_by = NULL WHERE id = ?",
    );
    this.db.transaction(() => {
      for (const alert of alerts)
        update.run(dueAt, error.slice(0, 500), countAttempt ? 1 : 0, alert.id);
    })();
  }

  /**
   * Gives up on alerts: out of the outbox and into failed_alerts with their last error, in one
   * transaction. They are never tried again.
   */
  async giveUp(alerts: readonly DueAlert[], error: string, now: number): Promise<void> {
    const remove = this.statement("DELETE FROM outbox WHERE id = ?");
    const log = this.statement(
      "INSERT OR REPLACE INTO failed_alerts (subscription_id, contract, attempts, last_error, failed_at) VALUES (?, ?, ?, ?, ?)",
    );
    this.db.transaction(() => {
      for (const alert of alerts) {
        remove.run(alert.id);
        log.run(
          alert.subscriptionId,
          alert.contract.address,
          alert.attempts + 1,
          error.slice(0, 500),
          now,
        );
      }
    })();
  }

  async seenSince(chain: string, since: number, limit: number): Promise<NewContract[]> {
    return this.statement<[string, number, number], ContractRow>(
      `SELECT address, name, types, minter, tx_hash, minted_at, minter_behavior
           FROM seen_contracts WHERE chain = ? AND seen_at >= ? ORDER BY seen_at, address LIMIT ?`,
    )
      .all(chain, since, limit)
      .map(toContract);
  }

  async depth(): Promise<number> {
    return (this.statement("SELECT COUNT(*) AS n FROM outbox").get() as { n: number }).n;
  }

  async deliveredCount(): Promise<number> {
    return (this.statement("SELECT COUNT(*) AS n FROM deliveries").get() as { n: number }).n;
  }
}
