import type { ChatSettings, ChatSettingsStore } from "../types.ts";
import type { Db } from "./db.ts";

/** Per-chat settings in SQLite (/settings). */
export class SqliteChatSettingsStore implements ChatSettingsStore {
  private readonly select;
  private readonly upsertChain;

  constructor(private readonly db: Db) {
    this.select = db.prepare<[string, string], { chain: string | null }>(
      "SELECT chain FROM chat_settings WHERE platform = ? AND chat_id = ?",
    );
    this.upsertChain = db.prepare(
      `INSERT INTO chat_settings (platform, chat_id, chain, updated_at) VALUES (?, ?, ?, ?)
       ON CONFLICT (platform, chat_id) DO UPDATE SET chain = excluded.chain, updated_at = excluded.updated_at`,
    );
  }

  async get(platform: string, chatId: string): Promise<ChatSettings> {
    const row = this.select.get(platform, chatId);
    return { chain: row?.chain ?? undefined };
  }

  async setChain(
    platform: string,
    chatId: string,
    chain: string | undefined,
    now: number,
  ): Promise<void> {
    this.upsertChain.run(platform, chatId, chain ?? null, now);
  }

  async moveChat(platform: string, fromChatId: string, toChatId: string): Promise<void> {
    this.db
      .transaction(() => {
        this.db
          .prepare(
            "UPDATE OR IGNORE chat_settings SET chat_id = ? WHERE platform = ? AND chat_id = ?",
          )
          .run(toChatId, platform, fromChatId);
        // Left when the new chat had settings of its own.
        this.db
          .prepare("DELETE FROM chat_settings WHERE platform = ? AND chat_id = ?")
          .run(platform, fromChatId);
      })
      .immediate();
  }
}
