import { sql as raw } from "kysely";
import {
  type ActionStore,
  DEFAULT_MAX_ACTIONS_PER_USER,
  type NewAction,
  type StoredAction,
  trimBelow,
} from "../../core/actions.ts";
import { randomBytesPooled } from "../../core/random.ts";
import type { ButtonAction } from "../../core/reply.ts";
import { type Sql, type Tx, unbound, type Work } from "../query.ts";
import { actionAt, decodeId, encodeId, type ReplyRow, SECRET_BYTES, sameSecret } from "../rows.ts";

/** A reply waiting for the next commit (SQLite), with its caller. */
interface Waiting {
  actions: readonly NewAction[];
  resolve: (ids: string[]) => void;
  reject: (error: unknown) => void;
}

/**
 * Button actions: buttons under old messages keep working after a restart. A reply's buttons are
 * one row (one insert, appended at the end of the table); the per-person cap drops whole replies,
 * oldest first (`trimBelow`).
 */
export class SqlActionStore implements ActionStore {
  /** Replies whose buttons wait for the next commit (SQLite). */
  private waiting: Waiting[] = [];

  constructor(
    private readonly sql: Sql,
    private readonly maxPerUser = DEFAULT_MAX_ACTIONS_PER_USER,
  ) {}

  /** One reply's row (its actions share the owner, chat and expiry) and its buttons' ids. */
  private *putReply(tx: Tx, actions: readonly NewAction[]): Work<string[]> {
    const first = actions[0];
    if (!first) return [];
    const { q } = this.sql;
    const secret = randomBytesPooled(SECRET_BYTES);
    const { platform, userId } = first;
    // The owner's running count continues from their newest reply (0 for their first); the
    // owner's lowest count comes back with the new row's, in the same statement. Two replies of
    // one person at once on PostgreSQL may share a start: the cap is then off by one reply at most.
    // Written raw (the same text on both databases, `?` or `$n` as each compiles it): every
    // reply with buttons runs it, and Kysely's builder took 15-40 µs to build and compile it
    // where the raw statement takes 2-4 µs.
    const row = yield* tx.first(
      this.sql.raw(raw<{ n: number; first_seq: number; lowest: number | null }>`
        INSERT INTO button_actions (secret, platform, chat_id, user_id, count, actions, expires_at, first_seq)
        VALUES (${secret}, ${platform}, ${first.chatId}, ${userId}, ${actions.length},
          ${JSON.stringify(actions.map((action) => action.action))}, ${first.expiresAt}, COALESCE(
            (SELECT first_seq + count FROM button_actions WHERE platform = ${platform} AND user_id = ${userId}
              ORDER BY first_seq DESC LIMIT 1), 0))
        RETURNING n, first_seq,
          (SELECT MIN(first_seq) FROM button_actions WHERE platform = ${platform} AND user_id = ${userId}) AS lowest`),
    );
    if (!row) throw new Error("the button row was not inserted");
    const { n, first_seq: seq } = row;
    const below = trimBelow(row.lowest ?? seq, seq, actions.length, this.maxPerUser);
    // The owner's replies below a running count.
    if (below !== undefined)
      yield* tx.run(
        q
          .deleteFrom("button_actions")
          .where("platform", "=", first.platform)
          .where("user_id", "=", first.userId)
          .where("first_seq", "<", below),
      );
    return actions.map((_, index) => encodeId(n, index, secret));
  }

  /** Several replies' rows in one transaction (SQLite). */
  private putAll(replies: readonly (readonly NewAction[])[]): Promise<string[][]> {
    const store = this;
    return this.sql.transaction(function* (tx) {
      const ids: string[][] = [];
      for (const actions of replies) ids.push(yield* store.putReply(tx, actions));
      return ids;
    });
  }

  /**
   * On SQLite the replies ready in the same turn of the event loop share one commit (a commit
   * costs more than a command's own work); each still gets all its buttons or none. On
   * PostgreSQL each reply's statements run on the pool as they come (no transaction: the insert
   * is one statement, the trim that may follow only removes the owner's oldest replies).
   */
  async putMany(actions: readonly NewAction[]): Promise<string[]> {
    if (this.sql.dialect === "postgres")
      return unbound(this.sql, (tx) => this.putReply(tx, actions));
    return new Promise((resolve, reject) => {
      this.waiting.push({ actions, resolve, reject });
      if (this.waiting.length === 1) setImmediate(() => void this.commitWaiting());
    });
  }

  private async commitWaiting(): Promise<void> {
    const batch = this.waiting;
    this.waiting = [];
    let ids: string[][];
    try {
      ids = await this.putAll(batch.map((reply) => reply.actions));
    } catch {
      // Each alone, so that each caller learns its own outcome.
      for (const reply of batch) {
        try {
          reply.resolve((await this.putAll([reply.actions]))[0] ?? []);
        } catch (error) {
          reply.reject(error);
        }
      }
      return;
    }
    for (const [i, reply] of batch.entries()) reply.resolve(ids[i] ?? []);
  }

  async get(id: string): Promise<StoredAction | undefined> {
    const { q } = this.sql;
    const key = decodeId(id);
    // The drivers read the secret (BLOB, BYTEA) as a Buffer.
    const row =
      key &&
      (await this.sql.first(
        q
          .selectFrom("button_actions")
          .select(["secret", "platform", "chat_id", "user_id", "actions", "expires_at"])
          .where("n", "=", key.n)
          .$castTo<ReplyRow>(),
      ));
    const found =
      key && row && sameSecret(row, key) ? { row, action: actionAt(row, key.index) } : undefined;
    if (found && !found.action) return undefined;
    // An id issued before buttons were stored a reply to a row: only SQLite databases have them
    // (button_actions_v1, migration 8); PostgreSQL's store never issued one.
    const old =
      found || this.sql.dialect !== "sqlite"
        ? undefined
        : await this.sql.first(
            q
              .selectFrom("button_actions_v1")
              .select(["platform", "chat_id", "user_id", "action", "expires_at"])
              .where("id", "=", id),
          );
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
    const { q } = this.sql;
    const pruned = await this.sql.run(
      q.deleteFrom("button_actions").where("expires_at", "<=", now),
    );
    if (this.sql.dialect !== "sqlite") return pruned;
    return (
      pruned +
      (await this.sql.run(q.deleteFrom("button_actions_v1").where("expires_at", "<=", now)))
    );
  }
}
