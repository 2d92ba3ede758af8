import pg from "pg";
import { StartupError } from "../../errors.ts";
import { gatesMigration, owedGrantsMigration } from "../migrations-gates.ts";
import { chatPausesMigration } from "../rows-chat-pause.ts";
import { sendWaitsMigration } from "../rows-send-wait.ts";
import {
  provedWalletsMigration,
  VERIFY_LINK_PLACE_MIGRATION,
  WALLET_OWNER_MIGRATION,
  walletProofsMigration,
} from "../rows-wallet.ts";

/**
 * The PostgreSQL schema, in numbered migrations applied in order at start. Migration 1 is what the
 * SQLite migrations 1-8 end up with (without the SQLite-only leftover: the first button table,
 * whose ids no PostgreSQL store ever issued); 2 is SQLite's 9, 3 SQLite's 10, 5 SQLite's 12 (4 is 11's). Times are epoch milliseconds in BIGINT, as in
 * SQLite. Never edit one that has shipped: add the next number.
 */
const MIGRATIONS: readonly string[] = [
  // 1: everything the SQLite store has after its migration 8
  `
  CREATE TABLE button_actions (
    n BIGSERIAL PRIMARY KEY,
    secret BYTEA NOT NULL,
    platform TEXT NOT NULL,
    chat_id TEXT NOT NULL,
    user_id TEXT NOT NULL,
    first_seq BIGINT NOT NULL,
    count INTEGER NOT NULL,
    actions TEXT NOT NULL,
    expires_at BIGINT NOT NULL
  );
  CREATE INDEX button_actions_owner_seq ON button_actions (platform, user_id, first_seq);
  CREATE INDEX button_actions_expires ON button_actions (expires_at);

  CREATE TABLE subscriptions (
    id BIGSERIAL PRIMARY KEY,
    platform TEXT NOT NULL,
    chat_id TEXT NOT NULL,
    types TEXT NOT NULL,
    created_by TEXT NOT NULL,
    created_at BIGINT NOT NULL,
    paused_at BIGINT,
    pause_reason TEXT,
    UNIQUE (platform, chat_id)
  );

  CREATE TABLE seen_contracts (
    address TEXT PRIMARY KEY,
    name TEXT NOT NULL,
    types TEXT NOT NULL,
    minter TEXT,
    tx_hash TEXT,
    minted_at TEXT,
    seen_at BIGINT NOT NULL
  );

  CREATE TABLE outbox (
    id BIGSERIAL PRIMARY KEY,
    subscription_id BIGINT NOT NULL REFERENCES subscriptions (id) ON DELETE CASCADE,
    contract TEXT NOT NULL REFERENCES seen_contracts (address),
    note TEXT,
    due_at BIGINT NOT NULL,
    attempts INTEGER NOT NULL DEFAULT 0,
    last_error TEXT,
    created_at BIGINT NOT NULL,
    UNIQUE (subscription_id, contract)
  );
  CREATE INDEX outbox_due ON outbox (due_at);

  CREATE TABLE deliveries (
    subscription_id BIGINT NOT NULL,
    contract TEXT NOT NULL,
    delivered_at BIGINT NOT NULL,
    PRIMARY KEY (subscription_id, contract)
  );

  CREATE TABLE failed_alerts (
    subscription_id BIGINT NOT NULL,
    contract TEXT NOT NULL,
    attempts INTEGER NOT NULL,
    last_error TEXT,
    failed_at BIGINT NOT NULL,
    PRIMARY KEY (subscription_id, contract)
  );

  CREATE TABLE kv (key TEXT PRIMARY KEY, value TEXT NOT NULL);

  CREATE TABLE leases (name TEXT PRIMARY KEY, holder TEXT NOT NULL, expires_at BIGINT NOT NULL);

  CREATE TABLE linked_wallets (
    platform TEXT NOT NULL,
    user_id TEXT NOT NULL,
    address TEXT NOT NULL,
    label TEXT NOT NULL,
    linked_at BIGINT NOT NULL,
    PRIMARY KEY (platform, user_id)
  );

  CREATE TABLE spam_reports (
    id BIGSERIAL PRIMARY KEY,
    platform TEXT NOT NULL,
    chat_id TEXT NOT NULL,
    user_id TEXT NOT NULL,
    user_name TEXT NOT NULL,
    wallet TEXT NOT NULL,
    contract TEXT NOT NULL,
    token_id TEXT NOT NULL,
    kind TEXT NOT NULL CHECK (kind IN ('spam', 'not_spam')),
    feedback TEXT,
    status TEXT NOT NULL
      CHECK (status IN ('sending', 'sent', 'queued', 'unsupported', 'failed', 'unknown')),
    upstream TEXT,
    attempts INTEGER NOT NULL DEFAULT 0,
    next_attempt_at BIGINT,
    created_at BIGINT NOT NULL,
    updated_at BIGINT NOT NULL,
    UNIQUE (platform, user_id, wallet, contract, token_id, kind)
  );
  CREATE INDEX spam_reports_chat ON spam_reports (platform, chat_id, created_at);
  CREATE INDEX spam_reports_due ON spam_reports (status, next_attempt_at);

  CREATE TABLE seen_updates (
    source TEXT NOT NULL,
    update_id BIGINT NOT NULL,
    seen_at BIGINT NOT NULL,
    PRIMARY KEY (source, update_id)
  );
  CREATE INDEX seen_updates_age ON seen_updates (seen_at);

  CREATE TABLE known_collections (
    address TEXT PRIMARY KEY,
    name TEXT NOT NULL,
    symbol TEXT NOT NULL,
    name_key TEXT NOT NULL,
    top_rank INTEGER,
    source TEXT NOT NULL CHECK (source IN ('top', 'contracts', 'answer')),
    seen_at BIGINT NOT NULL
  );
  `,
  // 2: alerts claimed for sending until a time (the database's clock), by a holder (as SQLite's 9)
  `
  ALTER TABLE outbox ADD COLUMN claimed_until BIGINT;
  ALTER TABLE outbox ADD COLUMN claimed_by TEXT;
  `,
  // 3: several chains (as SQLite's 10): subscriptions, seen contracts and queued alerts per chain,
  // the poller's cursor and gap note per chain; what there was is ethereum's
  `
  ALTER TABLE subscriptions ADD COLUMN chain TEXT NOT NULL DEFAULT 'ethereum';
  ALTER TABLE subscriptions ALTER COLUMN chain DROP DEFAULT;
  ALTER TABLE subscriptions DROP CONSTRAINT subscriptions_platform_chat_id_key;
  ALTER TABLE subscriptions ADD CONSTRAINT subscriptions_platform_chat_id_chain_key
    UNIQUE (platform, chat_id, chain);

  ALTER TABLE outbox DROP CONSTRAINT outbox_contract_fkey;
  ALTER TABLE seen_contracts ADD COLUMN chain TEXT NOT NULL DEFAULT 'ethereum';
  ALTER TABLE seen_contracts ALTER COLUMN chain DROP DEFAULT;
  ALTER TABLE seen_contracts DROP CONSTRAINT seen_contracts_pkey;
  ALTER TABLE seen_contracts ADD PRIMARY KEY (chain, address);

  ALTER TABLE outbox ADD COLUMN chain TEXT NOT NULL DEFAULT 'ethereum';
  ALTER TABLE outbox ALTER COLUMN chain DROP DEFAULT;
  ALTER TABLE outbox DROP CONSTRAINT outbox_subscription_id_contract_key;
  ALTER TABLE outbox ADD CONSTRAINT outbox_subscription_id_chain_contract_key
    UNIQUE (subscription_id, chain, contract);
  ALTER TABLE outbox ADD CONSTRAINT outbox_chain_contract_fkey
    FOREIGN KEY (chain, contract) REFERENCES seen_contracts (chain, address);

  UPDATE kv SET key = 'poll_cursor:ethereum' WHERE key = 'poll_cursor';
  UPDATE kv SET key = 'poll_pending_gap:ethereum' WHERE key = 'poll_pending_gap';
  `,
  // 4: several chains, commands (as SQLite's 11): the collection index keyed by (chain, address),
  // what it held being ethereum's; per-chat settings (the chat's default chain); spam reports name
  // their chain, today's being ethereum's, one per person per chain
  `
  ALTER TABLE known_collections ADD COLUMN chain TEXT NOT NULL DEFAULT 'ethereum';
  ALTER TABLE known_collections ALTER COLUMN chain DROP DEFAULT;
  ALTER TABLE known_collections DROP CONSTRAINT known_collections_pkey;
  ALTER TABLE known_collections ADD PRIMARY KEY (chain, address);
  CREATE TABLE chat_settings (
    platform TEXT NOT NULL,
    chat_id TEXT NOT NULL,
    chain TEXT,
    updated_at BIGINT NOT NULL,
    PRIMARY KEY (platform, chat_id)
  );
  ALTER TABLE spam_reports ADD COLUMN chain TEXT NOT NULL DEFAULT 'ethereum';
  ALTER TABLE spam_reports ALTER COLUMN chain DROP DEFAULT;
  DO $$
  DECLARE unique_name text;
  BEGIN
    SELECT conname INTO unique_name FROM pg_constraint
      WHERE conrelid = 'spam_reports'::regclass AND contype = 'u';
    EXECUTE format('ALTER TABLE spam_reports DROP CONSTRAINT %I', unique_name);
  END $$;
  ALTER TABLE spam_reports
    ADD CONSTRAINT spam_reports_same UNIQUE (platform, user_id, chain, wallet, contract, token_id, kind);
  `,
  // 5: scheduled digests and their runs, one per (digest, slot) (as SQLite's 12)
  `
  CREATE TABLE digests (
    id BIGSERIAL PRIMARY KEY,
    platform TEXT NOT NULL,
    chat_id TEXT NOT NULL,
    chain TEXT NOT NULL,
    cadence TEXT NOT NULL CHECK (cadence IN ('daily', 'weekly')),
    weekday INTEGER CHECK (weekday BETWEEN 1 AND 7),
    time TEXT NOT NULL,
    zone TEXT NOT NULL,
    metric TEXT NOT NULL,
    period TEXT NOT NULL,
    created_by TEXT NOT NULL,
    created_at BIGINT NOT NULL
  );
  CREATE INDEX digests_chat ON digests (platform, chat_id);

  CREATE TABLE digest_runs (
    digest_id BIGINT NOT NULL REFERENCES digests (id) ON DELETE CASCADE,
    slot BIGINT NOT NULL,
    status TEXT NOT NULL CHECK (status IN ('sending', 'sent', 'failed')),
    attempts INTEGER NOT NULL DEFAULT 0,
    claimed_by TEXT,
    claimed_until BIGINT,
    last_error TEXT,
    finished_at BIGINT,
    PRIMARY KEY (digest_id, slot)
  );
  `,
  // 6: who minted (as SQLite's 13)
  `
  ALTER TABLE seen_contracts ADD COLUMN minter_behavior TEXT;
  ALTER TABLE subscriptions ADD COLUMN bad_actors TEXT NOT NULL DEFAULT 'hide'
    CHECK (bad_actors IN ('hide', 'show'));
  CREATE TABLE suppressed_alerts (
    platform TEXT NOT NULL,
    chat_id TEXT NOT NULL,
    chain TEXT NOT NULL,
    contract TEXT NOT NULL,
    reports INTEGER NOT NULL,
    noted BOOLEAN NOT NULL,
    suppressed_at BIGINT NOT NULL,
    PRIMARY KEY (platform, chat_id, chain, contract)
  );
  CREATE INDEX spam_reports_chat_contract ON spam_reports (platform, chat_id, contract);
  `,
  // 7: watches (as SQLite's 14)
  `
  CREATE TABLE watches (
    id BIGSERIAL PRIMARY KEY,
    platform TEXT NOT NULL,
    chat_id TEXT NOT NULL,
    chain TEXT NOT NULL,
    kind TEXT NOT NULL CHECK (kind IN ('collection', 'wallet')),
    target TEXT NOT NULL,
    label TEXT NOT NULL,
    owners_percent DOUBLE PRECISION,
    whales_points DOUBLE PRECISION,
    state TEXT,
    pending TEXT,
    created_by TEXT NOT NULL,
    created_at BIGINT NOT NULL,
    UNIQUE (platform, chat_id, chain, kind, target)
  );
  CREATE INDEX watches_chat ON watches (platform, chat_id);
  `,
  // 8: channel rules (as SQLite's 15)
  `
  ALTER TABLE subscriptions ADD COLUMN rules TEXT;
  ALTER TABLE outbox ADD COLUMN held INTEGER NOT NULL DEFAULT 0;
  CREATE INDEX seen_contracts_seen ON seen_contracts (chain, seen_at);
  `,
  // 9: watches and digests pause (as SQLite's 16)
  `
  ALTER TABLE watches ADD COLUMN paused_at BIGINT;
  ALTER TABLE watches ADD COLUMN pause_reason TEXT;
  ALTER TABLE digests ADD COLUMN paused_at BIGINT;
  ALTER TABLE digests ADD COLUMN pause_reason TEXT;
  `,
  // 10: proved wallets (as SQLite's 17; issue 27): up to 10 per person, each with the signed message and signature
  // that prove it; the wallets linked before (on the person's word) are kept as not proved
  // (proved_at NULL, no chain). And the one-time /verify links: only the token's SHA-256.
  provedWalletsMigration("BIGINT"),
  // 11: gates (as SQLite's 18; issue 29)
  gatesMigration("postgres"),
  // 12: a wallet is one person's on each platform (as SQLite's 19; issue 34)
  WALLET_OWNER_MIGRATION,
  // 13: the pause belongs to the chat (as SQLite's 20; issue 34)
  chatPausesMigration("postgres"),
  // 14: grants owed (as SQLite's 21; issue 34)
  owedGrantsMigration("postgres"),
  // 15: the outbound module's waits (as SQLite's 22; issue 35)
  sendWaitsMigration("postgres"),
  // 16: a /verify link's community and person's name (as SQLite's 23; issue 36)
  VERIFY_LINK_PLACE_MIGRATION,
  // 17: wallet proof for everyone (as SQLite's 24; issue 37)
  walletProofsMigration("BIGINT"),
];

