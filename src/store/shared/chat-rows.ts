import type { Sql } from "../query.ts";
import type { ChatRowsStore } from "../types.ts";

/** The kernel's rows kept per chat (see ChatRowsStore). */
export class SqlChatRowsStore implements ChatRowsStore {
  constructor(private readonly sql: Sql) {}

  async moveChat(platform: string, fromChatId: string, toChatId: string): Promise<void> {
    const { q } = this.sql;
    await this.sql.transaction(
      function* (tx) {
        for (const table of ["button_actions", "spam_reports"] as const)
          yield* tx.run(
            q
              .updateTable(table)
              .set({ chat_id: toChatId })
              .where("platform", "=", platform)
              .where("chat_id", "=", fromChatId),
          );
      },
      { immediate: true },
    );
  }
}
