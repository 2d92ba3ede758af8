import type { Platform } from "../../core/command.ts";
import type {
  Gate,
  GateLogEntry,
  GateMember,
  GateStore,
  NewGate,
  OwedGrant,
} from "../../gates/types.ts";
import {
  DUE_ORDER,
  type GateLogRow,
  type GateMemberRow,
  type GateRow,
  gateFromRow,
  logFromRow,
  MEMBER_COLUMNS,
  memberFromRow,
  memberValues,
  movedTarget,
  OWED_COLUMNS,
  type OwedGrantRow,
  owedFromRow,
  owedValues,
} from "../rows-gate.ts";
import type { PgDb } from "./db.ts";

/** PostgreSQL's foreign_key_violation: the gate went between our check and our write. */
const FOREIGN_KEY_VIOLATION = "23503";

/** MEMBER_COLUMNS' types: a SELECT's parameters are not typed by the columns they go into. */
const MEMBER_TYPES = [
  "bigint",
  "text",
  "text",
  "bigint",
  "bigint",
  "bigint",
  "bigint",
  "text",
  "bigint",
  "bigint",
] as const;

/** OWED_COLUMNS' types, as MEMBER_TYPES. */
const OWED_TYPES = [
  "bigint",
  "text",
  "text",
  "text",
  "bigint",
  "integer",
  "bigint",
  "text",
] as const;

/** A write for a gate removed meanwhile is dropped, as SQLite's EXISTS drops it. */
async function unlessGateGone(write: Promise<unknown>): Promise<void> {
  try {
    await write;
  } catch (error) {
    if ((error as { code?: string }).code !== FOREIGN_KEY_VIOLATION) throw error;
  }
}

/** Gates, their members and log in PostgreSQL, shared by every instance. */
export class PgGateStore implements GateStore {
  constructor(private readonly db: PgDb) {}

  async add(
    gate: NewGate,
    max: number,
  ): Promise<{ kind: "added"; gate: Gate } | { kind: "full"; count: number }> {
    return this.db.tx(async (client) => {
      // One adder per chat at a time: two instances adding at once cannot both pass the cap
      // (a count under READ COMMITTED alone would let both see nine and make eleven).
      await client.query("SELECT pg_advisory_xact_lock(hashtext('gates:' || $1 || ':' || $2))", [
        gate.platform,
        gate.chatId,
      ]);
      const { rows } = await client.query<{ count: number }>(
        "SELECT COUNT(*) AS count FROM gates WHERE platform = $1 AND chat_id = $2",
        [gate.platform, gate.chatId],
      );
      const count = Number(rows[0]?.count ?? 0);
      if (count >= max) return { kind: "full" as const, count };
      const inserted = await client.query<GateRow>(
        `INSERT INTO gates (platform, chat_id, target, criteria, created_by, created_at)
         VALUES ($1, $2, $3, $4, $5, $6) RETURNING *`,
        [
          gate.platform,
          gate.chatId,
          JSON.stringify(gate.target),
          JSON.stringify(gate.criteria),
          gate.createdBy,
          gate.createdAt,
        ],
      );
      return { kind: "added" as const, gate: gateFromRow(inserted.rows[0] as GateRow) };
    });
  }

  async forChat(platform: Platform, chatId: string): Promise<Gate[]> {
    const { rows } = await this.db.query<GateRow>(
      "SELECT * FROM gates WHERE platform = $1 AND chat_id = $2 ORDER BY id",
      [platform, chatId],
    );
    return rows.map(gateFromRow);
  }

  async moveChat(platform: Platform, fromChatId: string, toChatId: string): Promise<void> {
    const { rows } = await this.db.query<GateRow>(
      "SELECT * FROM gates WHERE platform = $1 AND chat_id = $2",
      [platform, fromChatId],
    );
    for (const gate of rows.map(gateFromRow))
      await this.db.query("UPDATE gates SET chat_id = $1, target = $2 WHERE id = $3", [
        toChatId,
        JSON.stringify(movedTarget(gate.target, fromChatId, toChatId)),
        gate.id,
      ]);
  }

  async get(id: number): Promise<Gate | undefined> {
    const { rows } = await this.db.query<GateRow>("SELECT * FROM gates WHERE id = $1", [id]);
    return rows[0] ? gateFromRow(rows[0]) : undefined;
  }

