import { type AlertRules, serializeRules } from "../../alerts/rules.ts";
import { type SubscriptionRow, toSubscription } from "../rows.ts";
import { chatNotPaused, chatPauseJoin, PAUSE_COLUMNS } from "../rows-chat-pause.ts";
import { SqlChatPauseStore } from "../shared/chat-pause.ts";
import type { BadActorRule, Subscription, SubscriptionStore, SubscriptionTypes } from "../types.ts";
import type { Db } from "./db.ts";
import { sqliteSql } from "./query.ts";

/** Every subscription with its chat's pause (the rows carry none of their own). */
const ALL = `${PAUSE_COLUMNS} FROM subscriptions s ${chatPauseJoin("s")}`;

/**
 * Which channels get new-collection alerts of which chain, and which are paused (and why). A chat
 * has at most one subscription per chain.
 */
export class SqliteSubscriptionStore implements SubscriptionStore {
  private readonly chatPauses: SqlChatPauseStore;

  constructor(private readonly db: Db) {
    this.chatPauses = new SqlChatPauseStore(sqliteSql(db));
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
    return this.db.transaction(() => {
      // Subscribing again is using the bot in the chat: its pause is lifted.
      this.db
        .prepare("DELETE FROM chat_pauses WHERE platform = ? AND chat_id = ?")
        .run(input.platform, input.chatId);
      const existing = this.findNow(input.platform, input.chatId, input.chain);
      if (existing) {
        this.db
          .prepare(
            "UPDATE subscriptions SET types = ?, bad_actors = COALESCE(?, bad_actors) WHERE id = ?",
          )
          .run(input.types, input.badActors ?? null, existing.id);
        return {
          subscription: this.findNow(input.platform, input.chatId, input.chain) as Subscription,
          created: false,
        };
      }
      this.db
        .prepare(
          "INSERT INTO subscriptions (platform, chat_id, chain, types, bad_actors, created_by, created_at) VALUES (?, ?, ?, ?, ?, ?, ?)",
        )
        .run(
          input.platform,
          input.chatId,
          input.chain,
          input.types,
          input.badActors ?? "hide",
          input.createdBy,
          input.now,
        );
      return {
        subscription: this.findNow(input.platform, input.chatId, input.chain) as Subscription,
        created: true,
      };
    })();
  }

  async find(platform: string, chatId: string, chain?: string): Promise<Subscription | undefined> {
    return this.findNow(platform, chatId, chain);
  }

  async forChat(platform: string, chatId: string): Promise<Subscription[]> {
    return this.forChatNow(platform, chatId);
  }

  private forChatNow(platform: string, chatId: string): Subscription[] {
    return this.db
      .prepare<[string, string], SubscriptionRow>(
        `SELECT s.*, ${ALL} WHERE s.platform = ? AND s.chat_id = ? ORDER BY s.id`,
      )
      .all(platform, chatId)
      .map(toSubscription);
  }

  private findNow(platform: string, chatId: string, chain?: string): Subscription | undefined {
    const row = this.db
      .prepare<[string, string, string | null, string | null], SubscriptionRow>(
        `SELECT s.*, ${ALL} WHERE s.platform = ? AND s.chat_id = ? AND (? IS NULL OR s.chain = ?) ORDER BY s.id LIMIT 1`,
      )
      .get(platform, chatId, chain ?? null, chain ?? null);
    return row ? toSubscription(row) : undefined;
  }

  /** Removes the chat's subscription to `chain` (or all) and its undelivered alerts. */
  async remove(platform: string, chatId: string, chain?: string): Promise<boolean> {
    return (
      this.db
        .prepare(
          "DELETE FROM subscriptions WHERE platform = ? AND chat_id = ? AND (? IS NULL OR chain = ?)",
        )
        .run(platform, chatId, chain ?? null, chain ?? null).changes > 0
    );
  }

  /**
   * A chat got a new id (a Telegram group upgraded to a supergroup): its subscriptions follow,
   * and with them the queued alerts (they hang off the subscription), its buttons and its report
   * history. Where the new chat already has a subscription to the same chain, that one is kept
   * and the old one's alerts join it, dropping those it already has queued. Returns the new
   * chat's oldest subscription, if any.
   */
  async moveChat(
    platform: string,
    fromChatId: string,
    toChatId: string,
  ): Promise<Subscription | undefined> {
    return this.db
      .transaction(() => {
        for (const from of this.forChatNow(platform, fromChatId)) {
          const to = this.findNow(platform, toChatId, from.chain);
          if (!to) {
            this.db
              .prepare("UPDATE subscriptions SET chat_id = ? WHERE id = ?")
              .run(toChatId, from.id);
            continue;
          }
          this.db
            .prepare("UPDATE OR IGNORE outbox SET subscription_id = ? WHERE subscription_id = ?")
            .run(to.id, from.id);
          // What is left is what the kept subscription already had queued.
          this.db.prepare("DELETE FROM outbox WHERE subscription_id = ?").run(from.id);
          this.db.prepare("DELETE FROM subscriptions WHERE id = ?").run(from.id);
        }
        for (const table of ["button_actions", "spam_reports", "digests"]) {
          this.db
            .prepare(`UPDATE ${table} SET chat_id = ? WHERE platform = ? AND chat_id = ?`)
            .run(toChatId, platform, fromChatId);
        }
        return this.findNow(platform, toChatId);
      })
      .immediate();
  }

  async pause(id: number, reason: string, now: number): Promise<void> {
    await this.chatPauses.pauseSubscriptionChat(id, reason, now);
  }

  async setRules(id: number, rules: AlertRules): Promise<void> {
    this.db
      .prepare("UPDATE subscriptions SET rules = ? WHERE id = ?")
      .run(serializeRules(rules), id);
  }

  async active(): Promise<Subscription[]> {
    return this.db
      .prepare<[], SubscriptionRow>(
        `SELECT s.*, NULL AS paused_at, NULL AS pause_reason FROM subscriptions s
          WHERE ${chatNotPaused("s")} ORDER BY s.id`,
      )
      .all()
      .map(toSubscription);
  }

  async all(): Promise<Subscription[]> {
    return this.db
      .prepare<[], SubscriptionRow>(`SELECT s.*, ${ALL} ORDER BY s.id`)
      .all()
      .map(toSubscription);
  }
}
