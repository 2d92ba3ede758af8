import { DEFAULT_CHAIN_ID } from "../../chains.ts";
import { anyOf, type Sql, type Tx, unbound } from "../query.ts";
import { toReport } from "../rows.ts";
import type { NewReport, ReportKey, ReportStatus, ReportStore, SpamReport } from "../types.ts";

/** The longest answer of the data service kept with a report. */
const UPSTREAM_MAX = 2000;

/** The audit trail of every report: who, where, what, and what the data service answered. */
export class SqlReportStore implements ReportStore {
  constructor(private readonly sql: Sql) {}

  /** This person's report of the same (wallet, contract, token, kind) on the same chain. */
  private same(key: ReportKey) {
    const { q } = this.sql;
    return q
      .selectFrom("spam_reports")
      .selectAll()
      .where("chain", "=", key.chain ?? DEFAULT_CHAIN_ID)
      .where("platform", "=", key.platform)
      .where("user_id", "=", key.userId)
      .where("wallet", "=", key.wallet.toLowerCase())
      .where("contract", "=", key.contract.toLowerCase())
      .where("token_id", "=", key.tokenId)
      .where("kind", "=", key.kind);
  }

  /**
   * Records a report unless this person already reported the same (wallet, contract, token,
   * kind): then the earlier report is returned and `created` is false (the unique key decides,
   * so a double press records one).
   */
  async create(report: NewReport, now: number): Promise<{ report: SpamReport; created: boolean }> {
    const { q } = this.sql;
    const insert = q
      .insertInto("spam_reports")
      .values({
        chain: report.chain ?? DEFAULT_CHAIN_ID,
        platform: report.platform,
        chat_id: report.chatId,
        user_id: report.userId,
        user_name: report.userName,
        wallet: report.wallet.toLowerCase(),
        contract: report.contract.toLowerCase(),
        token_id: report.tokenId,
        kind: report.kind,
        feedback: report.feedback,
        status: "sending",
        created_at: now,
        updated_at: now,
      })
      .onConflict((conflict) => conflict.doNothing())
      .returningAll();
    const same = this.same(report);
    function* work(tx: Tx) {
      const inserted = yield* tx.first(insert);
      if (inserted) return { report: toReport(inserted), created: true };
      const existing = yield* tx.first(same);
      if (!existing) throw new Error("report row vanished");
      return { report: toReport(existing), created: false };
    }
    // SQLite: the insert and the read of the earlier report in one immediate transaction, as
    // before. PostgreSQL: each on its own, as before (a transaction would be two more round
    // trips; the unique key already makes the double press record one).
    return this.sql.dialect === "sqlite"
      ? this.sql.transaction(work, { immediate: true })
      : unbound(this.sql, work);
  }

  /** This person's earlier report of the same (wallet, contract, token, kind), if any. */
  async findSame(key: ReportKey): Promise<SpamReport | undefined> {
    const row = await this.sql.first(this.same(key));
    return row && toReport(row);
  }

  /**
   * Records an attempt before its call is made (committed first, so a crash during the call
   * leaves the report in 'sending', which the next start marks unknown).
   */
  async begin(id: number, now: number): Promise<SpamReport> {
    const { q } = this.sql;
    const row = await this.sql.first(
      q
        .updateTable("spam_reports")
        .set((row) => ({
          status: "sending",
          attempts: row("attempts", "+", 1),
          next_attempt_at: null,
          updated_at: now,
        }))
        .where("id", "=", id)
        .returningAll(),
    );
    if (!row) throw new Error(`report ${id} vanished`);
    return toReport(row);
  }

  async finish(
    id: number,
    status: Exclude<ReportStatus, "sending" | "queued">,
    upstream: string,
    now: number,
  ): Promise<void> {
    const { q } = this.sql;
    await this.sql.run(
      q
        .updateTable("spam_reports")
        .set({
          status,
          upstream: upstream.slice(0, UPSTREAM_MAX),
          next_attempt_at: null,
          updated_at: now,
        })
        .where("id", "=", id),
    );
  }

  async queue(id: number, upstream: string, nextAttemptAt: number, now: number): Promise<void> {
    const { q } = this.sql;
    await this.sql.run(
      q
        .updateTable("spam_reports")
        .set({
          status: "queued",
          upstream: upstream.slice(0, UPSTREAM_MAX),
          next_attempt_at: nextAttemptAt,
          updated_at: now,
        })
        .where("id", "=", id),
    );
  }

  /**
   * Reports left in 'sending' by a process that stopped during the call: whether the service
   * got them is unknown, and they are not sent again. Returns how many.
   */
  async markInterrupted(now: number, sendingBefore: number): Promise<number> {
    const { q } = this.sql;
    return this.sql.run(
      q
        .updateTable("spam_reports")
        .set({
          status: "unknown",
          upstream: "the bot stopped during the call",
          next_attempt_at: null,
          updated_at: now,
        })
        .where("status", "=", "sending")
        .where("updated_at", "<", sendingBefore),
    );
  }

  /** Reports waiting for a retry. */
  async due(now: number, limit: number): Promise<SpamReport[]> {
    const { q } = this.sql;
    const rows = await this.sql.all(
      q
        .selectFrom("spam_reports")
        .selectAll()
        .where("status", "=", "queued")
        .where("next_attempt_at", "<=", now)
        .orderBy("id")
        .limit(limit),
    );
    return rows.map(toReport);
  }

  /** How many reports a person made since `since` (for the per-person limit). */
  async countSince(platform: string, userId: string, since: number): Promise<number> {
    const { q } = this.sql;
    const row = await this.sql.first(
      q
        .selectFrom("spam_reports")
        .select((row) => row.fn.countAll().as("n"))
        .where("platform", "=", platform)
        .where("user_id", "=", userId)
        .where("created_at", ">=", since),
    );
    return Number(row?.n ?? 0);
  }

  async forChat(platform: string, chatId: string, limit = 10_000): Promise<SpamReport[]> {
    const { q } = this.sql;
    const rows = await this.sql.all(
      q
        .selectFrom("spam_reports")
        .selectAll()
        .where("platform", "=", platform)
        .where("chat_id", "=", chatId)
        .orderBy("id", "desc")
        .limit(limit),
    );
    return rows.map(toReport);
  }

  async spamReporters(
    platform: string,
    chain: string,
    chatIds: readonly string[],
    contracts: readonly string[],
  ): Promise<{ chatId: string; contract: string; reporters: number }[]> {
    const chats = [...new Set(chatIds)];
    const wanted = [...new Set(contracts.map((c) => c.toLowerCase()))];
    if (chats.length === 0 || wanted.length === 0) return [];
    const { q } = this.sql;
    // PostgreSQL takes each list as one array parameter (one statement text for any length);
    // SQLite has no arrays: an IN list.
    const postgres = this.sql.dialect === "postgres";
    const rows = await this.sql.all(
      q
        .selectFrom("spam_reports")
        .select((row) => [
          "chat_id",
          "contract",
          row.fn.count<number | string>("user_id").distinct().as("reporters"),
        ])
        .where("platform", "=", platform)
        .where("chain", "=", chain)
        .where("kind", "=", "spam")
        .where((row) =>
          postgres
            ? row.and([
                row("chat_id", "=", anyOf(chats, "text")),
                row("contract", "=", anyOf(wanted, "text")),
              ])
            : row.and([row("chat_id", "in", chats), row("contract", "in", wanted)]),
        )
        .groupBy(["chat_id", "contract"]),
    );
    return rows.map((row) => ({
      chatId: row.chat_id,
      contract: row.contract,
      reporters: Number(row.reporters),
    }));
  }
}