  async all(platform?: Platform): Promise<Gate[]> {
    const { rows } =
      platform === undefined
        ? await this.db.query<GateRow>("SELECT * FROM gates ORDER BY id")
        : await this.db.query<GateRow>("SELECT * FROM gates WHERE platform = $1 ORDER BY id", [
            platform,
          ]);
    return rows.map(gateFromRow);
  }

  async remove(platform: Platform, chatId: string, id: number): Promise<boolean> {
    // The members and the log go with the gate (ON DELETE CASCADE), in the same statement.
    const result = await this.db.query(
      "DELETE FROM gates WHERE id = $1 AND platform = $2 AND chat_id = $3",
      [id, platform, chatId],
    );
    return (result.rowCount ?? 0) > 0;
  }

  async pause(id: number, reason: string, now: number): Promise<void> {
    // An earlier pause is kept: when and why it first stopped.
    await this.db.query(
      "UPDATE gates SET paused_at = $2, pause_reason = $3 WHERE id = $1 AND paused_at IS NULL",
      [id, now, reason],
    );
  }

  async resume(id: number): Promise<void> {
    await this.db.query("UPDATE gates SET paused_at = NULL, pause_reason = NULL WHERE id = $1", [
      id,
    ]);
  }

  async member(gateId: number, userId: string): Promise<GateMember | undefined> {
    const { rows } = await this.db.query<GateMemberRow>(
      "SELECT * FROM gate_members WHERE gate_id = $1 AND user_id = $2",
      [gateId, userId],
    );
    return rows[0] ? memberFromRow(rows[0]) : undefined;
  }

  async putMember(member: GateMember): Promise<void> {
    // A gate removed meanwhile (a re-check racing /gate remove) takes no member: nothing is written.
    await unlessGateGone(
      this.db.query(
        `INSERT INTO gate_members (${MEMBER_COLUMNS.join(", ")})
         SELECT ${MEMBER_TYPES.map((type, i) => `$${i + 1}::${type}`).join(", ")}
         WHERE EXISTS (SELECT 1 FROM gates WHERE id = $1)
         ON CONFLICT (gate_id, user_id) DO UPDATE SET
           ${MEMBER_COLUMNS.slice(2)
             .map((c) => `${c} = excluded.${c}`)
             .join(", ")}`,
        memberValues(member),
      ),
    );
  }

  async removeMember(gateId: number, userId: string): Promise<void> {
    await this.db.query("DELETE FROM gate_members WHERE gate_id = $1 AND user_id = $2", [
      gateId,
      userId,
    ]);
  }

  async members(gateId: number): Promise<GateMember[]> {
    const { rows } = await this.db.query<GateMemberRow>(
      "SELECT * FROM gate_members WHERE gate_id = $1 ORDER BY since, user_id",
      [gateId],
    );
    return rows.map(memberFromRow);
  }

  async memberships(platform: Platform, userId: string): Promise<GateMember[]> {
    const { rows } = await this.db.query<GateMemberRow>(
      `SELECT m.* FROM gate_members m JOIN gates g ON g.id = m.gate_id
       WHERE m.user_id = $1 AND g.platform = $2 ORDER BY m.gate_id`,
      [userId, platform],
    );
    return rows.map(memberFromRow);
  }

  async due(checkedBefore: number, limit: number): Promise<GateMember[]> {
    const { rows } = await this.db.query<GateMemberRow>(
      `SELECT m.* FROM gate_members m JOIN gates g ON g.id = m.gate_id
       WHERE g.paused_at IS NULL AND (m.last_checked_at IS NULL OR m.last_checked_at < $1)
       ${DUE_ORDER} LIMIT $2`,
      [checkedBefore, limit],
    );
    return rows.map(memberFromRow);
  }

  async expiredRequests(now: number): Promise<GateMember[]> {
    const { rows } = await this.db.query<GateMemberRow>(
      `SELECT * FROM gate_members WHERE status = 'pending' AND decide_by <= $1
       ORDER BY decide_by, gate_id, user_id`,
      [now],
    );
    return rows.map(memberFromRow);
  }

