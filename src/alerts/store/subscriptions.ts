import { sql as raw } from "kysely";
import type { Sql } from "../../store/query.ts";
import { chatNotPaused } from "../../store/rows-chat-pause.ts";
import { SqlChatPauseStore } from "../../store/shared/chat-pause.ts";
import { type AlertRules, serializeRules } from "../rules.ts";
import { toSubscription } from "./rows.ts";
import type { BadActorRule, Subscription, SubscriptionStore, SubscriptionTypes } from "./types.ts";

/** True for the subscriptions (alias `s`) whose chat is not paused. */
const NOT_PAUSED = chatNotPaused("s");

/**
 * Which channels get new-collection alerts of which chain, and which are paused (and why). A chat
 * has at most one subscription per chain.
 */
export class SqlSubscriptionStore implements SubscriptionStore {
  private readonly chatPauses: SqlChatPauseStore;

  constructor(private readonly sql: Sql) {
    this.chatPauses = new SqlChatPauseStore(sql);
  }

  /** Every subscription with its chat's pause (the rows carry none of their own). */
  private withPause() {
    return this.sql.q
      .selectFrom("subscriptions as s")
      .leftJoin("chat_pauses as p", (join) =>
        join.onRef("p.platform", "=", "s.platform").onRef("p.chat_id", "=", "s.chat_id"),
      )
      .selectAll("s")
      .select(["p.paused_at", "p.pause_reason"]);
  }

  /** The chat's subscriptions (to `chain` only, when given), oldest first. */
  private ofChat(platform: string, chatId: string, chain?: string) {
    return this.withPause()
      .where("s.platform", "=", platform)
      .where("s.chat_id", "=", chatId)
      .$if(chain !== undefined, (query) => query.where("s.chain", "=", chain as string))
      .orderBy("s.id");
  }

  /** Subscribes a chat to a chain (once: a second call updates the types and lifts any pause). */
  async upsert(input: {
    platform: string;
    chatId: string;
    chain: string;
    types: SubscriptionTypes;
    badActors?: BadActorRule | undefined;
    createdBy: string;
    now: number;
  }): Promise<{ subscription: Subscription; created: boolean }> {
    const { q } = this.sql;
    // Subscribing again is using the bot in the chat: its pause is lifted.
    const unpause = q
      .deleteFrom("chat_pauses")
      .where("platform", "=", input.platform)
      .where("chat_id", "=", input.chatId);
    if (this.sql.dialect === "postgres") {
      // One statement: two instances subscribing the same chat at once make one row (SQLite's
      // processes take turns at its write lock). xmax = 0 only for a row this statement inserted.
      await this.sql.run(unpause);
      const row = await this.sql.first(
        q
          .insertInto("subscriptions")
          .values({
            platform: input.platform,
            chat_id: input.chatId,
            types: input.types,
            created_by: input.createdBy,
            created_at: input.now,
            chain: input.chain,
            bad_actors: input.badActors ?? "hide",
          })
          .onConflict((conflict) =>
            conflict.columns(["platform", "chat_id", "chain"]).doUpdateSet((row) => ({
              types: row.ref("excluded.types"),
              bad_actors: row.fn.coalesce(
                row.val(input.badActors ?? null),
                row.ref("subscriptions.bad_actors"),
              ),
            })),
          )
          .returningAll()
          .returning(raw<boolean>`(xmax = 0)`.as("inserted")),
      );
      if (!row) throw new Error("the subscription row was not written");
      return { subscription: toSubscription(row), created: row.inserted };
    }
    // SQLite: read, then update or insert, in one transaction; the row is read back with its pause.
    const find = this.ofChat(input.platform, input.chatId, input.chain).limit(1);
    return this.sql.transaction(function* (tx) {
      yield* tx.run(unpause);
      const existing = yield* tx.first(find);
      if (existing) {
        yield* tx.run(
          q
            .updateTable("subscriptions")
            .set((row) => ({
              types: input.types,
              bad_actors: row.fn.coalesce(row.val(input.badActors ?? null), row.ref("bad_actors")),
            }))
            .where("id", "=", existing.id),
        );
      } else {
        yield* tx.run(
          q.insertInto("subscriptions").values({
            platform: input.platform,
            chat_id: input.chatId,
            chain: input.chain,
            types: input.types,
            bad_actors: input.badActors ?? "hide",
            created_by: input.createdBy,
            created_at: input.now,
          }),
        );
      }
      const row = yield* tx.first(find);
      if (!row) throw new Error("the subscription row was not written");
      return { subscription: toSubscription(row), created: !existing };
    });
  }