export const POSTGRES_MIGRATIONS = MIGRATIONS.length;

/** BIGINT (20) and NUMERIC (1700, e.g. from SUM) as JavaScript numbers: ids, counts, epoch ms. */
const types = {
  getTypeParser(oid: number, format?: "text" | "binary") {
    if (oid === 20 || oid === 1700) return (value: string) => Number(value);
    return format === undefined ? pg.types.getTypeParser(oid) : pg.types.getTypeParser(oid, format);
  },
} as pg.CustomTypesConfig;

/** One connection's queries (the pool's, or a transaction's client). */
export interface Queryable {
  query<R extends pg.QueryResultRow = pg.QueryResultRow>(
    text: string,
    values?: unknown[],
  ): Promise<pg.QueryResult<R>>;
}

/** The pool with transactions on one client. */
export class PgDb implements Queryable {
  constructor(
    readonly pool: pg.Pool,
    readonly schema: string,
  ) {}

  query<R extends pg.QueryResultRow = pg.QueryResultRow>(
    text: string,
    values?: unknown[],
  ): Promise<pg.QueryResult<R>> {
    return this.pool.query<R>(text, values);
  }

  /** Runs `fn` in one transaction on one client: committed when it resolves, rolled back if not. */
  async tx<T>(fn: (client: Queryable) => Promise<T>): Promise<T> {
    const client = await this.pool.connect();
    let broken: unknown;
    // The server may end the connection between two statements (IDLE_IN_TRANSACTION_MS, after a
    // freeze): the pool listens only to idle clients, and an unheard 'error' would end the process.
    const onError = (error: Error) => {
      broken = error;
    };
    client.on("error", onError);
    try {
      await client.query("BEGIN");
      const result = await fn(client);
      await client.query("COMMIT");
      return result;
    } catch (error) {
      try {
        await client.query("ROLLBACK");
      } catch (rollbackError) {
        // The connection itself failed: it goes, not back to the pool.
        broken = rollbackError;
      }
      throw error;
    } finally {
      client.off("error", onError);
      client.release(broken instanceof Error ? broken : undefined);
    }
  }
}

