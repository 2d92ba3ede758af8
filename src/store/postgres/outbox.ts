import { dueUnder, parseRules } from "../../alerts/rules.ts";
import { leftOutBy } from "../../alerts/wants.ts";
import { type ContractRow, type DueRow, toAlert, toContract } from "../rows.ts";
import { chatNotPaused } from "../rows-chat-pause.ts";
import type { DueAlert, NewBatch, NewContract, OutboxStore, Subscription } from "../types.ts";
import { DB_NOW_MS, type PgDb } from "./db.ts";

/** New contracts and the alerts owed for them, shared by every instance. */
export class PgOutboxStore implements OutboxStore {
  constructor(private readonly db: PgDb) {}

  async record(
    input: NewBatch,
  ): Promise<{ fresh: NewContract[]; enqueued: number; hidden: number }> {
    return this.db.tx(async (client) => {
      const subscriptions =
        input.subscriptions === "active"
          ? (
              await client.query<
                Pick<Subscription, "id" | "types"> & { bad_actors: string; rules: string | null }
              >(
                `SELECT id, types, bad_actors, rules FROM subscriptions s WHERE ${chatNotPaused("s")} AND chain = $1 ORDER BY id`,
                [input.chain],
              )
            ).rows.map((row) => ({
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
        const address = contract.address.toLowerCase();
        const inserted = await client.query(
          `INSERT INTO seen_contracts (chain, address, name, types, minter, tx_hash, minted_at, seen_at, minter_behavior)
           VALUES ($8, $1, $2, $3, $4, $5, $6, $7, $9) ON CONFLICT DO NOTHING`,
          [
            address,
            contract.name,
            JSON.stringify(contract.types),
            contract.minter ?? null,
            contract.txHash ?? null,
            contract.mintedAt ?? null,
            input.now,
            input.chain,
            contract.minterBehavior ?? null,
          ],
        );
        if (inserted.rowCount === 0) continue;
        fresh.push(contract);
        const ids: number[] = [];
        for (const subscription of subscriptions) {
          const leftOut = leftOutBy(subscription, contract);
          if (leftOut === "bad") hidden++;
          if (!leftOut) ids.push(subscription.id);
        }
        if (ids.length === 0) continue;
        const due = ids.map((id) => dueAt.get(id) ?? { dueAt: input.now, held: false });
        // One statement per contract, whatever the number of subscriptions.
        const queued = await client.query(
          `INSERT INTO outbox (subscription_id, chain, contract, note, due_at, created_at, held)
           SELECT id, $5, $2, $3, due, $4, held FROM unnest($1::bigint[], $6::bigint[], $7::int[]) AS t (id, due, held)
           ON CONFLICT DO NOTHING`,
          [
            ids,
            address,
            input.note,
            input.now,
            input.chain,
            due.map((d) => d.dueAt),
            due.map((d) => (d.held ? 1 : 0)),
          ],
        );
        enqueued += queued.rowCount ?? 0;
      }
      await client.query(
        "INSERT INTO kv (key, value) VALUES ($1, $2) ON CONFLICT (key) DO UPDATE SET value = excluded.value",
        [input.cursorKey, input.cursor],
      );
      return { fresh, enqueued, hidden };
    });
  }

  async unseen(chain: string, addresses: readonly string[]): Promise<string[]> {
    const distinct = [...new Set(addresses.map((address) => address.toLowerCase()))];
    if (distinct.length === 0) return [];
    const { rows } = await this.db.query<{ address: string }>(
      "SELECT address FROM seen_contracts WHERE chain = $1 AND address = ANY($2::text[])",
      [chain, distinct],
    );
    const seen = new Set(rows.map((row) => row.address));
    return distinct.filter((address) => !seen.has(address));
  }

  async suppress(
    alerts: readonly DueAlert[],
    input: { reports: number; noted: boolean; now: number },
  ): Promise<void> {
    if (alerts.length === 0) return;
    await this.db.tx(async (client) => {
      await client.query("DELETE FROM outbox WHERE id = ANY($1::bigint[])", [
        alerts.map((a) => a.id),
      ]);
      for (const alert of alerts) {
        await client.query(
          `INSERT INTO suppressed_alerts (platform, chat_id, chain, contract, reports, noted, suppressed_at)
           VALUES ($1, $2, $3, $4, $5, $6, $7)
           ON CONFLICT (platform, chat_id, chain, contract) DO UPDATE
             SET reports = excluded.reports, noted = suppressed_alerts.noted OR excluded.noted`,
          [
            alert.platform,
            alert.chatId,
            alert.chain,
            alert.contract.address.toLowerCase(),
            input.reports,
            input.noted,
            input.now,
          ],
        );
      }
    });
  }

  async alreadyNoted(alerts: readonly DueAlert[]): Promise<Set<number>> {
    if (alerts.length === 0) return new Set();
    const { rows } = await this.db.query<{
      platform: string;
      chat_id: string;
      chain: string;
      contract: string;
    }>(
      `SELECT platform, chat_id, chain, contract FROM suppressed_alerts
        WHERE noted AND (platform, chat_id, chain, contract) IN
          (SELECT * FROM unnest($1::text[], $2::text[], $3::text[], $4::text[]))`,
      [
        alerts.map((a) => a.platform),
        alerts.map((a) => a.chatId),
        alerts.map((a) => a.chain),
        alerts.map((a) => a.contract.address.toLowerCase()),
      ],
    );
    const key = (p: string, c: string, ch: string, a: string) =>
      `${p}\u0000${c}\u0000${ch}\u0000${a}`;
    const noted = new Set(rows.map((r) => key(r.platform, r.chat_id, r.chain, r.contract)));
    return new Set(
      alerts
        .filter((a) =>
          noted.has(key(a.platform, a.chatId, a.chain, a.contract.address.toLowerCase())),
        )
        .map((a) => a.id),
    );
  }

  /** Alerts due now for active subscriptions, oldest first, claimed or not. */
  async due(now: number, limit: number, platform?: string): Promise<DueAlert[]> {
    const { rows } = await this.db.query<DueRow>(
      `SELECT o.id, o.subscription_id, s.platform, s.chat_id, o.chain, o.attempts, o.note, o.held,
              c.address, c.name, c.types, c.minter, c.tx_hash, c.minted_at, c.minter_behavior
         FROM outbox o
         JOIN subscriptions s ON s.id = o.subscription_id AND ${chatNotPaused("s")}
         JOIN seen_contracts c ON c.chain = o.chain AND c.address = o.contract
        WHERE o.due_at <= $1 AND ($2::text IS NULL OR s.platform = $2)
        ORDER BY o.due_at, o.id
        LIMIT $3`,
      [now, platform ?? null, limit],
    );
    return rows.map(toAlert);
  }

  /**
   * One statement: the due rows nobody holds a live claim on are locked (rows another claimer
   * has locked at this moment are skipped, not waited for) and stamped claimed until the
   * DATABASE's clock plus `claimMs`; instances' clocks never decide whose claim has expired.
   * `now` still says what is due (due times are written from the instances' clocks).
   */
  async claim(input: {
    now: number;
    limit: number;
    platform?: string | undefined;
    holder: string;
    claimMs: number;
    isDead?: ((holder: string) => boolean) | undefined;
  }): Promise<DueAlert[]> {
    if (input.isDead) {
      const { rows: holders } = await this.db.query<{ claimed_by: string }>(
        `SELECT DISTINCT claimed_by FROM outbox
          WHERE claimed_until > ${DB_NOW_MS} AND claimed_by IS NOT NULL`,
      );
      const dead = holders
        .map((row) => row.claimed_by)
        .filter((other) => other !== input.holder && input.isDead?.(other));
      if (dead.length > 0)
        await this.db.query(
          "UPDATE outbox SET claimed_until = NULL, claimed_by = NULL WHERE claimed_by = ANY($1::text[])",
          [dead],
        );
    }
    const { rows } = await this.db.query<DueRow & { due_at: number }>(
      `WITH picked AS (
         SELECT o.id FROM outbox o
           JOIN subscriptions s ON s.id = o.subscription_id AND ${chatNotPaused("s")}
          WHERE o.due_at <= $1 AND ($2::text IS NULL OR s.platform = $2)
            AND (o.claimed_until IS NULL OR o.claimed_until <= ${DB_NOW_MS})
          ORDER BY o.due_at, o.id
          LIMIT $3
          FOR UPDATE OF o SKIP LOCKED
       )
       UPDATE outbox o SET claimed_until = ${DB_NOW_MS} + $4, claimed_by = $5
         FROM picked, subscriptions s, seen_contracts c
        WHERE o.id = picked.id AND s.id = o.subscription_id AND c.chain = o.chain AND c.address = o.contract
       RETURNING o.id, o.subscription_id, s.platform, s.chat_id, o.chain, o.attempts, o.note, o.held, o.due_at,
                 c.address, c.name, c.types, c.minter, c.tx_hash, c.minted_at, c.minter_behavior`,
      [input.now, input.platform ?? null, input.limit, Math.round(input.claimMs), input.holder],
    );
    return rows.sort((a, b) => a.due_at - b.due_at || a.id - b.id).map(toAlert);
  }

  async delivered(alerts: readonly DueAlert[], now: number): Promise<void> {
    if (alerts.length === 0) return;
    await this.db.tx(async (client) => {
      await client.query("DELETE FROM outbox WHERE id = ANY($1::bigint[])", [
        alerts.map((a) => a.id),
      ]);
      await client.query(
        `INSERT INTO deliveries (subscription_id, contract, delivered_at)
         SELECT s, c, $3 FROM unnest($1::bigint[], $2::text[]) AS t (s, c) ON CONFLICT DO NOTHING`,
        [alerts.map((a) => a.subscriptionId), alerts.map((a) => a.contract.address), now],
      );
    });
  }

  async retryLater(
    alerts: readonly DueAlert[],
    dueAt: number,
    error: string,
    countAttempt: boolean,
  ): Promise<void> {
    if (alerts.length === 0) return;
    await this.db.query(
      "UPDATE outbox SET due_at = $1, last_error = $2, attempts = attempts + $3, claimed_until = NULL, claimed_by = NULL WHERE id = ANY($4::bigint[])",
      [dueAt, error.slice(0, 500), countAttempt ? 1 : 0, alerts.map((a) => a.id)],
    );
  }

  async giveUp(alerts: readonly DueAlert[], error: string, now: number): Promise<void> {
    if (alerts.length === 0) return;
    await this.db.tx(async (client) => {
      await client.query("DELETE FROM outbox WHERE id = ANY($1::bigint[])", [
        alerts.map((a) => a.id),
      ]);
      await client.query(
        `INSERT INTO failed_alerts (subscription_id, contract, attempts, last_error, failed_at)
         SELECT s, c, n, $4, $5 FROM unnest($1::bigint[], $2::text[], $3::int[]) AS t (s, c, n)
         ON CONFLICT (subscription_id, contract) DO UPDATE SET attempts = excluded.attempts,
           last_error = excluded.last_error, failed_at = excluded.failed_at`,
        [
          alerts.map((a) => a.subscriptionId),
          alerts.map((a) => a.contract.address),
          alerts.map((a) => a.attempts + 1),
          error.slice(0, 500),
          now,
        ],
      );
    });
  }

  async seenSince(chain: string, since: number, limit: number): Promise<NewContract[]> {
    const { rows } = await this.db.query<ContractRow>(
      `SELECT address, name, types, minter, tx_hash, minted_at, minter_behavior
         FROM seen_contracts WHERE chain = $1 AND seen_at >= $2 ORDER BY seen_at, address LIMIT $3`,
      [chain, since, limit],
    );
    return rows.map(toContract);
  }

  async depth(): Promise<number> {
    const { rows } = await this.db.query<{ n: number }>("SELECT COUNT(*) AS n FROM outbox");
    return rows[0]?.n ?? 0;
  }

  async deliveredCount(): Promise<number> {
    const { rows } = await this.db.query<{ n: number }>("SELECT COUNT(*) AS n FROM deliveries");
    return rows[0]?.n ?? 0;
  }
}
