import { sql as raw } from "kysely";
import { type Sql, storeOver } from "../store/query.ts";
import { SqlChatPauseStore } from "../store/shared/chat-pause.ts";
import { toDigest, toDigestRun } from "./rows.ts";
import type { Digest, DigestRun, DigestStore, NewDigest } from "./types.ts";

/** How long a stored error may be. */
const ERROR_MAX = 500;

/** Channels' scheduled digests and each slot's run, shared by every instance (see DigestStore). */
export class SqlDigestStore implements DigestStore {
  private readonly chatPauses: SqlChatPauseStore;

  constructor(private readonly sql: Sql) {
    this.chatPauses = new SqlChatPauseStore(sql);
  }

  /** Every digest with its chat's pause (the rows carry none of their own). */
  private selectAll() {
    return this.sql.q
      .selectFrom("digests as d")
      .leftJoin("chat_pauses as p", (join) =>
        join.onRef("p.platform", "=", "d.platform").onRef("p.chat_id", "=", "d.chat_id"),
      )
      .selectAll("d")
      .select(["p.paused_at", "p.pause_reason"]);
  }

  async add(digest: NewDigest, cap: number): Promise<Digest | "full"> {
    const { q } = this.sql;
    const runner = this.sql;
    return this.sql.transaction(
      function* (tx) {
        // Two managers adding at once must not both pass the count: the chat's adds take turns
        // (on PostgreSQL by a lock; on SQLite the immediate transaction has the database).
        if (tx.dialect === "postgres")
          yield* tx.run(
            runner.raw(
              raw`SELECT pg_advisory_xact_lock(hashtext(${`digests:${digest.platform}:${digest.chatId}`}))`,
            ),
          );
        const counted = yield* tx.first(
          q
            .selectFrom("digests")
            .select((row) => row.fn.countAll<number>().as("n"))
            .where("platform", "=", digest.platform)
            .where("chat_id", "=", digest.chatId),
        );
        if (Number(counted?.n ?? 0) >= cap) return "full" as const;
        const inserted = yield* tx.first(
          q
            .insertInto("digests")
            .values({
              platform: digest.platform,
              chat_id: digest.chatId,
              chain: digest.chain,
              cadence: digest.cadence,
              weekday: digest.weekday,
              time: digest.time,
              zone: digest.zone,
              metric: digest.metric,
              period: digest.period,
              created_by: digest.createdBy,
              created_at: digest.createdAt,
            })
            .returningAll(),
        );
        if (inserted === undefined) throw new Error("the digest was not inserted");
        return toDigest(inserted);
      },
      { immediate: true },
    );
  }

  async forChat(platform: string, chatId: string): Promise<Digest[]> {
    const rows = await this.sql.all(
      this.selectAll()
        .where("d.platform", "=", platform)
        .where("d.chat_id", "=", chatId)
        .orderBy("d.id"),
    );
    return rows.map(toDigest);
  }

  async remove(platform: string, chatId: string, id: number): Promise<boolean> {
    const { q } = this.sql;
    const removed = await this.sql.run(
      q
        .deleteFrom("digests")
        .where("platform", "=", platform)
        .where("chat_id", "=", chatId)
        .where("id", "=", id),
    );
    return removed > 0;
  }

  async all(): Promise<Digest[]> {
    const rows = await this.sql.all(this.selectAll().orderBy("d.id"));
    return rows.map(toDigest);
  }