/** The URL's host and port, for messages: never its user or password. */
export function describeUrl(url: string): string {
  try {
    const parsed = new URL(url);
    return `${parsed.hostname || "localhost"}${parsed.port ? `:${parsed.port}` : ""}${parsed.pathname}`;
  } catch {
    return "(an unparsable URL)";
  }
}

const quoteIdent = (name: string) => `"${name.replaceAll('"', '""')}"`;

export interface PgOpenOptions {
  url: string;
  /** The schema (search_path) the store lives in; created if missing. Default "public". */
  schema?: string;
  /** Connections in the pool (default 10). */
  max?: number;
  /** Stops the migrations early (for tests of an older store). */
  through?: number;
  /** See IDLE_IN_TRANSACTION_MS (tests shorten it). */
  idleInTransactionMs?: number;
  /** Bounds on every wait (PG_* settings); see PG_BOUNDS for the defaults. */
  bounds?: Partial<PgBounds>;
}

/** How long any wait on PostgreSQL may last (src/config.ts names the settings). */
export interface PgBounds {
  statementTimeoutMs: number;
  queryTimeoutMs: number;
  connectTimeoutMs: number;
  keepAliveDelayMs: number;
}

/**
 * The server cancels a long statement first (the connection stays usable); the client's own
 * limit, a little longer, catches what the server cannot: a connection frozen without a reset,
 * whose answer never comes. That client then leaves the pool, and the next query opens a new one.
 */
