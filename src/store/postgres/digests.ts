import { type DigestRow, type DigestRunRow, toDigest, toDigestRun } from "../rows.ts";
import { chatPauseJoin, PAUSE_COLUMNS } from "../rows-chat-pause.ts";
import { SqlChatPauseStore } from "../shared/chat-pause.ts";
import type { Digest, DigestRun, DigestStore, NewDigest } from "../types.ts";
import { DB_NOW_MS, type PgDb } from "./db.ts";
import { postgresSql } from "./query.ts";

/** Every digest with its chat's pause (the rows carry none of their own). */
const ALL = `${PAUSE_COLUMNS} FROM digests d ${chatPauseJoin("d")}`;

/** Channels' scheduled digests and each slot's run, shared by every instance (see DigestStore). */
export class PgDigestStore implements DigestStore {
  constructor(private readonly db: PgDb) {}

  async add(digest: NewDigest, cap: number): Promise<Digest | "full"> {
    return this.db.tx(async (client) => {
      // Two managers adding at once must not both pass the count: the chat's adds take turns.
      await client.query("SELECT pg_advisory_xact_lock(hashtext($1))", [
        `digests:${digest.platform}:${digest.chatId}`,
      ]);
      const { rows } = await client.query<{ n: number }>(
        "SELECT COUNT(*)::int AS n FROM digests WHERE platform = $1 AND chat_id = $2",
        [digest.platform, digest.chatId],
      );
      if ((rows[0]?.n ?? 0) >= cap) return "full";
      const inserted = await client.query<DigestRow>(
        `INSERT INTO digests (platform, chat_id, chain, cadence, weekday, time, zone, metric, period,
                              created_by, created_at)
         VALUES ($1, $2, $3, $4, $5, $6, $7, $8, $9, $10, $11) RETURNING *`,
        [
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
        ],
      );
      return toDigest(inserted.rows[0] as DigestRow);
    });
  }

  async forChat(platform: string, chatId: string): Promise<Digest[]> {
    const { rows } = await this.db.query<DigestRow>(
      `SELECT d.*, ${ALL} WHERE d.platform = $1 AND d.chat_id = $2 ORDER BY d.id`,
      [platform, chatId],
    );
    return rows.map(toDigest);
  }

  async remove(platform: string, chatId: string, id: number): Promise<boolean> {
    const result = await this.db.query(
      "DELETE FROM digests WHERE platform = $1 AND chat_id = $2 AND id = $3",
      [platform, chatId, id],
    );
    return (result.rowCount ?? 0) > 0;
  }

  async all(): Promise<Digest[]> {
    const { rows } = await this.db.query<DigestRow>(`SELECT d.*, ${ALL} ORDER BY d.id`);
    return rows.map(toDigest);
  }

  async claimRun(input: {
    digestId: number;
    slot: number;
    holder: string;
    now: number;
    claimMs: number;
  }): Promise<DigestRun | undefined> {
    // One statement (see the SQLite store): two instances at once both reach the conflict, and
    // the row lock makes the second re-check the WHERE against the first's claim, so it gets none.
    // A live claim (claimed_by set) ends on the DATABASE's clock, so instances whose clocks
    // disagree never take each other's; a failed try's wait (claimed_by NULL, see retryRun) is a
    // due time on the instances' clocks, like an alert's due_at.
    const { rows } = await this.db.query<DigestRunRow>(
      `INSERT INTO digest_runs (digest_id, slot, status, attempts, claimed_by, claimed_until)
       SELECT $1, $2, 'sending', 0, $3, ${DB_NOW_MS} + $4
        WHERE EXISTS (SELECT 1 FROM digests WHERE id = $1)
       ON CONFLICT (digest_id, slot) DO UPDATE
         SET claimed_by = excluded.claimed_by, claimed_until = excluded.claimed_until
         WHERE digest_runs.status = 'sending'
           AND (digest_runs.claimed_until IS NULL
             OR (digest_runs.claimed_by IS NULL AND digest_runs.claimed_until <= $5)
             OR (digest_runs.claimed_by IS NOT NULL AND digest_runs.claimed_until <= ${DB_NOW_MS}))
       RETURNING *`,
      [input.digestId, input.slot, input.holder, Math.round(input.claimMs), input.now],
    );
    return rows[0] ? toDigestRun(rows[0]) : undefined;
  }

  async finishRun(
    digestId: number,
    slot: number,
    status: "sent" | "failed",
    now: number,
    error?: string,
  ): Promise<void> {
    await this.db.query(
      `UPDATE digest_runs SET status = $1, finished_at = $2, claimed_by = NULL, claimed_until = NULL,
              last_error = COALESCE($3, last_error)
        WHERE digest_id = $4 AND slot = $5`,
      [status, now, error?.slice(0, 500) ?? null, digestId, slot],
    );
  }

  async retryRun(
    digestId: number,
    slot: number,
    dueAt: number,
    error: string,
    countAttempt: boolean,
  ): Promise<void> {
    await this.db.query(
      `UPDATE digest_runs SET claimed_by = NULL, claimed_until = $1, last_error = $2,
              attempts = attempts + $3
        WHERE digest_id = $4 AND slot = $5 AND status = 'sending'`,
      [dueAt, error.slice(0, 500), countAttempt ? 1 : 0, digestId, slot],
    );
  }

  async runs(digestId: number): Promise<DigestRun[]> {
    const { rows } = await this.db.query<DigestRunRow>(
      "SELECT * FROM digest_runs WHERE digest_id = $1 ORDER BY slot DESC",
      [digestId],
    );
    return rows.map(toDigestRun);
  }

  async pauseChat(platform: string, chatId: string, reason: string, now: number): Promise<void> {
    await new SqlChatPauseStore(postgresSql(this.db)).pause(platform, chatId, reason, now);
  }
}
