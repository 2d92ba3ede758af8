import { type AlertRules, serializeRules } from "../../alerts/rules.ts";
import { type SubscriptionRow, toSubscription } from "../rows.ts";
import { chatNotPaused, chatPauseJoin, PAUSE_COLUMNS } from "../rows-chat-pause.ts";
import { SqlChatPauseStore } from "../shared/chat-pause.ts";
import type { BadActorRule, Subscription, SubscriptionStore, SubscriptionTypes } from "../types.ts";
import type { PgDb, Queryable } from "./db.ts";
import { postgresSql } from "./query.ts";

/** Every subscription with its chat's pause (the rows carry none of their own). */
const ALL = `${PAUSE_COLUMNS} FROM subscriptions s ${chatPauseJoin("s")}`;

/** The chat's subscriptions (to `chain` only, when given), oldest first. */
async function findIn(
  q: Queryable,
  platform: string,
  chatId: string,
  chain: string | undefined,
  lock = false,
): Promise<Subscription[]> {
  const { rows } = await q.query<SubscriptionRow>(
    `SELECT s.*, ${ALL} WHERE s.platform = $1 AND s.chat_id = $2
       AND ($3::text IS NULL OR s.chain = $3) ORDER BY s.id${lock ? " FOR UPDATE OF s" : ""}`,
    [platform, chatId, chain ?? null],
  );
  return rows.map(toSubscription);
}

/**
 * Which channels get new-collection alerts of which chain, and which are paused (and why). A chat
 * has at most one subscription per chain.
 */
export class PgSubscriptionStore implements SubscriptionStore {
  constructor(private readonly db: PgDb) {}

  /** One statement: two instances subscribing the same chat at once make one row. */
  async upsert(input: {
    platform: string;
    chatId: string;
    chain: string;
    types: SubscriptionTypes;
    badActors?: BadActorRule | undefined;
    createdBy: string;
    now: number;
  }): Promise<{ subscription: Subscription; created: boolean }> {
    // Subscribing again is using the bot in the chat: its pause is lifted.
    await this.db.query("DELETE FROM chat_pauses WHERE platform = $1 AND chat_id = $2", [
      input.platform,
      input.chatId,
    ]);
    // xmax = 0 only for a row this statement inserted.
    const { rows } = await this.db.query<SubscriptionRow & { inserted: boolean }>(
      `INSERT INTO subscriptions (platform, chat_id, types, created_by, created_at, chain, bad_actors)
       VALUES ($1, $2, $3, $4, $5, $6, COALESCE($7, 'hide'))
       ON CONFLICT (platform, chat_id, chain) DO UPDATE
         SET types = excluded.types, bad_actors = COALESCE($7, subscriptions.bad_actors)
       RETURNING *, (xmax = 0) AS inserted`,
      [
        input.platform,
        input.chatId,
        input.types,
        input.createdBy,
        input.now,
        input.chain,
        input.badActors ?? null,
      ],
    );
    const row = rows[0];
    if (!row) throw new Error("the subscription row was not written");
    return { subscription: toSubscription(row), created: row.inserted };
  }

  async find(platform: string, chatId: string, chain?: string): Promise<Subscription | undefined> {
    return (await findIn(this.db, platform, chatId, chain))[0];
  }

  async forChat(platform: string, chatId: string): Promise<Subscription[]> {
    return findIn(this.db, platform, chatId, undefined);
  }

  /** Removes the chat's subscription to `chain` (or all) and its undelivered alerts (they cascade). */
  async remove(platform: string, chatId: string, chain?: string): Promise<boolean> {
    const result = await this.db.query(
      "DELETE FROM subscriptions WHERE platform = $1 AND chat_id = $2 AND ($3::text IS NULL OR chain = $3)",
      [platform, chatId, chain ?? null],
    );
    return (result.rowCount ?? 0) > 0;
  }

  /** See SubscriptionStore.moveChat: one transaction, both chats' rows locked. */
  async moveChat(
    platform: string,
    fromChatId: string,
    toChatId: string,
  ): Promise<Subscription | undefined> {
    return this.db.tx(async (client) => {
      const froms = await findIn(client, platform, fromChatId, undefined, true);
      const tos = await findIn(client, platform, toChatId, undefined, true);
      for (const from of froms) {
        const to = tos.find((kept) => kept.chain === from.chain);
        if (!to) {
          await client.query("UPDATE subscriptions SET chat_id = $1 WHERE id = $2", [
            toChatId,
            from.id,
          ]);
          continue;
        }
        // The old one's alerts join the kept one, except those it already has queued.
        await client.query(
          `UPDATE outbox o SET subscription_id = $1 WHERE subscription_id = $2
             AND NOT EXISTS (SELECT 1 FROM outbox k WHERE k.subscription_id = $1 AND k.contract = o.contract)`,
          [to.id, from.id],
        );
        await client.query("DELETE FROM outbox WHERE subscription_id = $1", [from.id]);
        await client.query("DELETE FROM subscriptions WHERE id = $1", [from.id]);
      }
      for (const table of ["button_actions", "spam_reports", "digests"]) {
        await client.query(
          `UPDATE ${table} SET chat_id = $1 WHERE platform = $2 AND chat_id = $3`,
          [toChatId, platform, fromChatId],
        );
      }
      return (await findIn(client, platform, toChatId, undefined))[0];
    });
  }

  async pause(id: number, reason: string, now: number): Promise<void> {
    await new SqlChatPauseStore(postgresSql(this.db)).pauseSubscriptionChat(id, reason, now);
  }

  async setRules(id: number, rules: AlertRules): Promise<void> {
    await this.db.query("UPDATE subscriptions SET rules = $1 WHERE id = $2", [
      serializeRules(rules),
      id,
    ]);
  }

  async active(): Promise<Subscription[]> {
    const { rows } = await this.db.query<SubscriptionRow>(
      `SELECT s.*, NULL AS paused_at, NULL AS pause_reason FROM subscriptions s
        WHERE ${chatNotPaused("s")} ORDER BY s.id`,
    );
    return rows.map(toSubscription);
  }

  async all(): Promise<Subscription[]> {
    const { rows } = await this.db.query<SubscriptionRow>(`SELECT s.*, ${ALL} ORDER BY s.id`);
    return rows.map(toSubscription);
  }
}
