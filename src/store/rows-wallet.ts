import type { LinkedWallet, PersonWallet, VerifyLinkRow } from "./types.ts";

/**
 * The migration that brought proved wallets (issue 27; SQLite's 17, PostgreSQL's 10), the same on
 * both but for the type of times. Fixed once released, like every migration.
 */
export function provedWalletsMigration(time: "INTEGER" | "BIGINT"): string {
  return `
  CREATE TABLE wallets (
    platform TEXT NOT NULL,
    user_id TEXT NOT NULL,
    address TEXT NOT NULL,
    chain TEXT NOT NULL,
    label TEXT NOT NULL,
    proved_at ${time},
    message TEXT,
    signature TEXT,
    linked_at ${time} NOT NULL,
    PRIMARY KEY (platform, user_id, address)
  );
  INSERT INTO wallets (platform, user_id, address, chain, label, proved_at, message, signature, linked_at)
    SELECT platform, user_id, lower(address), '', label, NULL, NULL, NULL, linked_at FROM linked_wallets;
  DROP TABLE linked_wallets;
  CREATE TABLE verify_links (
    token_hash TEXT PRIMARY KEY,
    platform TEXT NOT NULL,
    user_id TEXT NOT NULL,
    chat_id TEXT NOT NULL,
    confirm TEXT,
    chain TEXT NOT NULL,
    created_at ${time} NOT NULL,
    expires_at ${time} NOT NULL,
    nonce TEXT,
    nonce_address TEXT,
    used_at ${time}
  );
  CREATE INDEX verify_links_expires ON verify_links (expires_at);
  `;
}

/**
 * The migration that makes a wallet one person's on each platform (issue 34; SQLite's 19,
 * PostgreSQL's 12), the same on both. An address proved by several accounts of one platform stays
 * with the latest proof (then the latest linked, then the lowest user id: the same answer on every
 * run); the other accounts lose only that row. Rows linked before proofs (proved_at NULL) claim
 * nothing and stay. And each link keeps the SIWE message it issued, which alone may be signed.
 */
export const WALLET_OWNER_MIGRATION = `
  DELETE FROM wallets WHERE proved_at IS NOT NULL AND EXISTS (
    SELECT 1 FROM wallets AS later
    WHERE later.platform = wallets.platform AND later.address = wallets.address
      AND later.proved_at IS NOT NULL AND later.user_id <> wallets.user_id
      AND (later.proved_at > wallets.proved_at
        OR (later.proved_at = wallets.proved_at AND (later.linked_at > wallets.linked_at
          OR (later.linked_at = wallets.linked_at AND later.user_id < wallets.user_id))))
  );
  CREATE UNIQUE INDEX wallets_owner ON wallets (platform, address) WHERE proved_at IS NOT NULL;
  ALTER TABLE verify_links ADD COLUMN challenge TEXT;
  `;

/** Thrown inside a transaction to roll it back when the person has too many wallets. */
export class WalletsFull extends Error {}

/** A link's completion, "full" when it threw WalletsFull (and so changed nothing). */
export async function unlessFull<T>(run: () => T | Promise<T>): Promise<T | "full"> {
  try {
    return await run();
  } catch (error) {
    if (error instanceof WalletsFull) return "full";
    throw error;
  }
}

/** A wallets row as either backend returns it (PostgreSQL's BIGINT comes back as a string). */
export interface WalletRow {
  address: string;
  chain: string;
  label: string;
  proved_at: number | string | null;
  linked_at: number | string;
  kind: string | null;
  chains: string | null;
}

/** The chains a proved wallet was proved on (rows proved before issue 37 name one). */
export function chainsOf(row: { chain: string; chains: string | null }): string[] {
  if (row.chains) return row.chains.split(",").filter((chain) => chain !== "");
  return row.chain === "" ? [] : [row.chain];
}