export const PG_BOUNDS: PgBounds = {
  statementTimeoutMs: 10_000,
  queryTimeoutMs: 15_000,
  connectTimeoutMs: 5_000,
  keepAliveDelayMs: 10_000,
};

/**
 * How long the server lets one of our sessions sit idle inside a transaction before ending it
 * (idle_in_transaction_session_timeout). Our transactions send their statements back to back, so
 * only a frozen or cut-off instance (a stopped VM, a lost network) waits this long; without the
 * limit, the rows it had locked (an alert it was marking delivered) would stay locked until the
 * server noticed the connection dead, hours later on a lost network, and every claim would skip
 * them. As long as an alert's claim (CLAIM_MS), so such an alert is free about when its claim ends.
 */
export const IDLE_IN_TRANSACTION_MS = 15_000;

/**
 * Connects, creates the schema if missing and applies the migrations not applied yet, all in one
 * transaction under an advisory lock on the schema's name: instances starting together wait for
 * the first, then find nothing left to do. An unreachable server or a failed migration is a
 * StartupError naming DATABASE_URL and the host (never the password).
 */
export async function openPgDb(options: PgOpenOptions): Promise<PgDb> {
  const schema = options.schema ?? "public";
  const bounds = { ...PG_BOUNDS, ...options.bounds };
  const pool = new pg.Pool({
    connectionString: options.url,
    max: options.max ?? 10,
    connectionTimeoutMillis: bounds.connectTimeoutMs,
    query_timeout: bounds.queryTimeoutMs,
    statement_timeout: bounds.statementTimeoutMs,
    keepAlive: true,
    keepAliveInitialDelayMillis: bounds.keepAliveDelayMs,
    options: `-c search_path=${quoteIdent(schema)}`,
    idle_in_transaction_session_timeout: options.idleInTransactionMs ?? IDLE_IN_TRANSACTION_MS,
    types,
  });
  // An idle client whose server went away must not crash the process; the next query fails.
  pool.on("error", () => {});
  const db = new PgDb(pool, schema);
  try {
    await migratePg(db, options.through ?? MIGRATIONS.length);
    return db;
  } catch (error) {
    await pool.end().catch(() => {});
    throw new StartupError(
      `DATABASE_URL: cannot open the PostgreSQL store at ${describeUrl(options.url)}: ${(error as Error).message}`,
      { cause: error },
    );
  }
}

/** Applies the migrations not applied yet (up to `through`); returns how many it applied. */
export async function migratePg(db: PgDb, through = MIGRATIONS.length): Promise<number> {
  return db.tx(async (client) => {
    await client.query("SELECT pg_advisory_xact_lock(hashtext($1))", [
      `nft-audience-bot:migrate:${db.schema}`,
    ]);
    await client.query(`CREATE SCHEMA IF NOT EXISTS ${quoteIdent(db.schema)}`);
    await client.query(
      `CREATE TABLE IF NOT EXISTS schema_migrations (
         version INTEGER PRIMARY KEY,
         applied_at TIMESTAMPTZ NOT NULL DEFAULT now()
       )`,
    );
    const { rows } = await client.query<{ version: number | null }>(
      "SELECT MAX(version) AS version FROM schema_migrations",
    );
    let applied = 0;
    for (let version = rows[0]?.version ?? 0; version < through; version++) {
      await client.query(MIGRATIONS[version] ?? "");
      await client.query("INSERT INTO schema_migrations (version) VALUES ($1)", [version + 1]);
      applied++;
    }
    return applied;
  });
}
