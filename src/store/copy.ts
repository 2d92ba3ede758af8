import type { Queryable } from "./postgres/db.ts";
import type { PgDb } from "./postgres/index.ts";
import type { Db } from "./sqlite/index.ts";

/**
 * The tables copied from SQLite into PostgreSQL, parents before children, with the columns both
 * have. Not copied: the poller's lease (held by a running process; the first PostgreSQL instance
 * takes them anew: one per chain), claims on alerts (nobody holds them after the copy), and button ids issued
 * before SQLite migration 8 (button_actions_v1: the PostgreSQL store never reads them).
 */
const TABLES: readonly {
  name: string;
  columns: readonly string[];
  serial?: string;
  bigints?: boolean;
}[] = [
  {
    name: "subscriptions",
    columns: [
      "id",
      "platform",
      "chat_id",
      "chain",
      "types",
      "bad_actors",
      "rules",
      "created_by",
      "created_at",
    ],
    serial: "id",
  },
  {
    name: "seen_contracts",
    columns: [
      "chain",
      "address",
      "name",
      "types",
      "minter",
      "tx_hash",
      "minted_at",
      "seen_at",
      "minter_behavior",
    ],
  },
  {
    name: "outbox",
    columns: [
      "id",
      "subscription_id",
      "chain",
      "contract",
      "note",
      "due_at",
      "attempts",
      "last_error",
      "created_at",
      "held",
    ],
    serial: "id",
  },
  { name: "deliveries", columns: ["subscription_id", "contract", "delivered_at"] },
  {
    name: "failed_alerts",
    columns: ["subscription_id", "contract", "attempts", "last_error", "failed_at"],
  },
  { name: "kv", columns: ["key", "value"] },
  {
    name: "wallets",
    columns: [
      "platform",
      "user_id",
      "address",
      "chain",
      "label",
      "proved_at",
      "message",
      "signature",
      "linked_at",
      "kind",
      "chains",
    ],
  },
  // Delegations are read again from the chains' registries; their reads' times are not copied.
  { name: "wallet_delegations", columns: ["hot", "chain", "cold", "contract", "first_seen"] },
  // verify_links is not copied: a link lives 10 minutes, and a store is copied with the bot stopped.
  {
    name: "spam_reports",
    columns: [
      "id",
      "platform",
      "chat_id",
      "user_id",
      "user_name",
      "wallet",
      "contract",
      "token_id",
      "kind",
      "feedback",
      "status",
      "upstream",
      "attempts",
      "next_attempt_at",
      "created_at",
      "updated_at",
      "chain",
    ],
    serial: "id",
  },
  // Discord interaction ids are 64-bit: read as bigints, or a double would round them.
  { name: "seen_updates", columns: ["source", "update_id", "seen_at"], bigints: true },
  {
    name: "known_collections",
    columns: ["chain", "address", "name", "symbol", "name_key", "top_rank", "source", "seen_at"],
  },
  { name: "chat_settings", columns: ["platform", "chat_id", "chain", "updated_at"] },
  // A chat that refused the bot stays paused after the move, with its reason.
  { name: "chat_pauses", columns: ["platform", "chat_id", "paused_at", "pause_reason"] },
  // A chat waiting after a failed post keeps its wait and its count of failed tries.
  {
    name: "send_waits",
    columns: ["stream", "platform", "chat_id", "attempts", "wait_until", "reason"],
  },
  {
    name: "watches",
    columns: [
      "id",
      "platform",
      "chat_id",
      "chain",
      "kind",
      "target",
      "label",
      "owners_percent",
      "whales_points",
      "state",
      "pending",
      "created_by",
      "created_at",
    ],
    serial: "id",
  },
  {
    // Same row numbers and secrets: the buttons under old messages keep working.
    name: "button_actions",
    columns: [
      "n",
      "secret",
      "platform",
      "chat_id",
      "user_id",
      "first_seq",
      "count",
      "actions",
      "expires_at",
    ],
    serial: "n",
  },
  {
    name: "suppressed_alerts",
    columns: ["platform", "chat_id", "chain", "contract", "reports", "noted", "suppressed_at"],
  },
  {
    name: "digests",
    columns: [
      "id",
      "platform",
      "chat_id",
      "chain",
      "cadence",
      "weekday",
      "time",
      "zone",
      "metric",
      "period",
      "created_by",
      "created_at",
    ],
    serial: "id",
  },
  {
    // Sent slots stay sent after the move: no digest is posted twice for one slot.
    name: "digest_runs",
    columns: [
      "digest_id",
      "slot",
      "status",
      "attempts",
      "claimed_by",
      "claimed_until",
      "last_error",
      "finished_at",
    ],
  },
  {
    name: "gates",
    columns: [
      "id",
      "platform",
      "chat_id",
      "target",
      "criteria",
      "created_by",
      "created_at",
      "paused_at",
      "pause_reason",
    ],
    serial: "id",
  },
  {
    // Standings carry over: a person in grace keeps their deadline, a request its decision time.
    name: "gate_members",
    columns: [
      "gate_id",
      "user_id",
      "status",
      "since",
      "failing_since",
      "grace_until",
      "told_at",
      "user_chat_id",
      "decide_by",
      "last_checked_at",
    ],
  },
  {
    name: "gate_log",
    columns: ["id", "gate_id", "user_id", "at", "action", "reason"],
    serial: "id",
  },
  {
    // A grant owed keeps its retry time and its first failure (given up a day after).
    name: "gate_grants",
    columns: [
      "gate_id",
      "user_id",
      "action",
      "reason",
      "since",
      "attempts",
      "retry_at",
      "last_error",
    ],
  },
];

