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
import type { PgDb, Queryable } from "./db.ts";

/**
 * Keeps a proved wallet unless the person has too many others, moving it from the platform's
 * account that held it (issue 34); inside a transaction. The person's advisory lock makes two
 * instances proving at once count one after the other (a count under READ COMMITTED alone would
 * let both see 9 and make 11); the address's, taken second, makes two accounts proving one wallet
 * at once move it one after the other (else the second would meet the unique index and fail).
 */
async function keepProved(client: Queryable, wallet: ProvedWallet): Promise<KeptWallet | "full"> {
  const { platform, userId, address } = wallet;
  await client.query("SELECT pg_advisory_xact_lock(hashtext($1))", [
    `wallets:${platform}:${userId}`,
  ]);
  const { rows } = await client.query<{ count: string; present: string }>(
    `SELECT COUNT(*) AS count, COUNT(*) FILTER (WHERE address = $3) AS present
     FROM wallets WHERE platform = $1 AND user_id = $2`,
    [platform, userId, address],
  );
  const present = Number(rows[0]?.present ?? 0) > 0;
  if (!present && Number(rows[0]?.count ?? 0) >= MAX_WALLETS_PER_PERSON) return "full";
  await client.query("SELECT pg_advisory_xact_lock(hashtext($1))", [
    `wallet:${platform}:${address}`,
  ]);
  const moved = await client.query<{ user_id: string }>(
    `DELETE FROM wallets WHERE platform = $1 AND address = $2 AND user_id <> $3
       AND proved_at IS NOT NULL RETURNING user_id`,
    [platform, address, userId],
  );
  await client.query(
    `INSERT INTO wallets (platform, user_id, address, chain, label, proved_at, message, signature, linked_at)
     VALUES ($1, $2, $3, $4, $5, $6, $7, $8, $6)
     ON CONFLICT (platform, user_id, address) DO UPDATE SET chain = excluded.chain,
       label = excluded.label, proved_at = excluded.proved_at, message = excluded.message,
       signature = excluded.signature`,
    [
      platform,
      userId,
      address,
      wallet.chain,
      wallet.label,
      wallet.provedAt,
      wallet.message,
      wallet.signature,
    ],
  );
  return { kept: present ? "updated" : "added", movedFrom: moved.rows.map((row) => row.user_id) };
}

/** A person's wallets, proved (with their proof) or linked before proofs. */
export class PgWalletStore implements WalletStore {
  constructor(private readonly db: PgDb) {}

  async list(platform: string, userId: string): Promise<PersonWallet[]> {
    const { rows } = await this.db.query<WalletRow>(
      `SELECT ${WALLET_COLUMNS} FROM wallets WHERE platform = $1 AND user_id = $2 ${WALLET_ORDER}`,
      [platform, userId],
    );
    return rows.map(walletOf);
  }

  async addProved(wallet: ProvedWallet): Promise<"added" | "updated" | "full"> {
    const kept = await this.db.tx((client) => keepProved(client, wallet));
    return kept === "full" ? kept : kept.kept;
  }

  async remove(platform: string, userId: string, address: string): Promise<number> {
    const result =
      address === "all"
        ? await this.db.query("DELETE FROM wallets WHERE platform = $1 AND user_id = $2", [
            platform,
            userId,
          ])
        : await this.db.query(
            "DELETE FROM wallets WHERE platform = $1 AND user_id = $2 AND address = $3",
            [platform, userId, address.toLowerCase()],
          );
    return result.rowCount ?? 0;
  }

  async reportWallet(platform: string, userId: string): Promise<PersonWallet | undefined> {
    const { rows } = await this.db.query<WalletRow>(
      `SELECT ${WALLET_COLUMNS} FROM wallets WHERE platform = $1 AND user_id = $2 AND proved_at IS NOT NULL ${WALLET_ORDER} LIMIT 1`,
      [platform, userId],
    );
    return rows[0] && walletOf(rows[0]);
  }

  async link(
    platform: string,
    userId: string,
    address: string,
    label: string,
    now: number,
  ): Promise<void> {
    const lower = address.toLowerCase();
    await this.db.tx(async (client) => {
      await client.query(
        "DELETE FROM wallets WHERE platform = $1 AND user_id = $2 AND proved_at IS NULL AND address <> $3",
        [platform, userId, lower],
      );
      await client.query(
        `INSERT INTO wallets (platform, user_id, address, chain, label, linked_at) VALUES ($1, $2, $3, '', $4, $5)
         ON CONFLICT (platform, user_id, address) DO UPDATE SET label = excluded.label, linked_at = excluded.linked_at`,
        [platform, userId, lower, label, now],
      );
    });
  }

  async unlink(platform: string, userId: string): Promise<boolean> {
    return (await this.remove(platform, userId, "all")) > 0;
  }

  async find(platform: string, userId: string): Promise<LinkedWallet | undefined> {
    return linkedOf(await this.list(platform, userId));
  }
}

/** The /verify links (their tokens' hashes) and their pending challenges. */
export class PgVerifyLinkStore implements VerifyLinkStore {
  constructor(private readonly db: PgDb) {}

  async create(link: VerifyLinkRow): Promise<void> {
    await this.db.query(
      `INSERT INTO verify_links (${VERIFY_LINK_COLUMNS}) VALUES ($1, $2, $3, $4, $5, $6, $7, $8, $9, $10, $11, $12)`,
      verifyLinkValues(link),
    );
  }

  async find(tokenHash: string): Promise<VerifyLinkRow | undefined> {
    const { rows } = await this.db.query<VerifyLinkDbRow>(
      `SELECT ${VERIFY_LINK_COLUMNS} FROM verify_links WHERE token_hash = $1`,
      [tokenHash],
    );
    return rows[0] && verifyLinkOf(rows[0]);
  }

  async setNonce(
    tokenHash: string,
    nonce: string,
    address: string,
    now: number,
    challenge: string,
  ): Promise<boolean> {
    const result = await this.db.query(
      `UPDATE verify_links SET nonce = $1, nonce_address = $2, challenge = $5
       WHERE token_hash = $3 AND used_at IS NULL AND expires_at > $4`,
      [nonce, address, tokenHash, now, challenge],
    );
    return (result.rowCount ?? 0) > 0;
  }

  async complete(
    tokenHash: string,
    nonce: string,
    wallet: ProvedWallet,
    now: number,
  ): Promise<KeptWallet | "used" | "full"> {
    return unlessFull(() =>
      this.db.tx(async (client): Promise<KeptWallet | "used"> => {
        const used = await client.query(
          `UPDATE verify_links SET used_at = $1, confirm = NULL
           WHERE token_hash = $2 AND used_at IS NULL AND nonce = $3 AND expires_at > $1`,
          [now, tokenHash, nonce],
        );
        if ((used.rowCount ?? 0) === 0) return "used";
        const kept = await keepProved(client, wallet);
        // Throwing rolls the link's use back: a person with too many wallets keeps the link.
        if (kept === "full") throw new WalletsFull();
        return kept;
      }),
    );
  }

  async prune(now: number, before: number): Promise<number> {
    return this.db.tx(async (client) => {
      await client.query(
        "UPDATE verify_links SET confirm = NULL WHERE expires_at <= $1 AND confirm IS NOT NULL",
        [now],
      );
      const result = await client.query("DELETE FROM verify_links WHERE expires_at < $1", [before]);
      return result.rowCount ?? 0;
    });
  }
}
