import {
  linkedOf,
  unlessFull,
  VERIFY_LINK_COLUMNS,
  type VerifyLinkDbRow,
  verifyLinkOf,
  verifyLinkValues,
  WALLET_COLUMNS,
  WALLET_ORDER,
  type WalletRow,
  WalletsFull,
  walletOf,
} from "../rows-wallet.ts";
import {
  type KeptWallet,
  type LinkedWallet,
  MAX_WALLETS_PER_PERSON,
  type PersonWallet,
  type ProvedWallet,
  type VerifyLinkRow,
  type VerifyLinkStore,
  type WalletStore,
} from "../types.ts";
import type { Db } from "./db.ts";

/**
 * Keeps a proved wallet unless the person has too many others, moving it from the platform's
 * account that held it (issue 34); runs inside a transaction.
 */
function keepProved(db: Db, wallet: ProvedWallet): KeptWallet | "full" {
  const { platform, userId, address } = wallet;
  // One read, as PostgreSQL's keepProved: the person's count and whether this address is in it.
  const { count, present } = db
    .prepare<[string, string, string], { count: number; present: number }>(
      `SELECT COUNT(*) AS count, COUNT(*) FILTER (WHERE address = ?) AS present
       FROM wallets WHERE platform = ? AND user_id = ?`,
    )
    .get(address, platform, userId) as { count: number; present: number };
  if (!present && count >= MAX_WALLETS_PER_PERSON) return "full";
  const movedFrom = db
    .prepare<[string, string, string], { user_id: string }>(
      `DELETE FROM wallets WHERE platform = ? AND address = ? AND user_id <> ?
         AND proved_at IS NOT NULL RETURNING user_id`,
    )
    .all(platform, address, userId)
    .map((row) => row.user_id);
  db.prepare(
    `INSERT INTO wallets (platform, user_id, address, chain, label, proved_at, message, signature, linked_at)
     VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?)
     ON CONFLICT (platform, user_id, address) DO UPDATE SET chain = excluded.chain,
       label = excluded.label, proved_at = excluded.proved_at, message = excluded.message,
       signature = excluded.signature`,
  ).run(
    platform,
    userId,
    address,
    wallet.chain,
    wallet.label,
    wallet.provedAt,
    wallet.message,
    wallet.signature,
    wallet.provedAt,
  );
  return { kept: present ? "updated" : "added", movedFrom };
}

/** A person's wallets, proved (with their proof) or linked before proofs. */
export class SqliteWalletStore implements WalletStore {
  constructor(private readonly db: Db) {}

  async list(platform: string, userId: string): Promise<PersonWallet[]> {
    return this.db
      .prepare<[string, string], WalletRow>(
        `SELECT ${WALLET_COLUMNS} FROM wallets WHERE platform = ? AND user_id = ? ${WALLET_ORDER}`,
      )
      .all(platform, userId)
      .map(walletOf);
  }

  async addProved(wallet: ProvedWallet): Promise<"added" | "updated" | "full"> {
    const kept = this.db.transaction(() => keepProved(this.db, wallet)).immediate();
    return kept === "full" ? kept : kept.kept;
  }

  async remove(platform: string, userId: string, address: string): Promise<number> {
    const { changes } =
      address === "all"
        ? this.db
            .prepare("DELETE FROM wallets WHERE platform = ? AND user_id = ?")
            .run(platform, userId)
        : this.db
            .prepare("DELETE FROM wallets WHERE platform = ? AND user_id = ? AND address = ?")
            .run(platform, userId, address.toLowerCase());
    return changes;
  }

  async reportWallet(platform: string, userId: string): Promise<PersonWallet | undefined> {
    const row = this.db
      .prepare<[string, string], WalletRow>(
        `SELECT ${WALLET_COLUMNS} FROM wallets WHERE platform = ? AND user_id = ? AND proved_at IS NOT NULL ${WALLET_ORDER} LIMIT 1`,
      )
      .get(platform, userId);
    return row && walletOf(row);
  }

  async link(
    platform: string,
    userId: string,
    address: string,
    label: string,
    now: number,
  ): Promise<void> {
    const lower = address.toLowerCase();
    this.db
      .transaction(() => {
        this.db
          .prepare(
            "DELETE FROM wallets WHERE platform = ? AND user_id = ? AND proved_at IS NULL AND address <> ?",
          )
          .run(platform, userId, lower);
        this.db
          .prepare(
            `INSERT INTO wallets (platform, user_id, address, chain, label, linked_at) VALUES (?, ?, ?, '', ?, ?)
             ON CONFLICT (platform, user_id, address) DO UPDATE SET label = excluded.label, linked_at = excluded.linked_at`,
          )
          .run(platform, userId, lower, label, now);
      })
      .immediate();
  }

  async unlink(platform: string, userId: string): Promise<boolean> {
    return (await this.remove(platform, userId, "all")) > 0;
  }

  async find(platform: string, userId: string): Promise<LinkedWallet | undefined> {
    return linkedOf(await this.list(platform, userId));
  }
}

/** The /verify links (their tokens' hashes) and their pending challenges. */
export class SqliteVerifyLinkStore implements VerifyLinkStore {
  constructor(private readonly db: Db) {}

  async create(link: VerifyLinkRow): Promise<void> {
    this.db
      .prepare(
        `INSERT INTO verify_links (${VERIFY_LINK_COLUMNS}) VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?)`,
      )
      .run(...verifyLinkValues(link));
  }

  async find(tokenHash: string): Promise<VerifyLinkRow | undefined> {
    const row = this.db
      .prepare<[string], VerifyLinkDbRow>(
        `SELECT ${VERIFY_LINK_COLUMNS} FROM verify_links WHERE token_hash = ?`,
      )
      .get(tokenHash);
    return row && verifyLinkOf(row);
  }

  async setNonce(
    tokenHash: string,
    nonce: string,
    address: string,
    now: number,
    challenge: string,
  ): Promise<boolean> {
    return (
      this.db
        .prepare(
          `UPDATE verify_links SET nonce = ?, nonce_address = ?, challenge = ?
           WHERE token_hash = ? AND used_at IS NULL AND expires_at > ?`,
        )
        .run(nonce, address, challenge, tokenHash, now).changes > 0
    );
  }

  async complete(
    tokenHash: string,
    nonce: string,
    wallet: ProvedWallet,
    now: number,
  ): Promise<KeptWallet | "used" | "full"> {
    const db = this.db;
    const run = db.transaction((): KeptWallet | "used" => {
      const used = db
        .prepare(
          `UPDATE verify_links SET used_at = ?, confirm = NULL
           WHERE token_hash = ? AND used_at IS NULL AND nonce = ? AND expires_at > ?`,
        )
        .run(now, tokenHash, nonce, now);
      if (used.changes === 0) return "used";
      const kept = keepProved(db, wallet);
      // Throwing rolls the link's use back: a person with too many wallets keeps the link.
      if (kept === "full") throw new WalletsFull();
      return kept;
    });
    return unlessFull(() => run.immediate());
  }

  async prune(now: number, before: number): Promise<number> {
    const db = this.db;
    return db
      .transaction(() => {
        db.prepare(
          "UPDATE verify_links SET confirm = NULL WHERE expires_at <= ? AND confirm IS NOT NULL",
        ).run(now);
        return db.prepare("DELETE FROM verify_links WHERE expires_at < ?").run(before).changes;
      })
      .immediate();
  }
}
