import type { ChatSettings, ChatSettingsStore } from "../types.ts";
import type { PgDb } from "./db.ts";

/** Per-chat settings in PostgreSQL (/settings), shared by every instance. */
export class PgChatSettingsStore implements ChatSettingsStore {
  constructor(private readonly db: PgDb) {}

  async get(platform: string, chatId: string): Promise<ChatSettings> {
    const { rows } = await this.db.query<{ chain: string | null }>(
      "SELECT chain FROM chat_settings WHERE platform = $1 AND chat_id = $2",
      [platform, chatId],
    );
    return { chain: rows[0]?.chain ?? undefined };
  }

  async setChain(
    platform: string,
    chatId: string,
    chain: string | undefined,
    now: number,
  ): Promise<void> {
    await this.db.query(
      `INSERT INTO chat_settings (platform, chat_id, chain, updated_at) VALUES ($1, $2, $3, $4)
       ON CONFLICT (platform, chat_id) DO UPDATE SET chain = excluded.chain, updated_at = excluded.updated_at`,
      [platform, chatId, chain ?? null, now],
    );
  }

  async moveChat(platform: string, fromChatId: string, toChatId: string): Promise<void> {
    await this.db.tx(async (client) => {
      await client.query(
        `UPDATE chat_settings SET chat_id = $3 WHERE platform = $1 AND chat_id = $2
           AND NOT EXISTS (SELECT 1 FROM chat_settings WHERE platform = $1 AND chat_id = $3)`,
        [platform, fromChatId, toChatId],
      );
      // Left when the new chat had settings of its own.
      await client.query("DELETE FROM chat_settings WHERE platform = $1 AND chat_id = $2", [
        platform,
        fromChatId,
      ]);
    });
  }
}
