import {
  type ActionStore,
  DEFAULT_MAX_ACTIONS_PER_USER,
  type NewAction,
  newActionIds,
  type StoredAction,
} from "../core/actions.ts";
import type { ButtonAction } from "../core/reply.ts";
import type { Db } from "./db.ts";

/** Button actions in SQLite: buttons under old messages keep working after a restart. */
export class SqliteActionStore implements ActionStore {
  private readonly insert;
  private readonly trim;
  private readonly select;
  private readonly deleteExpired;
  /** One transaction for the buttons of several replies. */
  private readonly putAll;
  /** Replies whose buttons wait for the next commit, with their callers. */
  private waiting: {
    actions: readonly NewAction[];
    resolve: (ids: string[]) => void;
    reject: (error: unknown) => void;
  }[] = [];

  constructor(
    db: Db,
    private readonly maxPerUser = DEFAULT_MAX_ACTIONS_PER_USER,
  ) {
    this.insert = db.prepare(
      "INSERT INTO button_actions (id, platform, chat_id, user_id, action, expires_at) VALUES (?, ?, ?, ?, ?, ?)",
    );
    // The owner's actions past the newest maxPerUser, in insertion (rowid) order.
    this.trim = db.prepare(
      `DELETE FROM button_actions WHERE rowid IN (
         SELECT rowid FROM button_actions WHERE platform = ? AND user_id = ?
          ORDER BY rowid DESC LIMIT -1 OFFSET ?)`,
    );
    this.select = db.prepare<
      [string],
      {
        id: string;
        platform: string;
        chat_id: string;
        user_id: string;
        action: string;
        expires_at: number;
      }
    >("SELECT id, platform, chat_id, user_id, action, expires_at FROM button_actions WHERE id = ?");
    this.deleteExpired = db.prepare("DELETE FROM button_actions WHERE expires_at <= ?");
    this.putAll = db.transaction((replies: readonly (readonly NewAction[])[]) => {
      const all = replies.flat();
      const ids = newActionIds(all.length);
      for (const [i, action] of all.entries()) {
        this.insert.run(
          ids[i],
          action.platform,
          action.chatId,
          action.userId,
          JSON.stringify(action.action),
          action.expiresAt,
        );
      }
      const owners = new Map(all.map((a) => [`${a.platform}\u0000${a.userId}`, a]));
      for (const action of owners.values())
        this.trim.run(action.platform, action.userId, this.maxPerUser);
      let at = 0;
      return replies.map((actions) => {
        const start = at;
        at += actions.length;
        return ids.slice(start, at);
      });
    });
  }

  /**
   * The replies ready in the same turn of the event loop share one commit (a commit costs more
   * than a command's own work); each still gets all its buttons or none.
   */
  async putMany(actions: readonly NewAction[]): Promise<string[]> {
    return new Promise((resolve, reject) => {
      this.waiting.push({ actions, resolve, reject });
      if (this.waiting.length === 1) setImmediate(() => this.commitWaiting());
    });
  }

  private commitWaiting(): void {
    const batch = this.waiting;
    this.waiting = [];
    try {
      const ids = this.putAll(batch.map((reply) => reply.actions));
      for (const [i, reply] of batch.entries()) reply.resolve(ids[i] ?? []);
    } catch {
      // Each alone, so that each caller learns its own outcome.
      for (const reply of batch) {
        try {
          reply.resolve(this.putAll([reply.actions])[0] ?? []);
        } catch (error) {
          reply.reject(error);
        }
      }
    }
  }

  async get(id: string): Promise<StoredAction | undefined> {
    const row = this.select.get(id);
    if (!row) return undefined;
    return {
      id: row.id,
      platform: row.platform,
      chatId: row.chat_id,
      userId: row.user_id,
      action: JSON.parse(row.action) as ButtonAction,
      expiresAt: row.expires_at,
    };
  }

  async prune(now: number): Promise<number> {
    return this.deleteExpired.run(now).changes;
  }
}

export type SubscriptionTypes = "all" | "erc721" | "erc1155";

export interface Subscription {
  id: number;
  platform: string;
  chatId: string;
  types: SubscriptionTypes;
  createdBy: string;
  createdAt: number;
  pausedAt: number | null;
  pauseReason: string | null;
}

interface SubscriptionRow {
  id: number;
  platform: string;
  chat_id: string;
  types: string;
  created_by: string;
  created_at: number;
  paused_at: number | null;
  pause_reason: string | null;
}

const toSubscription = (row: SubscriptionRow): Subscription => ({
  id: row.id,
  platform: row.platform,
  chatId: row.chat_id,
  types: row.types as SubscriptionTypes,
  createdBy: row.created_by,
  createdAt: row.created_at,
  pausedAt: row.paused_at,
  pauseReason: row.pause_reason,
});

/** Which channels get new-collection alerts, and which are paused (and why). */
export class SubscriptionRepository {
  constructor(private readonly db: Db) {}

