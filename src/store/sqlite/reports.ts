import { DEFAULT_CHAIN_ID } from "../../chains.ts";
import { type ReportRow, toReport } from "../rows.ts";
import type { NewReport, ReportKey, ReportStatus, ReportStore, SpamReport } from "../types.ts";
import type { Db } from "./db.ts";

/** The audit trail of every report: who, where, what, and what the data service answered. */
export class SqliteReportStore implements ReportStore {
  constructor(private readonly db: Db) {}

  /**
   * Records a report unless this person already reported the same (wallet, contract, token,
   * kind): then the earlier report is returned and `created` is false.
   */
  async create(report: NewReport, now: number): Promise<{ report: SpamReport; created: boolean }> {
    return this.db
      .transaction(() => {
        const inserted = this.db
          .prepare(
            `INSERT OR IGNORE INTO spam_reports
               (chain, platform, chat_id, user_id, user_name, wallet, contract, token_id, kind, feedback, status, created_at, updated_at)
             VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?, 'sending', ?, ?)`,
          )
          .run(
            report.chain ?? DEFAULT_CHAIN_ID,
            report.platform,
            report.chatId,
            report.userId,
            report.userName,
            report.wallet.toLowerCase(),
            report.contract.toLowerCase(),
            report.tokenId,
            report.kind,
            report.feedback,
            now,
            now,
          );
        const row = this.findSameNow(report);
        if (!row) throw new Error("report row vanished");
        return { report: row, created: inserted.changes > 0 };
      })
      .immediate();
  }

  /** This person's earlier report of the same (wallet, contract, token, kind), if any. */
  async findSame(key: ReportKey): Promise<SpamReport | undefined> {
    return this.findSameNow(key);
  }

  private findSameNow(key: ReportKey): SpamReport | undefined {
    const row = this.db
      .prepare<[string, string, string, string, string, string, string], ReportRow>(
        "SELECT * FROM spam_reports WHERE chain = ? AND platform = ? AND user_id = ? AND wallet = ? AND contract = ? AND token_id = ? AND kind = ?",
      )
      .get(
        key.chain ?? DEFAULT_CHAIN_ID,
        key.platform,
        key.userId,
        key.wallet.toLowerCase(),
        key.contract.toLowerCase(),
        key.tokenId,
        key.kind,
      );
    return row ? toReport(row) : undefined;
  }

  private get(id: number): SpamReport | undefined {
    const row = this.db
      .prepare<[number], ReportRow>("SELECT * FROM spam_reports WHERE id = ?")
      .get(id);
    return row ? toReport(row) : undefined;
  }

  /**
   * Records an attempt before its call is made (committed first, so a crash during the call
   * leaves the report in 'sending', which the next start marks unknown).
   */
  async begin(id: number, now: number): Promise<SpamReport> {
    this.db
      .prepare(
        "UPDATE spam_reports SET status = 'sending', attempts = attempts + 1, next_attempt_at = NULL, updated_at = ? WHERE id = ?",
      )
      .run(now, id);
    const report = this.get(id);
    if (!report) throw new Error(`report ${id} vanished`);
    return report;
  }

  async finish(
    id: number,
    status: Exclude<ReportStatus, "sending" | "queued">,
    upstream: string,
    now: number,
  ): Promise<void> {
    this.db
      .prepare(
        "UPDATE spam_reports SET status = ?, upstream = ?, next_attempt_at = NULL, updated_at = ? WHERE id = ?",
      )
      .run(status, upstream.slice(0, 2000), now, id);
  }

  async queue(id: number, upstream: string, nextAttemptAt: number, now: number): Promise<void> {
    this.db
      .prepare(
        "UPDATE spam_reports SET status = 'queued', upstream = ?, next_attempt_at = ?, updated_at = ? WHERE id = ?",
      )
      .run(upstream.slice(0, 2000), nextAttemptAt, now, id);
  }

  /**
   * Reports left in 'sending' by a process that stopped during the call: whether the service
   * got them is unknown, and they are not sent again. Returns how many.
   */
  async markInterrupted(now: number, sendingBefore: number): Promise<number> {
    return this.db
      .prepare(
        "UPDATE spam_reports SET status = 'unknown', upstream = ?, next_attempt_at = NULL, updated_at = ? WHERE status = 'sending' AND updated_at < ?",
      )
      .run("the bot stopped during the call", now, sendingBefore).changes;
  }

  /** Reports waiting for a retry. */
  async due(now: number, limit: number): Promise<SpamReport[]> {
    return this.db
      .prepare<[number, number], ReportRow>(
        "SELECT * FROM spam_reports WHERE status = 'queued' AND next_attempt_at <= ? ORDER BY id LIMIT ?",
      )
      .all(now, limit)
      .map(toReport);
  }

  /** How many reports a person made since `since` (for the per-person limit). */
  async countSince(platform: string, userId: string, since: number): Promise<number> {
    return (
      this.db
        .prepare(
          "SELECT COUNT(*) AS n FROM spam_reports WHERE platform = ? AND user_id = ? AND created_at >= ?",
        )
        .get(platform, userId, since) as { n: number }
    ).n;
  }

  async forChat(platform: string, chatId: string, limit = 10_000): Promise<SpamReport[]> {
    return this.db
      .prepare<[string, string, number], ReportRow>(
        "SELECT * FROM spam_reports WHERE platform = ? AND chat_id = ? ORDER BY id DESC LIMIT ?",
      )
      .all(platform, chatId, limit)
      .map(toReport);
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
    const marks = (n: number) => Array.from({ length: n }, () => "?").join(", ");
    return this.db
      .prepare<unknown[], { chat_id: string; contract: string; reporters: number }>(
        `SELECT chat_id, contract, COUNT(DISTINCT user_id) AS reporters FROM spam_reports
          WHERE platform = ? AND chain = ? AND kind = 'spam' AND chat_id IN (${marks(chats.length)})
            AND contract IN (${marks(wanted.length)})
          GROUP BY chat_id, contract`,
      )
      .all(platform, chain, ...chats, ...wanted)
      .map((row) => ({ chatId: row.chat_id, contract: row.contract, reporters: row.reporters }));
  }
}
