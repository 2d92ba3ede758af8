/**
 * The gates' tables as the store's numbered migrations made them (issue 29, and the grants owed of
 * issue 34), before features had migrations of their own: history stays where it ran. The gates
 * feature (src/gates/store.ts) reads and writes these tables; nothing here knows what they mean.
 */

/**
 * The migration that brings gates (issue 29; SQLite's 18, PostgreSQL's 11), the same on both but
 * for the types of ids and times. Fixed once released, like every migration.
 *
 * A gate's target and criteria are JSON (read only whole, never searched). A member's row holds
 * its standing with one gate; the re-check job reads them oldest check first (never checked
 * first), and a person's memberships are found by user id, the gate giving the platform. The log
 * is read per gate, newest first; its id orders entries of the same millisecond.
 */
export function gatesMigration(dialect: "sqlite" | "postgres"): string {
  const time = dialect === "sqlite" ? "INTEGER" : "BIGINT";
  const id = dialect === "sqlite" ? "INTEGER PRIMARY KEY AUTOINCREMENT" : "BIGSERIAL PRIMARY KEY";
  const ref = dialect === "sqlite" ? "INTEGER" : "BIGINT";
  // SQLite puts NULLs first in ascending order already, and has no NULLS FIRST in an index.
  const nullsFirst = dialect === "sqlite" ? "" : " NULLS FIRST";
  return `
  CREATE TABLE gates (
    id ${id},
    platform TEXT NOT NULL,
    chat_id TEXT NOT NULL,
    target TEXT NOT NULL,
    criteria TEXT NOT NULL,
    created_by TEXT NOT NULL,
    created_at ${time} NOT NULL,
    paused_at ${time},
    pause_reason TEXT
  );
  CREATE INDEX gates_chat ON gates (platform, chat_id);

  CREATE TABLE gate_members (
    gate_id ${ref} NOT NULL REFERENCES gates (id) ON DELETE CASCADE,
    user_id TEXT NOT NULL,
    status TEXT NOT NULL CHECK (status IN ('granted', 'grace', 'pending')),
    since ${time} NOT NULL,
    failing_since ${time},
    grace_until ${time},
    told_at ${time},
    user_chat_id TEXT,
    decide_by ${time},
    last_checked_at ${time},
    PRIMARY KEY (gate_id, user_id)
  );
  CREATE INDEX gate_members_due ON gate_members (last_checked_at${nullsFirst}, gate_id, user_id);
  CREATE INDEX gate_members_user ON gate_members (user_id);
  CREATE INDEX gate_members_requests ON gate_members (status, decide_by);

  CREATE TABLE gate_log (
    id ${id},
    gate_id ${ref} NOT NULL REFERENCES gates (id) ON DELETE CASCADE,
    user_id TEXT NOT NULL,
    at ${time} NOT NULL,
    action TEXT NOT NULL
      CHECK (action IN ('granted', 'approved', 'grace', 'kept', 'removed', 'declined', 'paused', 'failed')),
    reason TEXT NOT NULL
  );
  CREATE INDEX gate_log_gate ON gate_log (gate_id, at);
  `;
}

/**
 * The migration that keeps grants owed (issue 34; SQLite's 19, PostgreSQL's 12): a person who
 * passed a gate whose grant met a transient platform error has no member row yet, so nothing
 * else would try again. The re-check job reads them by retry time.
 */
export function owedGrantsMigration(dialect: "sqlite" | "postgres"): string {
  const time = dialect === "sqlite" ? "INTEGER" : "BIGINT";
  const ref = dialect === "sqlite" ? "INTEGER" : "BIGINT";
  return `
  CREATE TABLE gate_grants (
    gate_id ${ref} NOT NULL REFERENCES gates (id) ON DELETE CASCADE,
    user_id TEXT NOT NULL,
    action TEXT NOT NULL CHECK (action IN ('granted', 'approved')),
    reason TEXT NOT NULL,
    since ${time} NOT NULL,
    attempts INTEGER NOT NULL,
    retry_at ${time} NOT NULL,
    last_error TEXT NOT NULL,
    PRIMARY KEY (gate_id, user_id)
  );
  CREATE INDEX gate_grants_due ON gate_grants (retry_at);
  `;
}