export function walletOf(row: WalletRow): PersonWallet {
  const proved = row.proved_at !== null;
  return {
    address: row.address,
    chain: row.chain,
    label: row.label,
    provedAt: proved ? Number(row.proved_at) : undefined,
    linkedAt: Number(row.linked_at),
    kind: proved && (row.kind === "eoa" || row.kind === "contract") ? row.kind : undefined,
    chains: proved ? chainsOf(row) : [],
  };
}

/** What /link's find() gave: the most recent wallet, proved or not. */
export function linkedOf(wallets: readonly PersonWallet[]): LinkedWallet | undefined {
  const latest = [...wallets].sort(
    (a, b) => Math.max(b.linkedAt, b.provedAt ?? 0) - Math.max(a.linkedAt, a.provedAt ?? 0),
  )[0];
  return latest && { address: latest.address, label: latest.label, linkedAt: latest.linkedAt };
}

export interface VerifyLinkDbRow {
  token_hash: string;
  platform: string;
  user_id: string;
  chat_id: string;
  confirm: string | null;
  chain: string;
  created_at: number | string;
  expires_at: number | string;
  nonce: string | null;
  nonce_address: string | null;
  used_at: number | string | null;
  challenge: string | null;
  place: string | null;
  user_name: string | null;
  place_name: string | null;
  bot_name: string | null;
}

export function verifyLinkOf(row: VerifyLinkDbRow): VerifyLinkRow {
  return {
    tokenHash: row.token_hash,
    platform: row.platform,
    userId: row.user_id,
    chatId: row.chat_id,
    confirm: row.confirm ?? undefined,
    chain: row.chain,
    createdAt: Number(row.created_at),
    expiresAt: Number(row.expires_at),
    nonce: row.nonce ?? undefined,
    nonceAddress: row.nonce_address ?? undefined,
    usedAt: row.used_at === null ? undefined : Number(row.used_at),
    challenge: row.challenge ?? undefined,
    place: row.place ?? undefined,
    name: row.user_name ?? undefined,
    placeName: row.place_name ?? undefined,
    botName: row.bot_name ?? undefined,
  };
}

/** A /verify link's community and the person's name (issue 36); the same SQL on both databases. */
export const VERIFY_LINK_PLACE_MIGRATION = `
  ALTER TABLE verify_links ADD COLUMN place TEXT;
  ALTER TABLE verify_links ADD COLUMN user_name TEXT;
`;

/**
 * Wallet proof for everyone (issue 37; SQLite's 24, PostgreSQL's 17). A wallet keeps what kind of
 * account signed (an externally owned account's proof holds on every EVM chain, a contract
 * wallet's only where it was checked) and every chain it was proved on; NULL kind: proved before,
 * told from its signature when first read. A /verify link keeps the community's and the bot's
 * names for the page. Delegations (delegate.xyz v2) read from each chain's registry: a cold wallet
 * `cold` that gave `hot` all its rights (contract '') or those for one contract; one row per
 * delegation, replaced at each read of (hot, chain), the read's time kept beside.
 */
export function walletProofsMigration(time: "INTEGER" | "BIGINT"): string {
  return `
  ALTER TABLE wallets ADD COLUMN kind TEXT;
  ALTER TABLE wallets ADD COLUMN chains TEXT;
  ALTER TABLE verify_links ADD COLUMN place_name TEXT;
  ALTER TABLE verify_links ADD COLUMN bot_name TEXT;
  CREATE TABLE wallet_delegations (
    hot TEXT NOT NULL,
    chain TEXT NOT NULL,
    cold TEXT NOT NULL,
    contract TEXT NOT NULL,
    first_seen ${time} NOT NULL,
    PRIMARY KEY (hot, chain, cold, contract)
  );
  CREATE INDEX wallet_delegations_cold ON wallet_delegations (cold);
  CREATE TABLE wallet_delegation_reads (
    hot TEXT NOT NULL,
    chain TEXT NOT NULL,
    read_at ${time} NOT NULL,
    PRIMARY KEY (hot, chain)
  );
  `;
}