  /** Subscribes a chat (once: a second call updates the types and lifts any pause). */
  upsert(input: {
    platform: string;
    chatId: string;
    types: SubscriptionTypes;
    createdBy: string;
    now: number;
  }): {
    subscription: Subscription;
    created: boolean;
  } {
    return this.db.transaction(() => {
      const existing = this.find(input.platform, input.chatId);
      if (existing) {
        this.db
          .prepare(
            "UPDATE subscriptions SET types = ?, paused_at = NULL, pause_reason = NULL WHERE id = ?",
          )
          .run(input.types, existing.id);
        return {
          subscription: this.find(input.platform, input.chatId) as Subscription,
          created: false,
        };
      }
      this.db
        .prepare(
          "INSERT INTO subscriptions (platform, chat_id, types, created_by, created_at) VALUES (?, ?, ?, ?, ?)",
        )
        .run(input.platform, input.chatId, input.types, input.createdBy, input.now);
      return {
        subscription: this.find(input.platform, input.chatId) as Subscription,
        created: true,
      };
    })();
  }

  find(platform: string, chatId: string): Subscription | undefined {
    const row = this.db
      .prepare<[string, string], SubscriptionRow>(
        "SELECT * FROM subscriptions WHERE platform = ? AND chat_id = ?",
      )
      .get(platform, chatId);
    return row ? toSubscription(row) : undefined;
  }

  /** Removes the chat's subscription and its undelivered alerts. */
  remove(platform: string, chatId: string): boolean {
    return (
      this.db
        .prepare("DELETE FROM subscriptions WHERE platform = ? AND chat_id = ?")
        .run(platform, chatId).changes > 0
    );
  }

  /**
   * A chat got a new id (a Telegram group upgraded to a supergroup): its subscription follows,
   * and with it the queued alerts (they hang off the subscription), its buttons and its report
   * history. If the new chat already has a subscription, that one is kept and the old one's
   * alerts join it, dropping those it already has queued. Returns the subscription now serving
   * the new chat, if any.
   */
  moveChat(platform: string, fromChatId: string, toChatId: string): Subscription | undefined {
    return this.db
      .transaction(() => {
        const from = this.find(platform, fromChatId);
        const to = this.find(platform, toChatId);
        if (from && !to) {
          this.db
            .prepare("UPDATE subscriptions SET chat_id = ? WHERE id = ?")
            .run(toChatId, from.id);
        } else if (from && to) {
          this.db
            .prepare("UPDATE OR IGNORE outbox SET subscription_id = ? WHERE subscription_id = ?")
            .run(to.id, from.id);
          // What is left is what the kept subscription already had queued.
          this.db.prepare("DELETE FROM outbox WHERE subscription_id = ?").run(from.id);
          this.db.prepare("DELETE FROM subscriptions WHERE id = ?").run(from.id);
        }
        for (const table of ["button_actions", "spam_reports"]) {
          this.db
            .prepare(`UPDATE ${table} SET chat_id = ? WHERE platform = ? AND chat_id = ?`)
            .run(toChatId, platform, fromChatId);
        }
        return this.find(platform, toChatId);
      })
      .immediate();
  }

  pause(id: number, reason: string, now: number): void {
    this.db
      .prepare("UPDATE subscriptions SET paused_at = ?, pause_reason = ? WHERE id = ?")
      .run(now, reason, id);
  }

  active(): Subscription[] {
    return this.db
      .prepare<[], SubscriptionRow>(
        "SELECT * FROM subscriptions WHERE paused_at IS NULL ORDER BY id",
      )
      .all()
      .map(toSubscription);
  }

  all(): Subscription[] {
    return this.db
      .prepare<[], SubscriptionRow>("SELECT * FROM subscriptions ORDER BY id")
      .all()
      .map(toSubscription);
  }
}

/** Small named values: the poller's cursor, a pending gap note. */
export class KeyValueRepository {
  constructor(private readonly db: Db) {}

  get(key: string): string | undefined {
    return this.db
      .prepare<[string], { value: string }>("SELECT value FROM kv WHERE key = ?")
      .get(key)?.value;
  }

  set(key: string, value: string): void {
    this.db
      .prepare(
        "INSERT INTO kv (key, value) VALUES (?, ?) ON CONFLICT (key) DO UPDATE SET value = excluded.value",
      )
      .run(key, value);
  }

  delete(key: string): void {
    this.db.prepare("DELETE FROM kv WHERE key = ?").run(key);
  }
}

/**
 * A lease so that only one process on a data directory polls. It is taken when free or expired,
 * and renewed by its holder; another process sees who holds it.
 */
export class LeaseRepository {
  constructor(private readonly db: Db) {}

  /**
   * Takes or renews the lease; returns the current holder. `isDead` may say that the holder is
   * known to be gone (a crashed process on this host), so a restart need not wait for expiry.
   */
  acquire(
    name: string,
    holder: string,
    ttlMs: number,
    now: number,
    isDead: (holder: string) => boolean = () => false,
  ): string {
    return this.db
      .transaction(() => {
        const row = this.db
          .prepare<[string], { holder: string; expires_at: number }>(
            "SELECT holder, expires_at FROM leases WHERE name = ?",
          )
          .get(name);
        if (!row || row.holder === holder || row.expires_at <= now || isDead(row.holder)) {
          this.db
            .prepare(
              "INSERT INTO leases (name, holder, expires_at) VALUES (?, ?, ?) ON CONFLICT (name) DO UPDATE SET holder = excluded.holder, expires_at = excluded.expires_at",
            )
            .run(name, holder, now + ttlMs);
          return holder;
        }
        return row.holder;
      })
      .immediate();
  }

  release(name: string, holder: string): void {
    this.db.prepare("DELETE FROM leases WHERE name = ? AND holder = ?").run(name, holder);
  }
}
