import {
  type ActionStore,
  DEFAULT_MAX_ACTIONS_PER_USER,
  type NewAction,
  type StoredAction,
  trimBelow,
} from "../../core/actions.ts";
import { randomBytesPooled } from "../../core/random.ts";
import { actionAt, decodeId, encodeId, type ReplyRow, SECRET_BYTES, sameSecret } from "../rows.ts";
import type { PgDb } from "./db.ts";

/** Button actions in PostgreSQL: a reply's buttons are one row; the per-person cap drops whole replies. */
export class PgActionStore implements ActionStore {
  constructor(
    private readonly db: PgDb,
    private readonly maxPerUser = DEFAULT_MAX_ACTIONS_PER_USER,
  ) {}

  async putMany(actions: readonly NewAction[]): Promise<string[]> {
    const first = actions[0];
    if (!first) return [];
    const secret = randomBytesPooled(SECRET_BYTES);
    // The owner's running count continues from their newest reply (0 for their first). Two
    // replies of one person at once may share a start: the cap is then off by one reply at most.
    const { rows } = await this.db.query<{ n: number; first_seq: number; lowest: number | null }>(
      `INSERT INTO button_actions (secret, platform, chat_id, user_id, count, actions, expires_at, first_seq)
       SELECT $1, $2, $3, $4, $5, $6, $7, COALESCE(
         (SELECT first_seq + count FROM button_actions WHERE platform = $2 AND user_id = $4
           ORDER BY first_seq DESC LIMIT 1), 0)
       RETURNING n, first_seq,
         (SELECT MIN(first_seq) FROM button_actions WHERE platform = $2 AND user_id = $4) AS lowest`,
      [
        Buffer.from(secret),
        first.platform,
        first.chatId,
        first.userId,
        actions.length,
        JSON.stringify(actions.map((action) => action.action)),
        first.expiresAt,
      ],
    );
    const row = rows[0];
    if (!row) throw new Error("the button row was not inserted");
    const { n, first_seq: seq } = row;
    const below = trimBelow(row.lowest ?? seq, seq, actions.length, this.maxPerUser);
    if (below !== undefined)
      await this.db.query(
        "DELETE FROM button_actions WHERE platform = $1 AND user_id = $2 AND first_seq < $3",
        [first.platform, first.userId, below],
      );
    return actions.map((_, index) => encodeId(n, index, secret));
  }

  async get(id: string): Promise<StoredAction | undefined> {
    const key = decodeId(id);
    if (!key) return undefined;
    const { rows } = await this.db.query<ReplyRow>(
      "SELECT secret, platform, chat_id, user_id, actions, expires_at FROM button_actions WHERE n = $1",
      [key.n],
    );
    const row = rows[0];
    if (!row || !sameSecret(row, key)) return undefined;
    const action = actionAt(row, key.index);
    if (!action) return undefined;
    return {
      id,
      platform: row.platform,
      chatId: row.chat_id,
      userId: row.user_id,
      action,
      expiresAt: row.expires_at,
    };
  }

  async prune(now: number): Promise<number> {
    return (
      (await this.db.query("DELETE FROM button_actions WHERE expires_at <= $1", [now])).rowCount ??
      0
    );
  }
}
