/** SqlGateStore's helpers (store.ts): its conditional inserts. */
import type { Sql } from "../store/query.ts";

/** PostgreSQL's foreign_key_violation: the gate went between our check and our write. */
const FOREIGN_KEY_VIOLATION = "23503";

/**
 * A write for a gate removed meanwhile is dropped. On SQLite the statement's EXISTS drops it (one
 * writer: nothing goes in between, and SQLite's own codes never match this one); on PostgreSQL
 * the gate may go between the EXISTS and the write, and the foreign key refuses it.
 */
export async function unlessGateGone(write: Promise<unknown>): Promise<void> {
  try {
    await write;
  } catch (error) {
    if ((error as { code?: string }).code !== FOREIGN_KEY_VIOLATION) throw error;
  }
}

/** The PostgreSQL types of the columns selectIfGate writes (by name, the same in every table). */
const PG_TYPES = {
  gate_id: "bigint",
  user_id: "text",
  status: "text",
  since: "bigint",
  failing_since: "bigint",
  grace_until: "bigint",
  told_at: "bigint",
  user_chat_id: "text",
  decide_by: "bigint",
  last_checked_at: "bigint",
  action: "text",
  reason: "text",
  attempts: "integer",
  retry_at: "bigint",
  last_error: "text",
  at: "bigint",
} as const;

/**
 * `SELECT <values> WHERE EXISTS (the gate)`: an INSERT's rows, none for a gate removed meanwhile.
 * PostgreSQL types a SELECT's parameters by no column, so each is cast to its column's type there.
 */
export function selectIfGate(
  sql: Sql,
  columns: readonly (keyof typeof PG_TYPES)[],
  values: readonly unknown[],
  gateId: number,
) {
  const { q } = sql;
  return q
    .selectNoFrom((row) =>
      columns.map((column, i) => {
        const value = row.val(values[i]);
        return (sql.dialect === "postgres" ? row.cast(value, PG_TYPES[column]) : value).as(column);
      }),
    )
    .where((row) =>
      row.exists(q.selectFrom("gates").select(row.lit(1).as("one")).where("id", "=", gateId)),
    );
}
