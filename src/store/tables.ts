/**
 * The tables the stores written once (src/store/query.ts) read and write, as Kysely types them.
 * Times are epoch milliseconds (INTEGER in SQLite, BIGINT read as a number in PostgreSQL); a
 * column typed `Generated` is filled by the database (an id) or by its default.
 * The schema itself is made by each backend's migrations (schema-parity.test.ts keeps them alike).
 */
import type { Generated } from "kysely";

/** Written as a number or as text; SQLite's INTEGER affinity and PostgreSQL's BIGINT take both. */
type Id = number | bigint | string;

export interface Tables {
  button_actions: {
    n: Generated<number>;
    secret: Uint8Array;
    platform: string;
    chat_id: string;
    user_id: string;
    first_seq: number;
    count: number;
    actions: string;
    expires_at: number;
  };
  button_actions_v1: {
    id: string;
    platform: string;
    chat_id: string;
    user_id: string;
    action: string;
    expires_at: number;
  };
  chat_pauses: { platform: string; chat_id: string; paused_at: number; pause_reason: string };
  chat_settings: { platform: string; chat_id: string; chain: string | null; updated_at: number };
  deliveries: { subscription_id: number; contract: string; delivered_at: number };
  digest_runs: {
    digest_id: number;
    slot: number;
    status: "sending" | "sent" | "failed";
    attempts: Generated<number>;
    claimed_by: string | null;
    claimed_until: number | null;
    last_error: string | null;
    finished_at: number | null;
  };
  digests: {
    id: Generated<number>;
    platform: string;
    chat_id: string;
    chain: string;
    cadence: "daily" | "weekly";
    weekday: number | null;
    time: string;
    zone: string;
    metric: string;
    period: string;
    created_by: string;
    created_at: number;
  };
  failed_alerts: {
    subscription_id: number;
    contract: string;
    attempts: number;
    last_error: string | null;
    failed_at: number;
  };
  gate_grants: {
    gate_id: number;
    user_id: string;
    action: "granted" | "approved";
    reason: string;
    since: number;
    attempts: number;
    retry_at: number;
    last_error: string;
  };
  gate_log: {
    id: Generated<number>;
    gate_id: number;
    user_id: string;
    at: number;
    action: string;
    reason: string;
  };
  gate_members: {
    gate_id: number;
    user_id: string;
    status: "granted" | "grace" | "pending";
    since: number;
    failing_since: number | null;
    grace_until: number | null;
    told_at: number | null;
    user_chat_id: string | null;
    decide_by: number | null;
    last_checked_at: number | null;
  };
  gates: {
    id: Generated<number>;
    platform: string;
    chat_id: string;
    target: string;
    criteria: string;
    created_by: string;
    created_at: number;
    paused_at: number | null;
    pause_reason: string | null;
  };
  known_collections: {
    chain: string;
    address: string;
    name: string;
    symbol: string;
    name_key: string;
    top_rank: number | null;
    source: "top" | "contracts" | "answer";
    seen_at: number;
  };
  kv: { key: string; value: string };
  leases: { name: string; holder: string; expires_at: number };
  outbox: {
    id: Generated<number>;
    subscription_id: number;
    chain: string;
    contract: string;
    note: string | null;
    due_at: number;
    attempts: Generated<number>;
    last_error: string | null;
    created_at: number;
    claimed_until: number | null;
    claimed_by: string | null;
    held: Generated<number>;
  };
  seen_contracts: {
    chain: string;
    address: string;
    name: string;
    types: string;
    minter: string | null;
    tx_hash: string | null;
    minted_at: string | null;
    seen_at: number;
    minter_behavior: string | null;
  };
  seen_updates: { source: string; update_id: Id; seen_at: number };
  send_waits: {
    stream: string;
    platform: string;
    chat_id: string;
    attempts: number;
    wait_until: number;
    reason: string;
  };
  spam_reports: {
    id: Generated<number>;
    platform: string;
    chat_id: string;
    user_id: string;
    user_name: string;
    wallet: string;
    contract: string;
    token_id: string;
    kind: "spam" | "not_spam";
    feedback: string | null;
    status: "sending" | "sent" | "queued" | "unsupported" | "failed" | "unknown";
    upstream: string | null;
    attempts: Generated<number>;
    next_attempt_at: number | null;
    created_at: number;
    updated_at: number;
    chain: string;
  };
  subscriptions: {
    id: Generated<number>;
    platform: string;
    chat_id: string;
    chain: string;
    types: string;
    created_by: string;
    created_at: number;
    bad_actors: Generated<"hide" | "show">;
    rules: string | null;
  };
  suppressed_alerts: {
    platform: string;
    chat_id: string;
    chain: string;
    contract: string;
    reports: number;
    /** BOOLEAN in PostgreSQL, 0 or 1 in SQLite (which binds a boolean as 0 or 1). */
    noted: number | boolean;
    suppressed_at: number;
  };
  verify_links: {
    token_hash: string;
    platform: string;
    user_id: string;
    chat_id: string;
    confirm: string | null;
    chain: string;
    created_at: number;
    expires_at: number;
    nonce: string | null;
    nonce_address: string | null;
    used_at: number | null;
    challenge: string | null;
    place: string | null;
    user_name: string | null;
    place_name: string | null;
    bot_name: string | null;
  };
  wallet_delegations: {
    hot: string;
    chain: string;
    cold: string;
    /** '' for a delegation of all rights. */
    contract: string;
    first_seen: number;
  };
  wallet_delegation_reads: {
    hot: string;
    chain: string;
    read_at: number;
  };
  wallets: {
    platform: string;
    user_id: string;
    address: string;
    chain: string;
    label: string;
    proved_at: number | null;
    message: string | null;
    signature: string | null;
    linked_at: number;
    /** 'eoa' or 'contract'; NULL: proved before issue 37, told from the signature when read. */
    kind: string | null;
    /** The chains it was proved on, comma-separated; NULL: only `chain`. */
    chains: string | null;
  };
  watches: {
    id: Generated<number>;
    platform: string;
    chat_id: string;
    chain: string;
    kind: "collection" | "wallet";
    target: string;
    label: string;
    owners_percent: number | null;
    whales_points: number | null;
    state: string | null;
    pending: string | null;
    created_by: string;
    created_at: number;
  };
}
