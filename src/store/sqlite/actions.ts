import {
  type ActionStore,
  DEFAULT_MAX_ACTIONS_PER_USER,
  type NewAction,
  type StoredAction,
  trimBelow,
} from "../../core/actions.ts";
import { randomBytesPooled } from "../../core/random.ts";
import type { ButtonAction } from "../../core/reply.ts";
import { actionAt, decodeId, encodeId, type ReplyRow, SECRET_BYTES, sameSecret } from "../rows.ts";
import type { Db } from "./db.ts";

/**
 * Button actions in SQLite: buttons under old messages keep working after a restart. A reply's
 * buttons are one row (one insert, appended at the end of the table); the per-person cap drops
 * whole replies, oldest first (`trimBelow`).
 */
export class SqliteActionStore implements ActionStore {
  private readonly insert;
  private readonly trim;
  private readonly select;
  private readonly selectV1;
  private readonly deleteExpired;
  private readonly deleteExpiredV1;
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
    // The owner's running count continues from their newest reply (0 for their first).
    this.insert = db.prepare<
      [Buffer, string, string, string, number, string, number, string, string, string, string],
      { n: number; first_seq: number; lowest: number | null }
    >(
      `INSERT INTO button_actions (secret, platform, chat_id, user_id, count, actions, expires_at, first_seq)
       SELECT ?, ?, ?, ?, ?, ?, ?, COALESCE(
         (SELECT first_seq + count FROM button_actions WHERE platform = ? AND user_id = ?
           ORDER BY first_seq DESC LIMIT 1), 0)
       RETURNING n, first_seq,
         (SELECT MIN(first_seq) FROM button_actions WHERE platform = ? AND user_id = ?) AS lowest`,
    );
    // The owner's replies below a running count.
    this.trim = db.prepare<[string, string, number]>(
      "DELETE FROM button_actions WHERE platform = ? AND user_id = ? AND first_seq < ?",
    );
    this.select = db.prepare<[number], ReplyRow>(
      "SELECT secret, platform, chat_id, user_id, actions, expires_at FROM button_actions WHERE n = ?",
    );
    this.selectV1 = db.prepare<
      [string],
      { platform: string; chat_id: string; user_id: string; action: string; expires_at: number }
    >("SELECT platform, chat_id, user_id, action, expires_at FROM button_actions_v1 WHERE id = ?");
    this.deleteExpired = db.prepare("DELETE FROM button_actions WHERE expires_at <= ?");
    this.deleteExpiredV1 = db.prepare("DELETE FROM button_actions_v1 WHERE expires_at <= ?");
    this.putAll = db.transaction((replies: readonly (readonly NewAction[])[]) =>
      replies.map((actions) => this.putReply(actions)),
    );
  }

  /** One reply's row (its actions share the owner, chat and expiry) and its buttons' ids. */
  private putReply(actions: readonly NewAction[]): string[] {
    const first = actions[0];
    if (!first) return [];
    const secret = randomBytesPooled(SECRET_BYTES);
    const row = this.insert.get(
      secret,
      first.platform,
      first.chatId,
      first.userId,
      actions.length,
      JSON.stringify(actions.map((action) => action.action)),
      first.expiresAt,
      first.platform,
      first.userId,
      first.platform,
      first.userId,
    );
    if (!row) throw new Error("the button row was not inserted");
    const { n, first_seq: seq } = row;
    const below = trimBelow(row.lowest ?? seq, seq, actions.length, this.maxPerUser);
    if (below !== undefined) this.trim.run(first.platform, first.userId, below);
    return actions.map((_, index) => encodeId(n, index, secret));
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
    const key = decodeId(id);
    const row = key && this.select.get(key.n);
    const found =
      key && row && sameSecret(row, key) ? { row, action: actionAt(row, key.index) } : undefined;
    if (found && !found.action) return undefined;
    // An id issued before buttons were stored a reply to a row.
    const old = found ? undefined : this.selectV1.get(id);
    const { row: stored, action } = found ?? {
      row: old,
      action: old && (JSON.parse(old.action) as ButtonAction),
    };
    if (!stored || !action) return undefined;
    return {
      id,
      platform: stored.platform,
      chatId: stored.chat_id,
      userId: stored.user_id,
      action,
      expiresAt: stored.expires_at,
    };
  }

  async prune(now: number): Promise<number> {
    return this.deleteExpired.run(now).changes + this.deleteExpiredV1.run(now).changes;
  }
}
