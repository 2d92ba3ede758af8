import type { LinkedWallet, LinkedWalletStore } from "../types.ts";
import type { Db } from "./db.ts";

/** The wallet each chat account reports for, when a message has no wallet of its own. */
export class SqliteLinkedWalletStore implements LinkedWalletStore {
  constructor(private readonly db: Db) {}

  async link(
    platform: string,
    userId: string,
    address: string,
    label: string,
    now: number,
  ): Promise<void> {
    this.db
      .prepare(
        `INSERT INTO linked_wallets (platform, user_id, address, label, linked_at) VALUES (?, ?, ?, ?, ?)
         ON CONFLICT (platform, user_id) DO UPDATE SET address = excluded.address, label = excluded.label, linked_at = excluded.linked_at`,
      )
      .run(platform, userId, address, label, now);
  }

  async unlink(platform: string, userId: string): Promise<boolean> {
    return (
      this.db
        .prepare("DELETE FROM linked_wallets WHERE platform = ? AND user_id = ?")
        .run(platform, userId).changes > 0
    );
  }

  async find(platform: string, userId: string): Promise<LinkedWallet | undefined> {
    const row = this.db
      .prepare<[string, string], { address: string; label: string; linked_at: number }>(
        "SELECT address, label, linked_at FROM linked_wallets WHERE platform = ? AND user_id = ?",
      )
      .get(platform, userId);
    return row ? { address: row.address, label: row.label, linkedAt: row.linked_at } : undefined;
  }
}
