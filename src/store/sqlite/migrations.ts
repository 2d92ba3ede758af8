/** The SQLite store's schema: its migrations, applied by migrate() in src/store/sqlite/db.ts. */

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
 * Numbered migrations, applied in order at start inside one transaction each. Never edit one
 * that has shipped: add the next number.
 */
export const MIGRATIONS: readonly string[] = [
  // 1: buttons, subscriptions, new-contract tracking, delivery outbox, poller lease and cursor
  `
  CREATE TABLE button_actions (
    id TEXT PRIMARY KEY,
    platform TEXT NOT NULL,
    chat_id TEXT NOT NULL,
    action TEXT NOT NULL,
    expires_at INTEGER NOT NULL
  );
  CREATE INDEX button_actions_expiry ON button_actions (expires_at);

  CREATE TABLE subscriptions (
    id INTEGER PRIMARY KEY,
    platform TEXT NOT NULL,
    chat_id TEXT NOT NULL,
    types TEXT NOT NULL,
    created_by TEXT NOT NULL,
    created_at INTEGER NOT NULL,
    paused_at INTEGER,
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
    seen_at INTEGER NOT NULL
  );

  CREATE TABLE outbox (
    id INTEGER PRIMARY KEY,
    subscription_id INTEGER NOT NULL REFERENCES subscriptions (id) ON DELETE CASCADE,
    contract TEXT NOT NULL REFERENCES seen_contracts (address),
    note TEXT,
    due_at INTEGER NOT NULL,
    attempts INTEGER NOT NULL DEFAULT 0,
    last_error TEXT,
    created_at INTEGER NOT NULL,
    UNIQUE (subscription_id, contract)
  );
  CREATE INDEX outbox_due ON outbox (due_at);

  CREATE TABLE deliveries (
    subscription_id INTEGER NOT NULL,
    contract TEXT NOT NULL,
    delivered_at INTEGER NOT NULL,
    PRIMARY KEY (subscription_id, contract)
  );

  CREATE TABLE kv (key TEXT PRIMARY KEY, value TEXT NOT NULL);

  CREATE TABLE leases (name TEXT PRIMARY KEY, holder TEXT NOT NULL, expires_at INTEGER NOT NULL);
  `,
  // 2: wallets people link to their chat accounts, and every spam / not-spam report
  `
  CREATE TABLE linked_wallets (
    platform TEXT NOT NULL,
    user_id TEXT NOT NULL,
    address TEXT NOT NULL,
    label TEXT NOT NULL,
    linked_at INTEGER NOT NULL,
    PRIMARY KEY (platform, user_id)
  );

  CREATE TABLE spam_reports (
    id INTEGER PRIMARY KEY,
    platform TEXT NOT NULL,
    chat_id TEXT NOT NULL,
    user_id TEXT NOT NULL,
    user_name TEXT NOT NULL,
    wallet TEXT NOT NULL,
    contract TEXT NOT NULL,
    token_id TEXT NOT NULL,
    kind TEXT NOT NULL CHECK (kind IN ('spam', 'not_spam')),
    feedback TEXT,
    status TEXT NOT NULL CHECK (status IN ('sending', 'sent', 'queued', 'unsupported', 'failed')),
    upstream TEXT,
    attempts INTEGER NOT NULL DEFAULT 0,
    next_attempt_at INTEGER,
    created_at INTEGER NOT NULL,
    updated_at INTEGER NOT NULL,
    UNIQUE (platform, user_id, wallet, contract, token_id, kind)
  );
  CREATE INDEX spam_reports_chat ON spam_reports (platform, chat_id, created_at);
  CREATE INDEX spam_reports_due ON spam_reports (status, next_attempt_at);
  `,
  // 3: a report whose outcome is unknown (the bot stopped or timed out during the call) is kept
  // as 'unknown'. SQLite cannot alter a CHECK constraint: the table is rebuilt.
  `
  CREATE TABLE spam_reports_v3 (
    id INTEGER PRIMARY KEY,
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
    next_attempt_at INTEGER,
    created_at INTEGER NOT NULL,
    updated_at INTEGER NOT NULL,
    UNIQUE (platform, user_id, wallet, contract, token_id, kind)
  );
  INSERT INTO spam_reports_v3 SELECT * FROM spam_reports;
  DROP TABLE spam_reports;
  ALTER TABLE spam_reports_v3 RENAME TO spam_reports;
  CREATE INDEX spam_reports_chat ON spam_reports (platform, chat_id, created_at);
  CREATE INDEX spam_reports_due ON spam_reports (status, next_attempt_at);
  `,
  // 4: whose button actions are whose (a person, or 'alert:<chat>'), to cap them per person
  `
  ALTER TABLE button_actions ADD COLUMN user_id TEXT NOT NULL DEFAULT '';
  CREATE INDEX button_actions_owner ON button_actions (platform, user_id);
  `,
  // 5: alerts given up on after ALERT_MAX_ATTEMPTS failed tries (never retried)
  `
  CREATE TABLE failed_alerts (
    subscription_id INTEGER NOT NULL,
    contract TEXT NOT NULL,
    attempts INTEGER NOT NULL,
    last_error TEXT,
    failed_at INTEGER NOT NULL,
    PRIMARY KEY (subscription_id, contract)
  );
  `,
  // 6: platform update ids already taken (Telegram re-delivers), kept for the redelivery window
  `
  CREATE TABLE seen_updates (
    source TEXT NOT NULL,
    update_id INTEGER NOT NULL,
    seen_at INTEGER NOT NULL,
    PRIMARY KEY (source, update_id)
  );
  CREATE INDEX seen_updates_age ON seen_updates (seen_at);
  `,
  // 7: collections the bot has seen (top lists, new contracts, answers), so people may name them:
  // name_key is the name without case, accents, spaces or punctuation; top_rank the best place in
  // the top lists of the last refresh (NULL when not ranked)
  `
  CREATE TABLE known_collections (
    address TEXT PRIMARY KEY,
    name TEXT NOT NULL,
    symbol TEXT NOT NULL,
    name_key TEXT NOT NULL,
    top_rank INTEGER,
    source TEXT NOT NULL CHECK (source IN ('top', 'contracts', 'answer')),
    seen_at INTEGER NOT NULL
  );
  `,
  // 8: a reply's buttons in one row, keyed by a sequential number: a random text key put each
  // button on a random page of its index, and a 10-button reply wrote ~3x the pages to commit.
  // first_seq is the owner's running button count before this reply, so the per-person cap is a
  // range delete. The old table keeps answering the ids it issued until they expire.
  `
  ALTER TABLE button_actions RENAME TO button_actions_v1;
  CREATE TABLE button_actions (
    n INTEGER PRIMARY KEY,
    secret BLOB NOT NULL,
    platform TEXT NOT NULL,
    chat_id TEXT NOT NULL,
    user_id TEXT NOT NULL,
    first_seq INTEGER NOT NULL,
    count INTEGER NOT NULL,
    actions TEXT NOT NULL,
    expires_at INTEGER NOT NULL
  );
  CREATE INDEX button_actions_owner_seq ON button_actions (platform, user_id, first_seq);
  CREATE INDEX button_actions_expires ON button_actions (expires_at);
  `,
  // 9: an alert taken for sending is claimed until a time, by a holder, so that two instances (or
  // a leader and its successor) never send it both, and a dead one's alerts come back on expiry
  `
  ALTER TABLE outbox ADD COLUMN claimed_until INTEGER;
  ALTER TABLE outbox ADD COLUMN claimed_by TEXT;
  `,
  // 10: several chains. A chat subscribes per chain; contracts are seen, and alerts queued, per
  // chain (one address may exist on two chains); the poller's cursor and gap note are per chain.
  // What there was is ethereum's. SQLite cannot change a UNIQUE or primary key: the three tables
  // are rebuilt. The outbox's rows wait in a table without foreign keys meanwhile, since dropping
  // the old subscriptions would otherwise cascade to them.
  `
  CREATE TABLE outbox_v9 AS SELECT * FROM outbox;
  DROP TABLE outbox;

  CREATE TABLE subscriptions_v10 (
    id INTEGER PRIMARY KEY,
    platform TEXT NOT NULL,
    chat_id TEXT NOT NULL,
    chain TEXT NOT NULL,
    types TEXT NOT NULL,
    created_by TEXT NOT NULL,
    created_at INTEGER NOT NULL,
    paused_at INTEGER,
    pause_reason TEXT,
    UNIQUE (platform, chat_id, chain)
  );
  INSERT INTO subscriptions_v10
    (id, platform, chat_id, chain, types, created_by, created_at, paused_at, pause_reason)
    SELECT id, platform, chat_id, 'ethereum', types, created_by, created_at, paused_at, pause_reason
      FROM subscriptions;
  DROP TABLE subscriptions;
  ALTER TABLE subscriptions_v10 RENAME TO subscriptions;

  CREATE TABLE seen_contracts_v10 (
    chain TEXT NOT NULL,
    address TEXT NOT NULL,
    name TEXT NOT NULL,
    types TEXT NOT NULL,
    minter TEXT,
    tx_hash TEXT,
    minted_at TEXT,
    seen_at INTEGER NOT NULL,
    PRIMARY KEY (chain, address)
  );
  INSERT INTO seen_contracts_v10 (chain, address, name, types, minter, tx_hash, minted_at, seen_at)
    SELECT 'ethereum', address, name, types, minter, tx_hash, minted_at, seen_at FROM seen_contracts;
  DROP TABLE seen_contracts;
  ALTER TABLE seen_contracts_v10 RENAME TO seen_contracts;

  CREATE TABLE outbox (
    id INTEGER PRIMARY KEY,
    subscription_id INTEGER NOT NULL REFERENCES subscriptions (id) ON DELETE CASCADE,
    chain TEXT NOT NULL,
    contract TEXT NOT NULL,
    note TEXT,
    due_at INTEGER NOT NULL,
    attempts INTEGER NOT NULL DEFAULT 0,
    last_error TEXT,
    created_at INTEGER NOT NULL,
    claimed_until INTEGER,
    claimed_by TEXT,
    FOREIGN KEY (chain, contract) REFERENCES seen_contracts (chain, address),
    UNIQUE (subscription_id, chain, contract)
  );
  INSERT INTO outbox (id, subscription_id, chain, contract, note, due_at, attempts, last_error,
                      created_at, claimed_until, claimed_by)
    SELECT id, subscription_id, 'ethereum', contract, note, due_at, attempts, last_error,
           created_at, claimed_until, claimed_by
      FROM outbox_v9;
  DROP TABLE outbox_v9;
  CREATE INDEX outbox_due ON outbox (due_at);

  UPDATE kv SET key = 'poll_cursor:ethereum' WHERE key = 'poll_cursor';
  UPDATE kv SET key = 'poll_pending_gap:ethereum' WHERE key = 'poll_pending_gap';
  `,
  // 11: several chains (issue 17, commands): a collection is known on one chain (the same address
  // may be another contract elsewhere), so the index is keyed by (chain, address) and what it
  // held is ethereum's; per-chat settings, the chat's default chain (/settings chain); and a spam
  // report names its chain (it is sent, and retried, to that chain's data service; one report per
  // person per chain), today's being ethereum's. SQLite cannot change a UNIQUE: rebuilt.
  `
  ALTER TABLE known_collections RENAME TO known_collections_v7;
  CREATE TABLE known_collections (
    chain TEXT NOT NULL,
    address TEXT NOT NULL,
    name TEXT NOT NULL,
    symbol TEXT NOT NULL,
    name_key TEXT NOT NULL,
    top_rank INTEGER,
    source TEXT NOT NULL CHECK (source IN ('top', 'contracts', 'answer')),
    seen_at INTEGER NOT NULL,
    PRIMARY KEY (chain, address)
  );
  INSERT INTO known_collections (chain, address, name, symbol, name_key, top_rank, source, seen_at)
    SELECT 'ethereum', address, name, symbol, name_key, top_rank, source, seen_at
    FROM known_collections_v7;
  DROP TABLE known_collections_v7;
  CREATE TABLE chat_settings (
    platform TEXT NOT NULL,
    chat_id TEXT NOT NULL,
    chain TEXT,
    updated_at INTEGER NOT NULL,
    PRIMARY KEY (platform, chat_id)
  );
  CREATE TABLE spam_reports_v11 (
    id INTEGER PRIMARY KEY,
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
    next_attempt_at INTEGER,
    created_at INTEGER NOT NULL,
    updated_at INTEGER NOT NULL,
    chain TEXT NOT NULL,
    UNIQUE (platform, user_id, chain, wallet, contract, token_id, kind)
  );
  INSERT INTO spam_reports_v11 SELECT *, 'ethereum' FROM spam_reports;
  DROP TABLE spam_reports;
  ALTER TABLE spam_reports_v11 RENAME TO spam_reports;
  CREATE INDEX spam_reports_chat ON spam_reports (platform, chat_id, created_at);
  CREATE INDEX spam_reports_due ON spam_reports (status, next_attempt_at);
  `,
  // 12: channels' scheduled digests, and one run row per (digest, slot): claiming the row before
  // sending is what makes a slot post once across restarts and instances
  `
  CREATE TABLE digests (
    id INTEGER PRIMARY KEY,
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
    created_at INTEGER NOT NULL
  );
  CREATE INDEX digests_chat ON digests (platform, chat_id);

  CREATE TABLE digest_runs (
    digest_id INTEGER NOT NULL REFERENCES digests (id) ON DELETE CASCADE,
    slot INTEGER NOT NULL,
    status TEXT NOT NULL CHECK (status IN ('sending', 'sent', 'failed')),
    attempts INTEGER NOT NULL DEFAULT 0,
    claimed_by TEXT,
    claimed_until INTEGER,
    last_error TEXT,
    finished_at INTEGER,
    PRIMARY KEY (digest_id, slot)
  );
  `,
  // 13: who minted. The minter's behavior label is stored with the contract (looked up once, every
  // channel's alert shows it); a subscription hides bad actors' contracts or shows them marked;
  // alerts suppressed in a channel (members reported the contract as spam) are kept, with whether
  // the channel was told why, so the note is posted once.
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
    noted INTEGER NOT NULL,
    suppressed_at INTEGER NOT NULL,
    PRIMARY KEY (platform, chat_id, chain, contract)
  );
  CREATE INDEX spam_reports_chat_contract ON spam_reports (platform, chat_id, contract);
  `,
  // 14: watches (issue 18): a channel watches a collection (owner count, whale share) or a wallet
  // (new NFTs). `state` is what the checker last saw (JSON, with when it looked), `pending` the post
  // it owes, written with the state that caused it: a restart neither loses nor repeats a post.
  `
  CREATE TABLE watches (
    id INTEGER PRIMARY KEY AUTOINCREMENT,
    platform TEXT NOT NULL,
    chat_id TEXT NOT NULL,
    chain TEXT NOT NULL,
    kind TEXT NOT NULL CHECK (kind IN ('collection', 'wallet')),
    target TEXT NOT NULL,
    label TEXT NOT NULL,
    owners_percent REAL,
    whales_points REAL,
    state TEXT,
    pending TEXT,
    created_by TEXT NOT NULL,
    created_at INTEGER NOT NULL,
    UNIQUE (platform, chat_id, chain, kind, target)
  );
  CREATE INDEX watches_chat ON watches (platform, chat_id);
  `,
  // 15: channel rules (/alerts): a subscription's filters, quiet hours and digest mode as JSON
  // (NULL: none); an alert held by them (quiet hours, digest mode) is sent in one digest with the
  // others held for the same time.
  `
  ALTER TABLE subscriptions ADD COLUMN rules TEXT;
  ALTER TABLE outbox ADD COLUMN held INTEGER NOT NULL DEFAULT 0;
  CREATE INDEX seen_contracts_seen ON seen_contracts (chain, seen_at);
  `,
  // 16: watches and digests pause like subscriptions when their chat refuses the bot (issue 25):
  // when and why, shown in /watch list and /digest list; a paused one is neither read nor sent.
  `
  ALTER TABLE watches ADD COLUMN paused_at INTEGER;
  ALTER TABLE watches ADD COLUMN pause_reason TEXT;
  ALTER TABLE digests ADD COLUMN paused_at INTEGER;
  ALTER TABLE digests ADD COLUMN pause_reason TEXT;
  `,
  // 17: proved wallets (issue 27): up to 10 per person, each with the signed message and signature
  // that prove it; the wallets linked before (on the person's word) are kept as not proved
  // (proved_at NULL, no chain). And the one-time /verify links: only the token's SHA-256.
  provedWalletsMigration("INTEGER"),
  // 18: gates (issue 29): a Discord role or a Telegram group for the people whose proved wallets
  // pass the gate's criteria; each person's standing with a gate, and the gate's log.
  gatesMigration("sqlite"),
  // 19: a wallet is one person's on each platform (issue 34): duplicates resolved, the latest
  // proof keeping it; and each /verify link keeps the message it issued.
  WALLET_OWNER_MIGRATION,
  // 20: the pause belongs to the chat (issue 34): a chat that refuses the bot pauses every
  // feature's work for it (alerts, digests, watches' reads) until the bot is used there again.
  // Each chat's earliest row pause moves to chat_pauses; the rows' own columns go.
  chatPausesMigration("sqlite"),
  // 21: grants owed (issue 34): a person who passed a gate whose grant met a transient platform
  // error, tried again by the re-check job.
  owedGrantsMigration("sqlite"),
  // 22: the outbound module's waits (issue 35): a chat whose post failed is not sent to again
  // before its wait ends, and its failed tries are counted across restarts.
  sendWaitsMigration("sqlite"),
  // 23: a /verify link keeps the community it was asked from and the person's name (issue 36):
  // a proof makes them one of its members, named as the platform named them.
  VERIFY_LINK_PLACE_MIGRATION,
  // 24: wallet proof for everyone (issue 37): how each wallet was proved and on which chains, the
  // names a /verify page shows, and delegations read from delegate.xyz's registry.
  walletProofsMigration("INTEGER"),
];
