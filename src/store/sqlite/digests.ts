import { type DigestRow, type DigestRunRow, toDigest, toDigestRun } from "../rows.ts";
import { chatPauseJoin, PAUSE_COLUMNS } from "../rows-chat-pause.ts";
import { SqlChatPauseStore } from "../shared/chat-pause.ts";
import type { Digest, DigestRun, DigestStore, NewDigest } from "../types.ts";
import type { Db } from "./db.ts";
import { sqliteSql } from "./query.ts";

/** Every digest with its chat's pause (the rows carry none of their own). */
const ALL = `${PAUSE_COLUMNS} FROM digests d ${chatPauseJoin("d")}`;

/** Channels' scheduled digests and each slot's run (see DigestStore). */
export class SqliteDigestStore implements DigestStore {
  private readonly chatPauses: SqlChatPauseStore;

  constructor(private readonly db: Db) {
    this.chatPauses = new SqlChatPauseStore(sqliteSql(db));
  }

  async add(digest: NewDigest, cap: number): Promise<Digest | "full"> {
    const count = this.db.prepare<[string, string], { n: number }>(
      "SELECT COUNT(*) AS n FROM digests WHERE platform = ? AND chat_id = ?",
    );
    const insert = this.db.prepare<unknown[], DigestRow>(
      `INSERT INTO digests (platform, chat_id, chain, cadence, weekday, time, zone, metric, period,
                            created_by, created_at)
       VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?) RETURNING *`,
    );
    return this.db
      .transaction((): Digest | "full" => {
        if ((count.get(digest.platform, digest.chatId)?.n ?? 0) >= cap) return "full";
        const row = insert.get(
          digest.platform,
          digest.chatId,
          digest.chain,
          digest.cadence,
          digest.weekday,
          digest.time,
          digest.zone,
          digest.metric,
          digest.period,
          digest.createdBy,
          digest.createdAt,
        ) as DigestRow;
        return toDigest(row);
      })
      .immediate();
  }

  async forChat(platform: string, chatId: string): Promise<Digest[]> {
    return this.db
      .prepare<[string, string], DigestRow>(
        `SELECT d.*, ${ALL} WHERE d.platform = ? AND d.chat_id = ? ORDER BY d.id`,
      )
      .all(platform, chatId)
      .map(toDigest);
  }

  async remove(platform: string, chatId: string, id: number): Promise<boolean> {
    return (
      this.db
        .prepare("DELETE FROM digests WHERE platform = ? AND chat_id = ? AND id = ?")
        .run(platform, chatId, id).changes > 0
    );
  }

  async all(): Promise<Digest[]> {
    return this.db.prepare<[], DigestRow>(`SELECT d.*, ${ALL} ORDER BY d.id`).all().map(toDigest);
  }

  async claimRun(input: {
    digestId: number;
    slot: number;
    holder: string;
    now: number;
    claimMs: number;
  }): Promise<DigestRun | undefined> {
    // One statement: a new run, or a 'sending' run whose claim (or wait) is over; never a run
    // another holds, nor a finished one. WHERE EXISTS: a digest removed meanwhile gets no run.
    const row = this.db
      .prepare<unknown[], DigestRunRow>(
        `INSERT INTO digest_runs (digest_id, slot, status, attempts, claimed_by, claimed_until)
         SELECT ?, ?, 'sending', 0, ?, ? WHERE EXISTS (SELECT 1 FROM digests WHERE id = ?)
         ON CONFLICT (digest_id, slot) DO UPDATE
           SET claimed_by = excluded.claimed_by, claimed_until = excluded.claimed_until
           WHERE digest_runs.status = 'sending'
             AND (digest_runs.claimed_until IS NULL OR digest_runs.claimed_until <= ?)
         RETURNING *`,
      )
      .get(
        input.digestId,
        input.slot,
        input.holder,
        input.now + input.claimMs,
        input.digestId,
        input.now,
      );
    return row ? toDigestRun(row) : undefined;
  }

  async finishRun(
    digestId: number,
    slot: number,
    status: "sent" | "failed",
    now: number,
    error?: string,
  ): Promise<void> {
    this.db
      .prepare(
        `UPDATE digest_runs SET status = ?, finished_at = ?, claimed_by = NULL, claimed_until = NULL,
                last_error = COALESCE(?, last_error)
          WHERE digest_id = ? AND slot = ?`,
      )
      .run(status, now, error?.slice(0, 500) ?? null, digestId, slot);
  }

  async retryRun(
    digestId: number,
    slot: number,
    dueAt: number,
    error: string,
    countAttempt: boolean,
  ): Promise<void> {
    this.db
      .prepare(
        `UPDATE digest_runs SET claimed_by = NULL, claimed_until = ?, last_error = ?,
                attempts = attempts + ?
          WHERE digest_id = ? AND slot = ? AND status = 'sending'`,
      )
      .run(dueAt, error.slice(0, 500), countAttempt ? 1 : 0, digestId, slot);
  }

  async runs(digestId: number): Promise<DigestRun[]> {
    return this.db
      .prepare<[number], DigestRunRow>(
        "SELECT * FROM digest_runs WHERE digest_id = ? ORDER BY slot DESC",
      )
      .all(digestId)
      .map(toDigestRun);
  }

  async pauseChat(platform: string, chatId: string, reason: string, now: number): Promise<void> {
    await this.chatPauses.pause(platform, chatId, reason, now);
  }
}
