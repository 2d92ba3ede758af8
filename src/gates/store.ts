import { sql as raw } from "kysely";
import type { Platform } from "../core/command.ts";
import { type Sql, storeOver, type Tx, unbound, type Work } from "../store/query.ts";
import {
  type GateRow,
  gateFromRow,
  logFromRow,
  MEMBER_COLUMNS,
  memberFromRow,
  memberValues,
  movedTarget,
  OWED_COLUMNS,
  owedFromRow,
  owedValues,
} from "./rows.ts";
import { selectIfGate, unlessGateGone } from "./store-sql.ts";
import type { Gate, GateLogEntry, GateMember, GateStore, NewGate, OwedGrant } from "./types.ts";

/** Gates, their members and log; on PostgreSQL shared by every instance. */
export class SqlGateStore implements GateStore {
  constructor(private readonly sql: Sql) {}

  async add(
    gate: NewGate,
    max: number,
  ): Promise<{ kind: "added"; gate: Gate } | { kind: "full"; count: number }> {
    const { sql } = this;
    const { q } = sql;
    // One adder per chat at a time, so two cannot both count nine and both add a tenth. On SQLite
    // IMMEDIATE takes the write lock before the count (two processes on one file); on PostgreSQL
    // the chat's advisory lock orders instances (a count under READ COMMITTED alone would let both
    // see nine and make eleven).
    return sql.transaction(
      function* (tx) {
        if (tx.dialect === "postgres")
          yield* tx.run(
            sql.raw(
              raw`SELECT pg_advisory_xact_lock(hashtext(${`gates:${gate.platform}:${gate.chatId}`}))`,
            ),
          );
        const counted = yield* tx.first(
          q
            .selectFrom("gates")
            .select((row) => row.fn.countAll().as("count"))
            .where("platform", "=", gate.platform)
            .where("chat_id", "=", gate.chatId),
        );
        const count = Number(counted?.count ?? 0);
        if (count >= max) return { kind: "full" as const, count };
        const row = yield* tx.first(
          q
            .insertInto("gates")
            .values({
              platform: gate.platform,
              chat_id: gate.chatId,
              target: JSON.stringify(gate.target),
              criteria: JSON.stringify(gate.criteria),
              created_by: gate.createdBy,
              created_at: gate.createdAt,
            })
            .returningAll(),
        );
        return { kind: "added" as const, gate: gateFromRow(row as GateRow) };
      },
      { immediate: true },
    );
  }

  async forChat(platform: Platform, chatId: string): Promise<Gate[]> {
    const { q } = this.sql;
    const rows = await this.sql.all(
      q
        .selectFrom("gates")
        .selectAll()
        .where("platform", "=", platform)
        .where("chat_id", "=", chatId)
        .orderBy("id"),
    );
    return rows.map(gateFromRow);
  }

  async moveChat(platform: Platform, fromChatId: string, toChatId: string): Promise<void> {
    const { q } = this.sql;
    const work = function* (tx: Tx): Work<void> {
      const rows = yield* tx.all(
        q
          .selectFrom("gates")
          .selectAll()
          .where("platform", "=", platform)
          .where("chat_id", "=", fromChatId),
      );
      for (const gate of rows.map(gateFromRow))
        yield* tx.run(
          q
            .updateTable("gates")
            .set({
              chat_id: toChatId,
              target: JSON.stringify(movedTarget(gate.target, fromChatId, toChatId)),
            })
            .where("id", "=", gate.id),
        );
    };
    // As the two stores did: one IMMEDIATE transaction on SQLite; on PostgreSQL each statement
    // on its own (a chat's move is rare and each update stands alone), with no BEGIN/COMMIT.
    if (this.sql.dialect === "sqlite") await this.sql.transaction(work, { immediate: true });
    else await unbound(this.sql, work);
  }

  async get(id: number): Promise<Gate | undefined> {
    const { q } = this.sql;
    const row = await this.sql.first(q.selectFrom("gates").selectAll().where("id", "=", id));
    return row ? gateFromRow(row) : undefined;
  }

  async all(platform?: Platform): Promise<Gate[]> {
    const { q } = this.sql;
    const every = q.selectFrom("gates").selectAll();
    const rows = await this.sql.all(
      (platform === undefined ? every : every.where("platform", "=", platform)).orderBy("id"),
    );
    return rows.map(gateFromRow);
  }

