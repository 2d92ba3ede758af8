import type { Config } from "../config.ts";
import { type Db, openSqliteStore } from "./sqlite/index.ts";
import type { Store } from "./types.ts";

/**
 * SQLite's automatic checkpoint runs inside whichever commit crosses 1,000 WAL pages, with its
 * fsyncs: one command in a few hundred waited milliseconds for it. The store's timer does instead.
 */
const CHECKPOINT_EVERY_MS = 1_000;

export interface OpenedStore {
  store: Store;
  /** The SQLite database, when the store is SQLite's (operators' checks and tests). */
  db: Db | undefined;
}

/**
 * The store the settings name: PostgreSQL at DATABASE_URL (shared by every instance on it) when
 * set, else the SQLite file under DATA_DIR. Either migrates at open; a database that cannot be
 * opened is a StartupError naming the setting and where (never a password).
 */
export async function openStore(
  config: Pick<
    Config,
    "dataDir" | "databaseUrl" | "databaseSchema" | "buttonMaxPerUser" | "postgres"
  >,
): Promise<OpenedStore> {
  if (config.databaseUrl !== undefined) {
    // Loaded only here: pg is some 20 ms of a start that does not use it (test/lazy-load.test.ts).
    const { openPostgresStore } = await import("./postgres/index.ts");
    const store = await openPostgresStore({
      url: config.databaseUrl,
      schema: config.databaseSchema,
      bounds: config.postgres,
      maxButtonsPerUser: config.buttonMaxPerUser,
    });
    return { store, db: undefined };
  }
  const store = openSqliteStore(config.dataDir, {
    maxButtonsPerUser: config.buttonMaxPerUser,
    checkpointEveryMs: CHECKPOINT_EVERY_MS,
  });
  return { store, db: store.db };
}
