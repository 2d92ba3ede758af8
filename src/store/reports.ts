import type { Db } from "./db.ts";

export interface LinkedWallet {
  address: string;
  /** What the person typed: the ENS name or the address. */
  label: string;
  linkedAt: number;
}

/** The wallet each chat account reports for, when a message has no wallet of its own. */
export class LinkedWalletRepository {
  constructor(private readonly db: Db) {}

  link(platform: string, userId: string, address: string, label: string, now: number): void {
    this.db
      .prepare(
        `INSERT INTO linked_wallets (platform, user_id, address, label, linked_at) VALUES (?, ?, ?, ?, ?)
         ON CONFLICT (platform, user_id) DO UPDATE SET address = excluded.address, label = excluded.label, linked_at = excluded.linked_at`,
      )
      .run(platform, userId, address, label, now);
  }

  unlink(platform: string, userId: string): boolean {
    return (
      this.db
        .prepare("DELETE FROM linked_wallets WHERE platform = ? AND user_id = ?")
        .run(platform, userId).changes > 0
    );
  }

  find(platform: string, userId: string): LinkedWallet | undefined {
    const row = this.db
      .prepare<[string, string], { address: string; label: string; linked_at: number }>(
        "SELECT address, label, linked_at FROM linked_wallets WHERE platform = ? AND user_id = ?",
      )
      .get(platform, userId);
    return row ? { address: row.address, label: row.label, linkedAt: row.linked_at } : undefined;
  }
}

export type ReportKind = "spam" | "not_spam";
/**
 * sending: an attempt is under way; queued: waiting for a retry (the service certainly did not
 * get it); unknown: the bot stopped or timed out during the call, so it may or may not have
 * arrived, and it is never sent again; the others are final answers.
 */
export type ReportStatus = "sending" | "sent" | "queued" | "unsupported" | "failed" | "unknown";

export interface SpamReport {
  id: number;
  platform: string;
  chatId: string;
  userId: string;
  userName: string;
  wallet: string;
  contract: string;
  /** "" when the report is about a whole collection. */
  tokenId: string;
  kind: ReportKind;
  feedback: string | null;
  status: ReportStatus;
  upstream: string | null;
  attempts: number;
  nextAttemptAt: number | null;
  createdAt: number;
  updatedAt: number;
}

interface ReportRow {
  id: number;
  platform: string;
  chat_id: string;
  user_id: string;
  user_name: string;
  wallet: string;
  contract: string;
  token_id: string;
  kind: ReportKind;
  feedback: string | null;
  status: ReportStatus;
  upstream: string | null;
  attempts: number;
  next_attempt_at: number | null;
  created_at: number;
  updated_at: number;
}

const toReport = (row: ReportRow): SpamReport => ({
  id: row.id,
  platform: row.platform,
  chatId: row.chat_id,
  userId: row.user_id,
  userName: row.user_name,
  wallet: row.wallet,
  contract: row.contract,
  tokenId: row.token_id,
  kind: row.kind,
  feedback: row.feedback,
  status: row.status,
  upstream: row.upstream,
  attempts: row.attempts,
  nextAttemptAt: row.next_attempt_at,
  createdAt: row.created_at,
  updatedAt: row.updated_at,
});

export type NewReport = Pick<
  SpamReport,
  | "platform"
  | "chatId"
  | "userId"
  | "userName"
  | "wallet"
  | "contract"
  | "tokenId"
  | "kind"
  | "feedback"
>;

/** The audit trail of every report: who, where, what, and what the data service answered. */
export class ReportRepository {
  constructor(private readonly db: Db) {}

  /**
   * Records a report unless this person already reported the same (wallet, contract, token,
   * kind): then the earlier report is returned and `created` is false.
   */
  create(report: NewReport, now: number): { report: SpamReport; created: boolean } {
    return this.db
      .transaction(() => {
        const inserted = this.db
          .prepare(
            `INSERT OR IGNORE INTO spam_reports
               (platform, chat_id, user_id, user_name, wallet, contract, token_id, kind, feedback, status, created_at, updated_at)
             VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, 'sending', ?, ?)`,
          )
          .run(
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
        const row = this.findSame(report);
        if (!row) throw new Error("report row vanished");
        return { report: row, created: inserted.changes > 0 };
      })
      .immediate();
  }

  /** This person's earlier report of the same (wallet, contract, token, kind), if any. */
  findSame(
    key: Pick<SpamReport, "platform" | "userId" | "wallet" | "contract" | "tokenId" | "kind">,
  ): SpamReport | undefined {
    const row = this.db
      .prepare<[string, string, string, string, string, string], ReportRow>(
        "SELECT * FROM spam_reports WHERE platform = ? AND user_id = ? AND wallet = ? AND contract = ? AND token_id = ? AND kind = ?",
      )
      .get(
        key.platform,
        key.userId,
        key.wallet.toLowerCase(),
        key.contract.toLowerCase(),
        key.tokenId,
        key.kind,
      );
    return row ? toReport(row) : undefined;
  }

  get(id: number): SpamReport | undefined {
    const row = this.db
      .prepare<[number], ReportRow>("SELECT * FROM spam_reports WHERE id = ?")
      .get(id);
    return row ? toReport(row) : undefined;
  }

  /**
   * Records an attempt before its call is made (committed first, so a crash during the call
   * leaves the report in 'sending', which the next start marks unknown).
   */
  begin(id: number, now: number): SpamReport {
    this.db
      .prepare(
        "UPDATE spam_reports SET status = 'sending', attempts = attempts + 1, next_attempt_at = NULL, updated_at = ? WHERE id = ?",
      )
      .run(now, id);
    const report = this.get(id);
    if (!report) throw new Error(`report ${id} vanished`);
    return report;
  }

  finish(
    id: number,
    status: Exclude<ReportStatus, "sending" | "queued">,
    upstream: string,
    now: number,
  ): void {
    this.db
      .prepare(
        "UPDATE spam_reports SET status = ?, upstream = ?, next_attempt_at = NULL, updated_at = ? WHERE id = ?",
      )
      .run(status, upstream.slice(0, 2000), now, id);
  }

  queue(id: number, upstream: string, nextAttemptAt: number, now: number): void {
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
  markInterrupted(now: number): number {
    return this.db
      .prepare(
        "UPDATE spam_reports SET status = 'unknown', upstream = ?, next_attempt_at = NULL, updated_at = ? WHERE status = 'sending'",
      )
      .run("the bot stopped during the call", now).changes;
  }

  /** Reports waiting for a retry. */
  due(now: number, limit: number): SpamReport[] {
    return this.db
      .prepare<[number, number], ReportRow>(
        "SELECT * FROM spam_reports WHERE status = 'queued' AND next_attempt_at <= ? ORDER BY id LIMIT ?",
      )
      .all(now, limit)
      .map(toReport);
  }

  /** How many reports a person made since `since` (for the per-person limit). */
  countSince(platform: string, userId: string, since: number): number {
    return (
      this.db
        .prepare(
          "SELECT COUNT(*) AS n FROM spam_reports WHERE platform = ? AND user_id = ? AND created_at >= ?",
        )
        .get(platform, userId, since) as { n: number }
    ).n;
  }

  forChat(platform: string, chatId: string, limit = 10_000): SpamReport[] {
    return this.db
      .prepare<[string, string, number], ReportRow>(
        "SELECT * FROM spam_reports WHERE platform = ? AND chat_id = ? ORDER BY id DESC LIMIT ?",
      )
      .all(platform, chatId, limit)
      .map(toReport);
  }
}
