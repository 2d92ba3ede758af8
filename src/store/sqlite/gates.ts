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
import type { Db } from "./db.ts";

/** Gates, their members and log in SQLite. */
export class SqliteGateStore implements GateStore {
  constructor(private readonly db: Db) {}

  async add(
    gate: NewGate,
    max: number,
  ): Promise<{ kind: "added"; gate: Gate } | { kind: "full"; count: number }> {
    const { db } = this;
    // IMMEDIATE: the write lock is taken before the count, so two processes on the same file
    // cannot both count nine and both add a tenth.
    return db
      .transaction(() => {
        const { count } = db
          .prepare<[string, string], { count: number }>(
            "SELECT COUNT(*) AS count FROM gates WHERE platform = ? AND chat_id = ?",
          )
          .get(gate.platform, gate.chatId) as { count: number };
        if (count >= max) return { kind: "full" as const, count };
        const row = db
          .prepare<[string, string, string, string, string, number], GateRow>(
            `INSERT INTO gates (platform, chat_id, target, criteria, created_by, created_at)
             VALUES (?, ?, ?, ?, ?, ?) RETURNING *`,
          )
          .get(
            gate.platform,
            gate.chatId,
            JSON.stringify(gate.target),
            JSON.stringify(gate.criteria),
            gate.createdBy,
            gate.createdAt,
          ) as GateRow;
        return { kind: "added" as const, gate: gateFromRow(row) };
      })
      .immediate();
  }

  async forChat(platform: Platform, chatId: string): Promise<Gate[]> {
    return this.db
      .prepare<[string, string], GateRow>(
        "SELECT * FROM gates WHERE platform = ? AND chat_id = ? ORDER BY id",
      )
      .all(platform, chatId)
      .map(gateFromRow);
  }

  async moveChat(platform: Platform, fromChatId: string, toChatId: string): Promise<void> {
    const update = this.db.prepare("UPDATE gates SET chat_id = ?, target = ? WHERE id = ?");
    this.db
      .transaction(() => {
        for (const gate of this.db
          .prepare<[string, string], GateRow>(
            "SELECT * FROM gates WHERE platform = ? AND chat_id = ?",
          )
          .all(platform, fromChatId)
          .map(gateFromRow))
          update.run(
            toChatId,
            JSON.stringify(movedTarget(gate.target, fromChatId, toChatId)),
            gate.id,
          );
      })
      .immediate();
  }

  async get(id: number): Promise<Gate | undefined> {
    const row = this.db.prepare<[number], GateRow>("SELECT * FROM gates WHERE id = ?").get(id);
    return row ? gateFromRow(row) : undefined;
  }

  async all(platform?: Platform): Promise<Gate[]> {
    const rows =
      platform === undefined
        ? this.db.prepare<[], GateRow>("SELECT * FROM gates ORDER BY id").all()
        : this.db
            .prepare<[string], GateRow>("SELECT * FROM gates WHERE platform = ? ORDER BY id")
            .all(platform);
    return rows.map(gateFromRow);
  }

  async remove(platform: Platform, chatId: string, id: number): Promise<boolean> {
    const { db } = this;
    return db
      .transaction(() => {
        const gate = db
          .prepare<[number, string, string], { id: number }>(
            "SELECT id FROM gates WHERE id = ? AND platform = ? AND chat_id = ?",
          )
          .get(id, platform, chatId);
        if (!gate) return false;
        // Said outright rather than left to ON DELETE CASCADE, which needs foreign_keys on.
        db.prepare("DELETE FROM gate_log WHERE gate_id = ?").run(id);
        db.prepare("DELETE FROM gate_members WHERE gate_id = ?").run(id);
        db.prepare("DELETE FROM gate_grants WHERE gate_id = ?").run(id);
        db.prepare("DELETE FROM gates WHERE id = ?").run(id);
        return true;
      })
      .immediate();
  }

  async pause(id: number, reason: string, now: number): Promise<void> {
    // An earlier pause is kept: when and why it first stopped.
    this.db
      .prepare(
        "UPDATE gates SET paused_at = ?, pause_reason = ? WHERE id = ? AND paused_at IS NULL",
      )
      .run(now, reason, id);
  }

  async resume(id: number): Promise<void> {
    this.db.prepare("UPDATE gates SET paused_at = NULL, pause_reason = NULL WHERE id = ?").run(id);
  }

  async member(gateId: number, userId: string): Promise<GateMember | undefined> {
    const row = this.db
      .prepare<[number, string], GateMemberRow>(
        "SELECT * FROM gate_members WHERE gate_id = ? AND user_id = ?",
      )
      .get(gateId, userId);
    return row ? memberFromRow(row) : undefined;
  }

  async putMember(member: GateMember): Promise<void> {
    // A gate removed meanwhile (a re-check racing /gate remove) takes no member: nothing is written.
    this.db
      .prepare(
        `INSERT INTO gate_members (${MEMBER_COLUMNS.join(", ")})
         SELECT ${MEMBER_COLUMNS.map(() => "?").join(", ")} WHERE EXISTS (SELECT 1 FROM gates WHERE id = ?)
         ON CONFLICT (gate_id, user_id) DO UPDATE SET
           ${MEMBER_COLUMNS.slice(2)
             .map((c) => `${c} = excluded.${c}`)
             .join(", ")}`,
      )
      .run(...memberValues(member), member.gateId);
  }

  async removeMember(gateId: number, userId: string): Promise<void> {
    this.db
      .prepare("DELETE FROM gate_members WHERE gate_id = ? AND user_id = ?")
      .run(gateId, userId);
  }

