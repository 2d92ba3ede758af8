import { DEFAULT_CHAIN_ID } from "../../chains.ts";
import { type ReportRow, toReport } from "../rows.ts";
import type { NewReport, ReportKey, ReportStatus, ReportStore, SpamReport } from "../types.ts";
import type { PgDb, Queryable } from "./db.ts";

async function findSameIn(q: Queryable, key: ReportKey): Promise<SpamReport | undefined> {
  const { rows } = await q.query<ReportRow>(
    "SELECT * FROM spam_reports WHERE platform = $1 AND user_id = $2 AND wallet = $3 AND contract = $4 AND token_id = $5 AND kind = $6 AND chain = $7",
    [
      key.platform,
      key.userId,
      key.wallet.toLowerCase(),
      key.contract.toLowerCase(),
      key.tokenId,
      key.kind,
      key.chain ?? DEFAULT_CHAIN_ID,
    ],
  );
  return rows[0] && toReport(rows[0]);
}

/** The audit trail of every report, shared by every instance. */
export class PgReportStore implements ReportStore {
  constructor(private readonly db: PgDb) {}

  /** Inserted unless the same report exists; then the existing one (the unique key decides). */
  async create(report: NewReport, now: number): Promise<{ report: SpamReport; created: boolean }> {
    const { rows } = await this.db.query<ReportRow>(
      `INSERT INTO spam_reports
         (platform, chat_id, user_id, user_name, wallet, contract, token_id, kind, feedback, status, created_at, updated_at, chain)
       VALUES ($1, $2, $3, $4, $5, $6, $7, $8, $9, 'sending', $10, $10, $11)
       ON CONFLICT DO NOTHING RETURNING *`,
      [
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
        report.chain ?? DEFAULT_CHAIN_ID,
      ],
    );
    if (rows[0]) return { report: toReport(rows[0]), created: true };
    const existing = await findSameIn(this.db, report);
    if (!existing) throw new Error("report row vanished");
    return { report: existing, created: false };
  }

  async findSame(key: ReportKey): Promise<SpamReport | undefined> {
    return findSameIn(this.db, key);
  }

  async begin(id: number, now: number): Promise<SpamReport> {
    const { rows } = await this.db.query<ReportRow>(
      `UPDATE spam_reports SET status = 'sending', attempts = attempts + 1, next_attempt_at = NULL, updated_at = $1
        WHERE id = $2 RETURNING *`,
      [now, id],
    );
    if (!rows[0]) throw new Error(`report ${id} vanished`);
    return toReport(rows[0]);
  }

  async finish(
    id: number,
    status: Exclude<ReportStatus, "sending" | "queued">,
    upstream: string,
    now: number,
  ): Promise<void> {
    await this.db.query(
      "UPDATE spam_reports SET status = $1, upstream = $2, next_attempt_at = NULL, updated_at = $3 WHERE id = $4",
      [status, upstream.slice(0, 2000), now, id],
    );
  }

  async queue(id: number, upstream: string, nextAttemptAt: number, now: number): Promise<void> {
    await this.db.query(
      "UPDATE spam_reports SET status = 'queued', upstream = $1, next_attempt_at = $2, updated_at = $3 WHERE id = $4",
      [upstream.slice(0, 2000), nextAttemptAt, now, id],
    );
  }

  async markInterrupted(now: number, sendingBefore: number): Promise<number> {
    const result = await this.db.query(
      "UPDATE spam_reports SET status = 'unknown', upstream = $1, next_attempt_at = NULL, updated_at = $2 WHERE status = 'sending' AND updated_at < $3",
      ["the bot stopped during the call", now, sendingBefore],
    );
    return result.rowCount ?? 0;
  }

  async due(now: number, limit: number): Promise<SpamReport[]> {
    const { rows } = await this.db.query<ReportRow>(
      "SELECT * FROM spam_reports WHERE status = 'queued' AND next_attempt_at <= $1 ORDER BY id LIMIT $2",
      [now, limit],
    );
    return rows.map(toReport);
  }

  async countSince(platform: string, userId: string, since: number): Promise<number> {
    const { rows } = await this.db.query<{ n: number }>(
      "SELECT COUNT(*) AS n FROM spam_reports WHERE platform = $1 AND user_id = $2 AND created_at >= $3",
      [platform, userId, since],
    );
    return rows[0]?.n ?? 0;
  }

  async forChat(platform: string, chatId: string, limit = 10_000): Promise<SpamReport[]> {
    const { rows } = await this.db.query<ReportRow>(
      "SELECT * FROM spam_reports WHERE platform = $1 AND chat_id = $2 ORDER BY id DESC LIMIT $3",
      [platform, chatId, limit],
    );
    return rows.map(toReport);
  }

  async spamReporters(
    platform: string,
    chain: string,
    chatIds: readonly string[],
    contracts: readonly string[],
  ): Promise<{ chatId: string; contract: string; reporters: number }[]> {
    if (chatIds.length === 0 || contracts.length === 0) return [];
    const { rows } = await this.db.query<{ chat_id: string; contract: string; reporters: number }>(
      `SELECT chat_id, contract, COUNT(DISTINCT user_id) AS reporters FROM spam_reports
        WHERE platform = $1 AND chain = $4 AND kind = 'spam' AND chat_id = ANY($2::text[])
          AND contract = ANY($3::text[])
        GROUP BY chat_id, contract`,
      [platform, [...new Set(chatIds)], [...new Set(contracts.map((c) => c.toLowerCase()))], chain],
    );
    return rows.map((row) => ({
      chatId: row.chat_id,
      contract: row.contract,
      reporters: Number(row.reporters),
    }));
  }
}
