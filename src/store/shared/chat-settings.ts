import type { Sql } from "../query.ts";
import type { ChatSettings, ChatSettingsStore } from "../types.ts";

/** Per-chat settings (/settings). */
export class SqlChatSettingsStore implements ChatSettingsStore {
  constructor(private readonly sql: Sql) {}

  async get(platform: string, chatId: string): Promise<ChatSettings> {
    const { q } = this.sql;
    const row = await this.sql.first(
      q
        .selectFrom("chat_settings")
        .select("chain")
        .where("platform", "=", platform)
        .where("chat_id", "=", chatId),
    );
    return { chain: row?.chain ?? undefined };
  }

  async setChain(
    platform: string,
    chatId: string,
    chain: string | undefined,
    now: number,
  ): Promise<void> {
    const { q } = this.sql;
    await this.sql.run(
      q
        .insertInto("chat_settings")
        .values({ platform, chat_id: chatId, chain: chain ?? null, updated_at: now })
        .onConflict((conflict) =>
          conflict.columns(["platform", "chat_id"]).doUpdateSet((row) => ({
            chain: row.ref("excluded.chain"),
            updated_at: row.ref("excluded.updated_at"),
          })),
        ),
    );
  }

  async moveChat(platform: string, fromChatId: string, toChatId: string): Promise<void> {
    const { q } = this.sql;
    await this.sql.transaction(
      function* (tx) {
        // The new chat's own settings, where it has them, are kept.
        yield* tx.run(
          q
            .updateTable("chat_settings")
            .set({ chat_id: toChatId })
            .where("platform", "=", platform)
            .where("chat_id", "=", fromChatId)
            .where((row) =>
              row.not(
                row.exists(
                  q
                    .selectFrom("chat_settings as n")
                    .select("n.chat_id")
                    .where("n.platform", "=", platform)
                    .where("n.chat_id", "=", toChatId),
                ),
              ),
            ),
        );
        yield* tx.run(
          q
            .deleteFrom("chat_settings")
            .where("platform", "=", platform)
            .where("chat_id", "=", fromChatId),
        );
      },
      { immediate: true },
    );
  }
}