  async members(gateId: number): Promise<GateMember[]> {
    return this.db
      .prepare<[number], GateMemberRow>(
        "SELECT * FROM gate_members WHERE gate_id = ? ORDER BY since, user_id",
      )
      .all(gateId)
      .map(memberFromRow);
  }

  async memberships(platform: Platform, userId: string): Promise<GateMember[]> {
    return this.db
      .prepare<[string, string], GateMemberRow>(
        `SELECT m.* FROM gate_members m JOIN gates g ON g.id = m.gate_id
         WHERE m.user_id = ? AND g.platform = ? ORDER BY m.gate_id`,
      )
      .all(userId, platform)
      .map(memberFromRow);
  }

  async due(checkedBefore: number, limit: number): Promise<GateMember[]> {
    return this.db
      .prepare<[number, number], GateMemberRow>(
        `SELECT m.* FROM gate_members m JOIN gates g ON g.id = m.gate_id
         WHERE g.paused_at IS NULL AND (m.last_checked_at IS NULL OR m.last_checked_at < ?)
         ${DUE_ORDER} LIMIT ?`,
      )
      .all(checkedBefore, limit)
      .map(memberFromRow);
  }

  async expiredRequests(now: number): Promise<GateMember[]> {
    return this.db
      .prepare<[number], GateMemberRow>(
        `SELECT * FROM gate_members WHERE status = 'pending' AND decide_by <= ?
         ORDER BY decide_by, gate_id, user_id`,
      )
      .all(now)
      .map(memberFromRow);
  }

  async oweGrant(grant: OwedGrant): Promise<void> {
    // A gate removed meanwhile owes nothing: nothing is written.
    this.db
      .prepare(
        `INSERT INTO gate_grants (${OWED_COLUMNS.join(", ")})
         SELECT ${OWED_COLUMNS.map(() => "?").join(", ")} WHERE EXISTS (SELECT 1 FROM gates WHERE id = ?)
         ON CONFLICT (gate_id, user_id) DO UPDATE SET
           ${OWED_COLUMNS.slice(2)
             .map((c) => `${c} = excluded.${c}`)
             .join(", ")}`,
      )
      .run(...owedValues(grant), grant.gateId);
  }

  async owedGrant(gateId: number, userId: string): Promise<OwedGrant | undefined> {
    const row = this.db
      .prepare<[number, string], OwedGrantRow>(
        "SELECT * FROM gate_grants WHERE gate_id = ? AND user_id = ?",
      )
      .get(gateId, userId);
    return row ? owedFromRow(row) : undefined;
  }

  async owedDue(now: number, limit: number): Promise<OwedGrant[]> {
    return this.db
      .prepare<[number, number], OwedGrantRow>(
        `SELECT o.* FROM gate_grants o JOIN gates g ON g.id = o.gate_id
         WHERE g.paused_at IS NULL AND o.retry_at <= ?
         ORDER BY o.retry_at, o.gate_id, o.user_id LIMIT ?`,
      )
      .all(now, limit)
      .map(owedFromRow);
  }

  async dropOwed(gateId: number, userId: string): Promise<void> {
    this.db
      .prepare("DELETE FROM gate_grants WHERE gate_id = ? AND user_id = ?")
      .run(gateId, userId);
  }

  async unwarned(gateId: number): Promise<number> {
    const row = this.db
      .prepare<[number], { n: number }>(
        "SELECT COUNT(*) AS n FROM gate_members WHERE gate_id = ? AND status = 'grace' AND told_at IS NULL",
      )
      .get(gateId);
    return row?.n ?? 0;
  }

  async log(entry: GateLogEntry): Promise<void> {
    // A removed gate's log went with it: a late line for it is dropped.
    this.db
      .prepare(
        `INSERT INTO gate_log (gate_id, user_id, at, action, reason)
         SELECT ?, ?, ?, ?, ? WHERE EXISTS (SELECT 1 FROM gates WHERE id = ?)`,
      )
      .run(entry.gateId, entry.userId, entry.at, entry.action, entry.reason, entry.gateId);
  }

  async logOf(gateId: number, limit: number): Promise<GateLogEntry[]> {
    return this.db
      .prepare<[number, number], GateLogRow>(
        `SELECT gate_id, user_id, at, action, reason FROM gate_log WHERE gate_id = ?
         ORDER BY at DESC, id DESC LIMIT ?`,
      )
      .all(gateId, limit)
      .map(logFromRow);
  }

  async counts(): Promise<{
    gates: number;
    paused: number;
    granted: number;
    grace: number;
    pending: number;
    owed: number;
  }> {
    const gates = this.db
      .prepare<[], { gates: number; paused: number | null }>(
        "SELECT COUNT(*) AS gates, SUM(paused_at IS NOT NULL) AS paused FROM gates",
      )
      .get() as { gates: number; paused: number | null };
    const members = this.db
      .prepare<[], { status: string; n: number }>(
        "SELECT status, COUNT(*) AS n FROM gate_members GROUP BY status",
      )
      .all();
    const of = (status: string) => members.find((m) => m.status === status)?.n ?? 0;
    const owed = this.db
      .prepare<[], { n: number }>("SELECT COUNT(*) AS n FROM gate_grants")
      .get() as { n: number };
    return {
      gates: gates.gates,
      paused: gates.paused ?? 0,
      granted: of("granted"),
      grace: of("grace"),
      pending: of("pending"),
      owed: owed.n,
    };
  }
}
