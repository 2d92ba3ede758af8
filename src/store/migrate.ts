import { existsSync } from "node:fs";
import { join } from "node:path";
import { ConfigError, parseConfig } from "../config.ts";
import { StartupError } from "../errors.ts";
import { copySqliteToPostgres } from "./copy.ts";
import { openPostgresStore } from "./postgres/index.ts";
import { openDatabase } from "./sqlite/index.ts";

/**
 * `npm run migrate-store`: copies the SQLite store under DATA_DIR into the PostgreSQL store at
 * DATABASE_URL (DATABASE_SCHEMA), once, with the bot stopped. The target must be empty; the copy
 * is one transaction, so a failed run leaves it empty and can be run again.
 */
export async function migrateStore(variables: Record<string, string | undefined>): Promise<string> {
  const config = parseConfig(variables);
  if (config.databaseUrl === undefined)
    throw new ConfigError("DATABASE_URL is required: the PostgreSQL store to copy into.");
  const file = join(config.dataDir, "bot.sqlite");
  if (!existsSync(file))
    throw new StartupError(`There is no SQLite store to copy at ${file} (DATA_DIR).`);
  const sqlite = openDatabase(config.dataDir);
  try {
    const target = await openPostgresStore({
      url: config.databaseUrl,
      schema: config.databaseSchema,
      max: 1,
    });
    try {
      const counts = await copySqliteToPostgres(sqlite, target.pg);
      const summary = Object.entries(counts)
        .map(([table, n]) => `${n} ${table}`)
        .join(", ");
      return `Copied ${file} into PostgreSQL (schema ${config.databaseSchema}): ${summary}.`;
    } finally {
      await target.close();
    }
  } finally {
    sqlite.close();
  }
}
