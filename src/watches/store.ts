import { type ExpressionBuilder, sql as raw } from "kysely";
import { type Sql, storeOver } from "../store/query.ts";
import { SqlChatPauseStore } from "../store/shared/chat-pause.ts";
import type { Tables } from "../store/tables.ts";
import { watchFromRow } from "./rows.ts";
import type { NewWatch, Watch, WatchStore } from "./types.ts";

/** A written row comes back with its chat's pause, as a read gives it (see selectAll). */
const withPause = (row: ExpressionBuilder<Tables, "watches">) => {
  const pause = row
    .selectFrom("chat_pauses as p")
    .whereRef("p.platform", "=", "watches.platform")
    .whereRef("p.chat_id", "=", "watches.chat_id");
  return [
    pause.select("p.paused_at").as("paused_at"),
    pause.select("p.pause_reason").as("pause_reason"),
  ];
};

/** Watches (see WatchStore). */
export class SqlWatchStore implements WatchStore {
  private readonly chatPauses: SqlChatPauseStore;

  constructor(private readonly sql: Sql) {
    this.chatPauses = new SqlChatPauseStore(sql);
  }

  /** Every watch with its chat's pause (the rows carry none of their own). */
  private selectAll() {
    return this.sql.q
      .selectFrom("watches as w")
      .leftJoin("chat_pauses as p", (join) =>
        join.onRef("p.platform", "=", "w.platform").onRef("p.chat_id", "=", "w.chat_id"),
      )
      .selectAll("w")
      .select(["p.paused_at", "p.pause_reason"]);
  }

  async add(
    watch: NewWatch,
    max: number,
  ): Promise<
    { kind: "added" | "updated"; watch: Watch } | { kind: "full"; count: number; max: number }
  > {
    const { q } = this.sql;
    const runner = this.sql;
    return this.sql.transaction(
      function* (tx) {
        // One adder per chat at a time: on PostgreSQL two instances adding at once cannot both
        // pass the cap (on SQLite the immediate transaction has the database to itself).
        if (tx.dialect === "postgres")
          yield* tx.run(
            runner.raw(
              raw`SELECT pg_advisory_xact_lock(hashtext(${`watches:${watch.platform}:${watch.chatId}`}))`,
            ),
          );
        const updated = yield* tx.first(
          q
            .updateTable("watches")
            .set({
              owners_percent: watch.ownersPercent,
              whales_points: watch.whalesPoints,
              label: watch.label,
            })
            .where("platform", "=", watch.platform)
            .where("chat_id", "=", watch.chatId)
            .where("chain", "=", watch.chain)
            .where("kind", "=", watch.kind)
            .where("target", "=", watch.target)
            .returningAll()
            .returning(withPause),
        );
        if (updated) return { kind: "updated" as const, watch: watchFromRow(updated) };
        const counted = yield* tx.first(
          q
            .selectFrom("watches")
            .select((row) => row.fn.countAll<number>().as("count"))
            .where("platform", "=", watch.platform)
            .where("chat_id", "=", watch.chatId),
        );
        const count = Number(counted?.count ?? 0);
        if (count >= max) return { kind: "full" as const, count, max };
        const inserted = yield* tx.first(
          q
            .insertInto("watches")
            .values({
              platform: watch.platform,
              chat_id: watch.chatId,
              chain: watch.chain,
              kind: watch.kind,
              target: watch.target,
              label: watch.label,
              owners_percent: watch.ownersPercent,
              whales_points: watch.whalesPoints,
              created_by: watch.createdBy,
              created_at: watch.createdAt,
            })
            .returningAll()
            .returning(withPause),
        );
        if (inserted === undefined) throw new Error("the watch was not inserted");
        return { kind: "added" as const, watch: watchFromRow(inserted) };
      },
      { immediate: true },
    );
  }

  async forChat(platform: string, chatId: string): Promise<Watch[]> {
    const rows = await this.sql.all(
      this.selectAll()
        .where("w.platform", "=", platform)
        .where("w.chat_id", "=", chatId)
        .orderBy("w.id"),
    );
    return rows.map(watchFromRow);
  }

  async remove(platform: string, chatId: string, id: number): Promise<boolean> {
    const { q } = this.sql;
    const removed = await this.sql.run(
      q
        .deleteFrom("watches")
        .where("platform", "=", platform)
        .where("chat_id", "=", chatId)
        .where("id", "=", id),
    );
    return removed > 0;
  }

  async all(chain?: string): Promise<Watch[]> {
    const query = this.selectAll();
    const rows = await this.sql.all(
      (chain === undefined ? query : query.where("w.chain", "=", chain)).orderBy("w.id"),
    );
    return rows.map(watchFromRow);
  }

  async advance(id: number, state: string, pending: string | null): Promise<void> {
    const { q } = this.sql;
    await this.sql.run(q.updateTable("watches").set({ state, pending }).where("id", "=", id));
  }

  async posted(id: number, pending: string): Promise<void> {
    const { q } = this.sql;
    await this.sql.run(
      q
        .updateTable("watches")
        .set({ pending: null })
        .where("id", "=", id)
        .where("pending", "=", pending),
    );
  }

  async moveChat(platform: string, fromChatId: string, toChatId: string): Promise<void> {
    const { q } = this.sql;
    await this.sql.transaction(
      function* (tx) {
        // A watch the new chat has already (same chain, kind and target) stays where it is...
        yield* tx.run(
          q
            .updateTable("watches as w")
            .set({ chat_id: toChatId })
            .where("w.platform", "=", platform)
            .where("w.chat_id", "=", fromChatId)
            .where((row) =>
              row.not(
                row.exists(
                  row
                    .selectFrom("watches as n")
                    .select("n.id")
                    .where("n.platform", "=", platform)
                    .where("n.chat_id", "=", toChatId)
                    .whereRef("n.chain", "=", "w.chain")
                    .whereRef("n.kind", "=", "w.kind")
                    .whereRef("n.target", "=", "w.target"),
                ),
              ),
            ),
        );
        // ...and goes: left when the new chat watches the same already.
        yield* tx.run(
          q
            .deleteFrom("watches")
            .where("platform", "=", platform)
            .where("chat_id", "=", fromChatId),
        );
      },
      { immediate: true },
    );
  }

  async pauseChat(platform: string, chatId: string, reason: string, now: number): Promise<void> {
    await this.chatPauses.pause(platform, chatId, reason, now);
  }
}

/**
 * The watches' store over the bot's store (its query layer), built once: the feature keeps its own
 * tables, written once for both databases; the rest of the bot reaches them only through it.
 */
export const watchStoreOf = storeOver((sql) => new SqlWatchStore(sql));
