import { sqlLayer } from "../sql.ts";
import type { Store } from "../types.ts";
import { PgActionStore } from "./actions.ts";
import { PgChatPauseStore } from "./chat-pause.ts";
import { PgChatSettingsStore } from "./chat-settings.ts";
import { PgCollectionIndexStore } from "./collections.ts";
import { openPgDb, type PgDb, type PgOpenOptions } from "./db.ts";
import { PgDigestStore } from "./digests.ts";
import { PgGateStore } from "./gates.ts";
import { PgKeyValueStore, PgLeaseStore } from "./kv.ts";
import { PgOutboxStore } from "./outbox.ts";
import { PgReportStore } from "./reports.ts";
import { PgSendWaitStore } from "./send-waits.ts";
import { PgSubscriptionStore } from "./subscriptions.ts";
import { PgUpdateStore } from "./updates.ts";
import { PgVerifyLinkStore, PgWalletStore } from "./wallets.ts";
import { PgWatchStore } from "./watches.ts";

export {
  describeUrl,
  migratePg,
  openPgDb,
  PgDb,
  type PgOpenOptions,
  POSTGRES_MIGRATIONS,
} from "./db.ts";

/** The PostgreSQL store; `pg` is there for tests and the migration script. */
export interface PostgresStore extends Store {
  readonly pg: PgDb;
}

export interface PostgresStoreOptions extends PgOpenOptions {
  /** Stored button replies one person may hold (see PgActionStore). */
  maxButtonsPerUser?: number;
}

/** The store over an open, migrated database; closing the store ends its pool. */
export function postgresStore(
  db: PgDb,
  options: { maxButtonsPerUser?: number } = {},
): PostgresStore {
  let closed: Promise<void> | undefined;
  return {
    pg: db,
    subscriptions: new PgSubscriptionStore(db),
    outbox: new PgOutboxStore(db),
    actions: new PgActionStore(db, options.maxButtonsPerUser),
    reports: new PgReportStore(db),
    wallets: new PgWalletStore(db),
    verifyLinks: new PgVerifyLinkStore(db),
    collections: new PgCollectionIndexStore(db),
    kv: new PgKeyValueStore(db),
    leases: new PgLeaseStore(db),
    updates: new PgUpdateStore(db),
    chatSettings: new PgChatSettingsStore(db),
    chatPauses: new PgChatPauseStore(db),
    sendWaits: new PgSendWaitStore(db),
    digests: new PgDigestStore(db),
    watches: new PgWatchStore(db),
    gates: new PgGateStore(db),
    sql: sqlLayer("postgres", (kysely) => new kysely.PostgresDialect({ pool: db.pool })),
    async healthy() {
      try {
        return (await db.query("SELECT 1 AS ok")).rows.length === 1;
      } catch {
        return false;
      }
    },
    /** Waits for the queries under way (pool.end lets checked-out clients finish). */
    close() {
      closed ??= db.pool.end();
      return closed;
    },
  };
}

/**
 * Connects to DATABASE_URL, creates the schema if missing and migrates it (once, under a lock,
 * however many instances start together). An unreachable server is a StartupError naming
 * DATABASE_URL and the host.
 */
export async function openPostgresStore(options: PostgresStoreOptions): Promise<PostgresStore> {
  const { maxButtonsPerUser, ...open } = options;
  return postgresStore(
    await openPgDb(open),
    maxButtonsPerUser === undefined ? {} : { maxButtonsPerUser },
  );
}