  async oweGrant(grant: OwedGrant): Promise<void> {
    // A gate removed meanwhile owes nothing: nothing is written.
    await unlessGateGone(
      this.db.query(
        `INSERT INTO gate_grants (${OWED_COLUMNS.join(", ")})
         SELECT ${OWED_TYPES.map((type, i) => `$${i + 1}::${type}`).join(", ")}
         WHERE EXISTS (SELECT 1 FROM gates WHERE id = $1)
         ON CONFLICT (gate_id, user_id) DO UPDATE SET
           ${OWED_COLUMNS.slice(2)
             .map((c) => `${c} = excluded.${c}`)
             .join(", ")}`,
        owedValues(grant),
      ),
    );
  }

  async owedGrant(gateId: number, userId: string): Promise<OwedGrant | undefined> {
    const { rows } = await this.db.query<OwedGrantRow>(
      "SELECT * FROM gate_grants WHERE gate_id = $1 AND user_id = $2",
      [gateId, userId],
    );
    return rows[0] ? owedFromRow(rows[0]) : undefined;
  }

  async owedDue(now: number, limit: number): Promise<OwedGrant[]> {
    const { rows } = await this.db.query<OwedGrantRow>(
      `SELECT o.* FROM gate_grants o JOIN gates g ON g.id = o.gate_id
       WHERE g.paused_at IS NULL AND o.retry_at <= $1
       ORDER BY o.retry_at, o.gate_id, o.user_id LIMIT $2`,
      [now, limit],
    );
    return rows.map(owedFromRow);
  }

  async dropOwed(gateId: number, userId: string): Promise<void> {
    await this.db.query("DELETE FROM gate_grants WHERE gate_id = $1 AND user_id = $2", [
      gateId,
      userId,
    ]);
  }

  async unwarned(gateId: number): Promise<number> {
    const { rows } = await this.db.query<{ n: number }>(
      `SELECT COUNT(*) AS n FROM gate_members
       WHERE gate_id = $1 AND status = 'grace' AND told_at IS NULL`,
      [gateId],
    );
    return Number(rows[0]?.n ?? 0);
  }

  async log(entry: GateLogEntry): Promise<void> {
    // A removed gate's log went with it: a late line for it is dropped.
    await unlessGateGone(
      this.db.query(
        `INSERT INTO gate_log (gate_id, user_id, at, action, reason)
         SELECT $1::bigint, $2::text, $3::bigint, $4::text, $5::text
         WHERE EXISTS (SELECT 1 FROM gates WHERE id = $1)`,
        [entry.gateId, entry.userId, entry.at, entry.action, entry.reason],
      ),
    );
  }

  async logOf(gateId: number, limit: number): Promise<GateLogEntry[]> {
    const { rows } = await this.db.query<GateLogRow>(
      `SELECT gate_id, user_id, at, action, reason FROM gate_log WHERE gate_id = $1
       ORDER BY at DESC, id DESC LIMIT $2`,
      [gateId, limit],
    );
    return rows.map(logFromRow);
  }

  async counts(): Promise<{
    gates: number;
    paused: number;
    granted: number;
    grace: number;
    pending: number;
    owed: number;
  }> {
    const { rows } = await this.db.query<{
      gates: number;
      paused: number;
      granted: number;
      grace: number;
      pending: number;
      owed: number;
    }>(
      `SELECT
         (SELECT COUNT(*) FROM gates) AS gates,
         (SELECT COUNT(*) FROM gates WHERE paused_at IS NOT NULL) AS paused,
         (SELECT COUNT(*) FROM gate_members WHERE status = 'granted') AS granted,
         (SELECT COUNT(*) FROM gate_members WHERE status = 'grace') AS grace,
         (SELECT COUNT(*) FROM gate_members WHERE status = 'pending') AS pending,
         (SELECT COUNT(*) FROM gate_grants) AS owed`,
    );
    const row = rows[0];
    return {
      gates: Number(row?.gates ?? 0),
      paused: Number(row?.paused ?? 0),
      granted: Number(row?.granted ?? 0),
      grace: Number(row?.grace ?? 0),
      pending: Number(row?.pending ?? 0),
      owed: Number(row?.owed ?? 0),
    };
  }
}