/** Rows per INSERT: well under PostgreSQL's 65,535 parameters for the widest table (16 columns). */
const CHUNK = 1_000;

export class TargetNotEmptyError extends Error {
  override name = "TargetNotEmptyError";
}

/** Rows per table, for the report. */
export type CopyCounts = Record<string, number>;

/**
 * Copies a SQLite store (migrated to its latest) into a migrated, EMPTY PostgreSQL store, in one
 * PostgreSQL transaction: all or nothing, so a failed copy can simply be run again. A target
 * holding any row is refused (TargetNotEmptyError, saying what it holds): the copy never merges.
 * Stop the bot on SQLite first: what it writes during the copy is not copied.
 */
export async function copySqliteToPostgres(sqlite: Db, pg: PgDb): Promise<CopyCounts> {
  return pg.tx(async (client) => {
    // Nobody else copies into (or migrates) this schema meanwhile.
    await client.query("SELECT pg_advisory_xact_lock(hashtext($1))", [
      `nft-audience-bot:migrate:${pg.schema}`,
    ]);
    const held: string[] = [];
    for (const table of [...TABLES.map((t) => t.name), "leases"]) {
      const { rows } = await client.query<{ n: number }>(`SELECT COUNT(*) AS n FROM ${table}`);
      const n = rows[0]?.n ?? 0;
      if (n > 0) held.push(`${n} in ${table}`);
    }
    if (held.length > 0)
      throw new TargetNotEmptyError(
        `The PostgreSQL store (schema ${pg.schema}) is not empty (${held.join(", ")}): migrate-store copies only into an empty store, and copied nothing. Use a new database or DATABASE_SCHEMA, or empty this one first.`,
      );
    const counts: CopyCounts = {};
    for (const table of TABLES) counts[table.name] = await copyTable(sqlite, client, table);
    return counts;
  });
}

async function copyTable(
  sqlite: Db,
  client: Queryable,
  table: (typeof TABLES)[number],
): Promise<number> {
  const { name, columns, serial, bigints = false } = table;
  const select = sqlite
    .prepare(`SELECT ${columns.join(", ")} FROM ${name}`)
    .raw(true)
    .safeIntegers(bigints);
  let copied = 0;
  let chunk: unknown[][] = [];
  const flush = async () => {
    if (chunk.length === 0) return;
    const values = chunk
      .map(
        (_, row) => `(${columns.map((_, col) => `$${row * columns.length + col + 1}`).join(", ")})`,
      )
      .join(", ");
    await client.query(
      `INSERT INTO ${name} (${columns.join(", ")}) VALUES ${values}`,
      chunk.flat(),
    );
    copied += chunk.length;
    chunk = [];
  };
  for (const row of select.iterate() as Iterable<unknown[]>) {
    chunk.push(row);
    if (chunk.length === CHUNK) await flush();
  }
  await flush();
  // The next id continues after the copied ones.
  if (serial)
    await client.query(
      `SELECT setval(pg_get_serial_sequence($1, $2), COALESCE((SELECT MAX(${serial}) FROM ${name}), 0) + 1, false)`,
      [name, serial],
    );
  return copied;
}
