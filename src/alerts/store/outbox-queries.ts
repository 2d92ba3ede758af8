/**
 * The outbox store's larger queries (outbox.ts): the due alerts, PostgreSQL's
 * one-statement claim and batched writes, and the enqueue of a contract's alerts.
 */
import { sql as raw } from "kysely";
import { anyOf, type Sql } from "../../store/query.ts";
import { chatNotPaused } from "../../store/rows-chat-pause.ts";

/** True for the subscriptions (alias `s`) whose chat is not paused. */
export const NOT_PAUSED = chatNotPaused("s");

/** What an alert's row is read as (DueRow), from the outbox `o`, subscription `s`, contract `c`. */
const DUE_COLUMNS = [
  "o.id",
  "o.subscription_id",
  "s.platform",
  "s.chat_id",
  "o.chain",
  "o.attempts",
  "o.note",
  "o.held",
  "c.address",
  "c.name",
  "c.types",
  "c.minter",
  "c.tx_hash",
  "c.minted_at",
  "c.minter_behavior",
] as const;

/** The subscriptions to `chain` not paused, for enqueueing (oldest first). */
export const activeFor = ({ q }: Sql, chain: string) =>
  q
    .selectFrom("subscriptions as s")
    .select(["s.id", "s.types", "s.bad_actors", "s.rules"])
    .where(NOT_PAUSED)
    .where("s.chain", "=", chain)
    .orderBy("s.id");

/**
 * Alerts due at `now` for subscriptions not paused (of `platform` when given), oldest first;
 * with `unclaimedAt`, only those nobody holds a claim on at that time.
 */
export const dueAlerts = (
  { q }: Sql,
  input: { now: number; limit: number; platform?: string | undefined; unclaimedAt?: number },
) =>
  q
    .selectFrom("outbox as o")
    .innerJoin("subscriptions as s", (join) =>
      join.onRef("s.id", "=", "o.subscription_id").on(NOT_PAUSED),
    )
    .innerJoin("seen_contracts as c", (join) =>
      join.onRef("c.chain", "=", "o.chain").onRef("c.address", "=", "o.contract"),
    )
    .select(DUE_COLUMNS)
    .where("o.due_at", "<=", input.now)
    .$if(input.platform !== undefined, (query) =>
      query.where("s.platform", "=", input.platform as string),
    )
    .$if(input.unclaimedAt !== undefined, (query) =>
      query.where((row) =>
        row.or([
          row("o.claimed_until", "is", null),
          row("o.claimed_until", "<=", input.unclaimedAt as number),
        ]),
      ),
    )
    .orderBy("o.due_at")
    .orderBy("o.id")
    .limit(input.limit);

/**
 * PostgreSQL's claim, one statement: the due rows nobody holds a live claim on are locked (rows
 * another claimer has locked at this moment are skipped, not waited for) and stamped claimed
 * until the DATABASE's clock plus `claimMs`; instances' clocks never decide whose claim has
 * expired. `now` still says what is due (due times are written from the instances' clocks).
 * The rows come back in no particular order (with due_at, to sort them by).
 */
export const claimOnServer = (
  sql: Sql,
  input: {
    now: number;
    limit: number;
    platform?: string | undefined;
    holder: string;
    claimMs: number;
  },
) => {
  const { q } = sql;
  const clock = sql.clock(input.now);
  return q
    .with("picked", (db) =>
      db
        .selectFrom("outbox as o")
        .innerJoin("subscriptions as s", (join) =>
          join.onRef("s.id", "=", "o.subscription_id").on(NOT_PAUSED),
        )
        .select("o.id")
        .where("o.due_at", "<=", input.now)
        .$if(input.platform !== undefined, (query) =>
          query.where("s.platform", "=", input.platform as string),
        )
        .where((row) =>
          row.or([row("o.claimed_until", "is", null), row("o.claimed_until", "<=", clock)]),
        )
        .orderBy("o.due_at")
        .orderBy("o.id")
        .limit(input.limit)
        .forUpdate("o")
        .skipLocked(),
    )
    .updateTable("outbox as o")
    .set({
      claimed_until: raw<number>`${clock} + ${Math.round(input.claimMs)}`,
      claimed_by: input.holder,
    })
    .from(["picked", "subscriptions as s", "seen_contracts as c"])
    .whereRef("o.id", "=", "picked.id")
    .whereRef("s.id", "=", "o.subscription_id")
    .whereRef("c.chain", "=", "o.chain")
    .whereRef("c.address", "=", "o.contract")
    .returning([...DUE_COLUMNS, "o.due_at"]);
};

/** PostgreSQL: the alerts' rows out of the outbox, one statement. */
export const removeOnServer = ({ q }: Sql, ids: readonly number[]) =>
  q.deleteFrom("outbox").where("id", "=", anyOf(ids, "bigint"));

/**
 * Alerts enqueued for many subscriptions in one statement whatever their number (a new contract
 * may be owed to 10,000): the rows come from arrays on PostgreSQL (`unnest`, one round trip) and
 * from one JSON parameter on SQLite (`json_each`: one prepared statement, where a statement per row
 * cost more than the rest of the enqueue). An alert already queued is left as it is.
 */
export const enqueueMany = (
  { q, dialect }: Sql,
  input: { chain: string; address: string; note: string | null; now: number },
  owed: readonly { id: number; dueAt: number; held: boolean }[],
) => {
  const rows =
    dialect === "postgres"
      ? raw`unnest(${owed.map((o) => o.id)}::bigint[], ${owed.map((o) => o.dueAt)}::bigint[],
                   ${owed.map((o) => (o.held ? 1 : 0))}::int[]) AS t (id, due, held)`
      : raw`(SELECT value ->> 0 AS id, value ->> 1 AS due, value ->> 2 AS held
               FROM json_each(${JSON.stringify(owed.map((o) => [o.id, o.dueAt, o.held ? 1 : 0]))})) AS t`;
  return (
    q
      .insertInto("outbox")
      .columns(["subscription_id", "chain", "contract", "note", "due_at", "created_at", "held"])
      // WHERE true: SQLite's parser takes an upsert's ON after a bare FROM for a join's.
      .expression(
        raw`SELECT id, ${input.chain}, ${input.address}, ${input.note}, due, ${input.now}, held
              FROM ${rows} WHERE true`,
      )
      .onConflict((conflict) => conflict.doNothing())
  );
};
