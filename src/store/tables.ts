/**
 * The tables the stores written once (src/store/query.ts) read and write, as Kysely types them.
 * Times are epoch milliseconds (INTEGER in SQLite, BIGINT read as a number in PostgreSQL).
 * The schema itself is made by each backend's migrations (schema-parity.test.ts keeps them alike).
 */
export interface Tables {
  seen_updates: { source: string; update_id: number | bigint | string; seen_at: number };
  chat_settings: { platform: string; chat_id: string; chain: string | null; updated_at: number };
  kv: { key: string; value: string };
  leases: { name: string; holder: string; expires_at: number };
  send_waits: {
    stream: string;
    platform: string;
    chat_id: string;
    attempts: number;
    wait_until: number;
    reason: string;
  };
  chat_pauses: { platform: string; chat_id: string; paused_at: number; pause_reason: string };
  subscriptions: { id: number; platform: string; chat_id: string; chain: string };
}
