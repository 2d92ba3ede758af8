import type { LinkedWallet, LinkedWalletStore } from "../types.ts";
import type { PgDb } from "./db.ts";

/** The wallet each chat account reports for, when a message has no wallet of its own. */
export class PgLinkedWalletStore implements LinkedWalletStore {
  constructor(private readonly db: PgDb) {}

  async link(
    platform: string,
    userId: string,
    address: string,
    label: string,
    now: number,
  ): Promise<void> {
    await this.db.query(
      `INSERT INTO linked_wallets (platform, user_id, address, label, linked_at) VALUES ($1, $2, $3, $4, $5)
       ON CONFLICT (platform, user_id) DO UPDATE SET address = excluded.address, label = excluded.label, linked_at = excluded.linked_at`,
      [platform, userId, address, label, now],
    );
  }

  async unlink(platform: string, userId: string): Promise<boolean> {
    const result = await this.db.query(
      "DELETE FROM linked_wallets WHERE platform = $1 AND user_id = $2",
      [platform, userId],
    );
    return (result.rowCount ?? 0) > 0;
  }

  async find(platform: string, userId: string): Promise<LinkedWallet | undefined> {
    const { rows } = await this.db.query<{ address: string; label: string; linked_at: number }>(
      "SELECT address, label, linked_at FROM linked_wallets WHERE platform = $1 AND user_id = $2",
      [platform, userId],
    );
    const row = rows[0];
    return row ? { address: row.address, label: row.label, linkedAt: row.linked_at } : undefined;
  }
}