  async remove(platform: Platform, chatId: string, id: number): Promise<boolean> {
    const { q } = this.sql;
    const gate = q
      .deleteFrom("gates")
      .where("id", "=", id)
      .where("platform", "=", platform)
      .where("chat_id", "=", chatId);
    // PostgreSQL: the members, grants and log go with the gate (ON DELETE CASCADE), in the same
    // statement.
    if (this.sql.dialect === "postgres") return (await this.sql.run(gate)) > 0;
    // SQLite: said outright rather than left to ON DELETE CASCADE, which needs foreign_keys on.
    return this.sql.transaction(
      function* (tx) {
        const found = yield* tx.first(
          q
            .selectFrom("gates")
            .select("id")
            .where("id", "=", id)
            .where("platform", "=", platform)
            .where("chat_id", "=", chatId),
        );
        if (!found) return false;
        yield* tx.run(q.deleteFrom("gate_log").where("gate_id", "=", id));
        yield* tx.run(q.deleteFrom("gate_members").where("gate_id", "=", id));
        yield* tx.run(q.deleteFrom("gate_grants").where("gate_id", "=", id));
        yield* tx.run(q.deleteFrom("gates").where("id", "=", id));
        return true;
      },
      { immediate: true },
    );
  }

  async pause(id: number, reason: string, now: number): Promise<void> {
    const { q } = this.sql;
    // An earlier pause is kept: when and why it first stopped.
    await this.sql.run(
      q
        .updateTable("gates")
        .set({ paused_at: now, pause_reason: reason })
        .where("id", "=", id)
        .where("paused_at", "is", null),
    );
  }

  async resume(id: number): Promise<void> {
    const { q } = this.sql;
    await this.sql.run(
      q.updateTable("gates").set({ paused_at: null, pause_reason: null }).where("id", "=", id),
    );
  }

  async member(gateId: number, userId: string): Promise<GateMember | undefined> {
    const { q } = this.sql;
    const row = await this.sql.first(
      q
        .selectFrom("gate_members")
        .selectAll()
        .where("gate_id", "=", gateId)
        .where("user_id", "=", userId),
    );
    return row ? memberFromRow(row) : undefined;
  }

  async putMember(member: GateMember): Promise<void> {
    const { q } = this.sql;
    // A gate removed meanwhile (a re-check racing /gate remove) takes no member: nothing is written.
    await unlessGateGone(
      this.sql.run(
        q
          .insertInto("gate_members")
          .columns(MEMBER_COLUMNS)
          .expression(selectIfGate(this.sql, MEMBER_COLUMNS, memberValues(member), member.gateId))
          .onConflict((conflict) =>
            conflict.columns(["gate_id", "user_id"]).doUpdateSet((row) => ({
              status: row.ref("excluded.status"),
              since: row.ref("excluded.since"),
              failing_since: row.ref("excluded.failing_since"),
              grace_until: row.ref("excluded.grace_until"),
              told_at: row.ref("excluded.told_at"),
              user_chat_id: row.ref("excluded.user_chat_id"),
              decide_by: row.ref("excluded.decide_by"),
              last_checked_at: row.ref("excluded.last_checked_at"),
            })),
          ),
      ),
    );
  }

  async removeMember(gateId: number, userId: string): Promise<void> {
    const { q } = this.sql;
    await this.sql.run(
      q.deleteFrom("gate_members").where("gate_id", "=", gateId).where("user_id", "=", userId),
    );
  }

  async members(gateId: number): Promise<GateMember[]> {
    const { q } = this.sql;
    const rows = await this.sql.all(
      q
        .selectFrom("gate_members")
        .selectAll()
        .where("gate_id", "=", gateId)
        .orderBy("since")
        .orderBy("user_id"),
    );
    return rows.map(memberFromRow);
  }

  async memberships(platform: Platform, userId: string): Promise<GateMember[]> {
    const { q } = this.sql;
    const rows = await this.sql.all(
      q
        .selectFrom("gate_members as m")
        .innerJoin("gates as g", "g.id", "m.gate_id")
        .selectAll("m")
        .where("m.user_id", "=", userId)
        .where("g.platform", "=", platform)
        .orderBy("m.gate_id"),
    );
    return rows.map(memberFromRow);
  }

  async due(checkedBefore: number, limit: number): Promise<GateMember[]> {
    const { q } = this.sql;
    const rows = await this.sql.all(
      q
        .selectFrom("gate_members as m")
        .innerJoin("gates as g", "g.id", "m.gate_id")
        .selectAll("m")
        .where("g.paused_at", "is", null)
        .where((row) =>
          row.or([
            row("m.last_checked_at", "is", null),
            row("m.last_checked_at", "<", checkedBefore),
          ]),
        )
        // Never checked first, then the oldest check; ties in a fixed order.
        .orderBy("m.last_checked_at", (order) => order.asc().nullsFirst())
        .orderBy("m.gate_id")
        .orderBy("m.user_id")
        .limit(limit),
    );
    return rows.map(memberFromRow);
  }