  async find(platform: string, chatId: string, chain?: string): Promise<Subscription | undefined> {
    const row = await this.sql.first(this.ofChat(platform, chatId, chain).limit(1));
    return row && toSubscription(row);
  }

  async forChat(platform: string, chatId: string): Promise<Subscription[]> {
    return (await this.sql.all(this.ofChat(platform, chatId))).map(toSubscription);
  }

  /** Removes the chat's subscription to `chain` (or all) and its undelivered alerts (they cascade). */
  async remove(platform: string, chatId: string, chain?: string): Promise<boolean> {
    const { q } = this.sql;
    const removed = await this.sql.run(
      q
        .deleteFrom("subscriptions")
        .where("platform", "=", platform)
        .where("chat_id", "=", chatId)
        .$if(chain !== undefined, (query) => query.where("chain", "=", chain as string)),
    );
    return removed > 0;
  }

  /**
   * A chat got a new id (a Telegram group upgraded to a supergroup): its subscriptions follow,
   * and with them the queued alerts (they hang off the subscription). Where the new chat already
   * has a subscription to the same chain, that one is kept and the old one's alerts join it,
   * dropping those it already has queued. One transaction (SQLite: immediate); the chat's other
   * rows move in their own (src/store/move-chat.ts).
   */
  async moveChat(platform: string, fromChatId: string, toChatId: string): Promise<void> {
    const { q } = this.sql;
    const ofChat = this.ofChat.bind(this);
    const sql = this.sql;
    return this.sql.transaction(
      function* (tx) {
        // PostgreSQL locks both chats' rows first (other instances may be at them); SQLite holds
        // its write lock throughout and looks the new chat's subscription up chain by chain.
        const pg = tx.dialect === "postgres";
        const froms = yield* tx.all(
          ofChat(platform, fromChatId).$if(pg, (query) => query.forUpdate("s")),
        );
        const tos = pg ? yield* tx.all(ofChat(platform, toChatId).forUpdate("s")) : undefined;
        for (const from of froms) {
          const to = tos
            ? tos.find((kept) => kept.chain === from.chain)
            : yield* tx.first(ofChat(platform, toChatId, from.chain).limit(1));
          if (!to) {
            yield* tx.run(
              q.updateTable("subscriptions").set({ chat_id: toChatId }).where("id", "=", from.id),
            );
            continue;
          }
          // The old one's alerts join the kept one, except those it already has queued: SQLite
          // skips the rows the unique key refuses, PostgreSQL (which has no UPDATE OR IGNORE)
          // leaves out those whose contract the kept one has.
          yield* tx.run(
            pg
              ? q
                  .updateTable("outbox as o")
                  .set({ subscription_id: to.id })
                  .where("o.subscription_id", "=", from.id)
                  .where((row) =>
                    row.not(
                      row.exists(
                        row
                          .selectFrom("outbox as k")
                          .select("k.id")
                          .where("k.subscription_id", "=", to.id)
                          .whereRef("k.contract", "=", "o.contract"),
                      ),
                    ),
                  )
              : sql.raw(
                  raw`UPDATE OR IGNORE outbox SET subscription_id = ${to.id} WHERE subscription_id = ${from.id}`,
                ),
          );
          // What is left is what the kept subscription already had queued.
          yield* tx.run(q.deleteFrom("outbox").where("subscription_id", "=", from.id));
          yield* tx.run(q.deleteFrom("subscriptions").where("id", "=", from.id));
        }
      },
      { immediate: true },
    );
  }

  async pause(id: number, reason: string, now: number): Promise<void> {
    await this.chatPauses.pauseSubscriptionChat(id, reason, now);
  }

  async setRules(id: number, rules: AlertRules): Promise<void> {
    const { q } = this.sql;
    await this.sql.run(
      q
        .updateTable("subscriptions")
        .set({ rules: serializeRules(rules) })
        .where("id", "=", id),
    );
  }

  async active(): Promise<Subscription[]> {
    const { q } = this.sql;
    const rows = await this.sql.all(
      q.selectFrom("subscriptions as s").selectAll("s").where(NOT_PAUSED).orderBy("s.id"),
    );
    return rows.map(toSubscription);
  }

  async all(): Promise<Subscription[]> {
    return (await this.sql.all(this.withPause().orderBy("s.id"))).map(toSubscription);
  }
}