  async claimRun(input: {
    digestId: number;
    slot: number;
    holder: string;
    now: number;
    claimMs: number;
  }): Promise<DigestRun | undefined> {
    const { q } = this.sql;
    const clock = this.sql.clock(input.now);
    // One statement: a new run, or a 'sending' run whose claim (or wait) is over; never a run
    // another holds, nor a finished one. WHERE EXISTS: a digest removed meanwhile gets no run.
    // Two instances at once both reach the conflict, and the row lock makes the second re-check
    // the WHERE against the first's claim, so it gets none. A live claim (claimed_by set) ends on
    // the clock instances agree on (the database's on PostgreSQL), so instances whose clocks
    // disagree never take each other's; a failed try's wait (claimed_by NULL, see retryRun) is a
    // due time on the instances' clocks, like an alert's due_at.
    const row = await this.sql.first(
      q
        .insertInto("digest_runs")
        .columns(["digest_id", "slot", "status", "attempts", "claimed_by", "claimed_until"])
        .expression(
          q
            .selectNoFrom((row) => [
              row.val(input.digestId).as("digest_id"),
              row.val(input.slot).as("slot"),
              row.val("sending").as("status"),
              row.lit(0).as("attempts"),
              row.val(input.holder).as("claimed_by"),
              raw<number>`${clock} + ${Math.round(input.claimMs)}`.as("claimed_until"),
            ])
            .where((row) =>
              row.exists(
                row.selectFrom("digests").select(raw`1`.as("one")).where("id", "=", input.digestId),
              ),
            ),
        )
        .onConflict((conflict) =>
          conflict
            .columns(["digest_id", "slot"])
            .doUpdateSet((row) => ({
              claimed_by: row.ref("excluded.claimed_by"),
              claimed_until: row.ref("excluded.claimed_until"),
            }))
            .where((row) =>
              row.and([
                row("digest_runs.status", "=", "sending"),
                row.or([
                  row("digest_runs.claimed_until", "is", null),
                  row.and([
                    row("digest_runs.claimed_by", "is", null),
                    row("digest_runs.claimed_until", "<=", input.now),
                  ]),
                  row.and([
                    row("digest_runs.claimed_by", "is not", null),
                    row("digest_runs.claimed_until", "<=", clock),
                  ]),
                ]),
              ]),
            ),
        )
        .returningAll(),
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
    const { q } = this.sql;
    await this.sql.run(
      q
        .updateTable("digest_runs")
        .set((row) => ({
          status,
          finished_at: now,
          claimed_by: null,
          claimed_until: null,
          last_error: row.fn.coalesce(
            row.val(error?.slice(0, ERROR_MAX) ?? null),
            row.ref("last_error"),
          ),
        }))
        .where("digest_id", "=", digestId)
        .where("slot", "=", slot),
    );
  }

  async retryRun(
    digestId: number,
    slot: number,
    dueAt: number,
    error: string,
    countAttempt: boolean,
  ): Promise<void> {
    const { q } = this.sql;
    await this.sql.run(
      q
        .updateTable("digest_runs")
        .set((row) => ({
          claimed_by: null,
          claimed_until: dueAt,
          last_error: error.slice(0, ERROR_MAX),
          attempts: row("attempts", "+", countAttempt ? 1 : 0),
        }))
        .where("digest_id", "=", digestId)
        .where("slot", "=", slot)
        .where("status", "=", "sending"),
    );
  }

  async runs(digestId: number): Promise<DigestRun[]> {
    const { q } = this.sql;
    const rows = await this.sql.all(
      q
        .selectFrom("digest_runs")
        .selectAll()
        .where("digest_id", "=", digestId)
        .orderBy("slot", "desc"),
    );
    return rows.map(toDigestRun);
  }

  async moveChat(platform: string, fromChatId: string, toChatId: string): Promise<void> {
    const { q } = this.sql;
    await this.sql.run(
      q
        .updateTable("digests")
        .set({ chat_id: toChatId })
        .where("platform", "=", platform)
        .where("chat_id", "=", fromChatId),
    );
  }

  async pauseChat(platform: string, chatId: string, reason: string, now: number): Promise<void> {
    await this.chatPauses.pause(platform, chatId, reason, now);
  }
}

/**
 * The digests' store over the bot's store (its query layer), built once: the feature keeps its own
 * tables, written once for both databases; the rest of the bot reaches them only through it.
 */
export const digestStoreOf = storeOver((sql) => new SqlDigestStore(sql));