  async expiredRequests(now: number): Promise<GateMember[]> {
    const { q } = this.sql;
    const rows = await this.sql.all(
      q
        .selectFrom("gate_members")
        .selectAll()
        .where("status", "=", "pending")
        .where("decide_by", "<=", now)
        .orderBy("decide_by")
        .orderBy("gate_id")
        .orderBy("user_id"),
    );
    return rows.map(memberFromRow);
  }

  async oweGrant(grant: OwedGrant): Promise<void> {
    const { q } = this.sql;
    // A gate removed meanwhile owes nothing: nothing is written.
    await unlessGateGone(
      this.sql.run(
        q
          .insertInto("gate_grants")
          .columns(OWED_COLUMNS)
          .expression(selectIfGate(this.sql, OWED_COLUMNS, owedValues(grant), grant.gateId))
          .onConflict((conflict) =>
            conflict.columns(["gate_id", "user_id"]).doUpdateSet((row) => ({
              action: row.ref("excluded.action"),
              reason: row.ref("excluded.reason"),
              since: row.ref("excluded.since"),
              attempts: row.ref("excluded.attempts"),
              retry_at: row.ref("excluded.retry_at"),
              last_error: row.ref("excluded.last_error"),
            })),
          ),
      ),
    );
  }

  async owedGrant(gateId: number, userId: string): Promise<OwedGrant | undefined> {
    const { q } = this.sql;
    const row = await this.sql.first(
      q
        .selectFrom("gate_grants")
        .selectAll()
        .where("gate_id", "=", gateId)
        .where("user_id", "=", userId),
    );
    return row ? owedFromRow(row) : undefined;
  }

  async owedDue(now: number, limit: number): Promise<OwedGrant[]> {
    const { q } = this.sql;
    const rows = await this.sql.all(
      q
        .selectFrom("gate_grants as o")
        .innerJoin("gates as g", "g.id", "o.gate_id")
        .selectAll("o")
        .where("g.paused_at", "is", null)
        .where("o.retry_at", "<=", now)
        .orderBy("o.retry_at")
        .orderBy("o.gate_id")
        .orderBy("o.user_id")
        .limit(limit),
    );
    return rows.map(owedFromRow);
  }

  async dropOwed(gateId: number, userId: string): Promise<void> {
    const { q } = this.sql;
    await this.sql.run(
      q.deleteFrom("gate_grants").where("gate_id", "=", gateId).where("user_id", "=", userId),
    );
  }

  async unwarned(gateId: number): Promise<number> {
    const { q } = this.sql;
    const row = await this.sql.first(
      q
        .selectFrom("gate_members")
        .select((count) => count.fn.countAll().as("n"))
        .where("gate_id", "=", gateId)
        .where("status", "=", "grace")
        .where("told_at", "is", null),
    );
    return Number(row?.n ?? 0);
  }

  async log(entry: GateLogEntry): Promise<void> {
    const { q } = this.sql;
    // A removed gate's log went with it: a late line for it is dropped.
    const columns = ["gate_id", "user_id", "at", "action", "reason"] as const;
    const values = [entry.gateId, entry.userId, entry.at, entry.action, entry.reason];
    await unlessGateGone(
      this.sql.run(
        q
          .insertInto("gate_log")
          .columns(columns)
          .expression(selectIfGate(this.sql, columns, values, entry.gateId)),
      ),
    );
  }

  async logOf(gateId: number, limit: number): Promise<GateLogEntry[]> {
    const { q } = this.sql;
    const rows = await this.sql.all(
      q
        .selectFrom("gate_log")
        .select(["gate_id", "user_id", "at", "action", "reason"])
        .where("gate_id", "=", gateId)
        .orderBy("at", "desc")
        .orderBy("id", "desc")
        .limit(limit),
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
    const { q } = this.sql;
    // One statement, one snapshot, on both.
    const members = (status: "granted" | "grace" | "pending") =>
      q
        .selectFrom("gate_members")
        .select((count) => count.fn.countAll().as("n"))
        .where("status", "=", status);
    const row = await this.sql.first(
      q.selectNoFrom((counted) => [
        counted
          .selectFrom("gates")
          .select((count) => count.fn.countAll().as("n"))
          .as("gates"),
        counted
          .selectFrom("gates")
          .select((count) => count.fn.countAll().as("n"))
          .where("paused_at", "is not", null)
          .as("paused"),
        members("granted").as("granted"),
        members("grace").as("grace"),
        members("pending").as("pending"),
        counted
          .selectFrom("gate_grants")
          .select((count) => count.fn.countAll().as("n"))
          .as("owed"),
      ]),
    );
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

/**
 * The gates' store over the bot's store (its query layer), built once: the gates keep their own
 * tables, written once for both databases; the rest of the bot reaches them only through the
 * feature.
 */
export const gateStoreOf = storeOver((sql) => new SqlGateStore(sql));
