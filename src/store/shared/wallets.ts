import { sql as raw } from "kysely";
import type { Sql, Tx, Work } from "../query.ts";
import {
  chainsOf,
  linkedOf,
  unlessFull,
  verifyLinkOf,
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
  type WalletKind,
  type WalletStore,
} from "../types.ts";

/** A transaction-scoped PostgreSQL advisory lock on a text key (hashed as the old stores did). */
const advisoryLock = (sql: Sql, key: string) =>
  sql.raw(raw`SELECT pg_advisory_xact_lock(hashtext(${key}))`);

/**
 * Keeps a proved wallet unless the person has too many others, moving it from the platform's
 * account that held it (issue 34); runs inside a transaction (IMMEDIATE on SQLite, so the write
 * lock, taken before the count, orders two processes on one file).
 *
 * On PostgreSQL two advisory locks: the person's makes two instances proving at once count one
 * after the other (a count under READ COMMITTED alone would let both see 9 and make 11); the
 * address's, taken second, makes two accounts proving one wallet at once move it one after the
 * other (else the second would meet the unique index and fail). SQLite's one writer needs neither.
 */
function* keepProved(sql: Sql, tx: Tx, wallet: ProvedWallet): Work<KeptWallet | "full"> {
  const { q } = sql;
  const { platform, userId, address } = wallet;
  if (tx.dialect === "postgres") yield* tx.run(advisoryLock(sql, `wallets:${platform}:${userId}`));
  // One read: the person's count and whether this address is in it.
  const mine = yield* tx.first(
    q
      .selectFrom("wallets")
      .select((row) => [
        row.fn.countAll().as("count"),
        row.fn.countAll().filterWhere("address", "=", address).as("present"),
      ])
      .where("platform", "=", platform)
      .where("user_id", "=", userId),
  );
  const present = Number(mine?.present ?? 0) > 0;
  // Every chain it was proved on by this person, this one last (issue 37).
  const before = present
    ? yield* tx.first(
        q
          .selectFrom("wallets")
          .select(["chain", "chains", "proved_at", "kind"])
          .where("platform", "=", platform)
          .where("user_id", "=", userId)
          .where("address", "=", address),
      )
    : undefined;
  const earlier =
    before?.proved_at === null || before === undefined || (before.kind ?? undefined) !== wallet.kind
      ? []
      : chainsOf(before);
  const chains = [...earlier.filter((chain) => chain !== wallet.chain), wallet.chain].join(",");
  if (!present && Number(mine?.count ?? 0) >= MAX_WALLETS_PER_PERSON) return "full";
  if (tx.dialect === "postgres") yield* tx.run(advisoryLock(sql, `wallet:${platform}:${address}`));
  const moved = yield* tx.all(
    q
      .deleteFrom("wallets")
      .where("platform", "=", platform)
      .where("address", "=", address)
      .where("user_id", "<>", userId)
      .where("proved_at", "is not", null)
      .returning("user_id"),
  );
  yield* tx.run(
    q
      .insertInto("wallets")
      .values({
        platform,
        user_id: userId,
        address,
        chain: wallet.chain,
        label: wallet.label,
        proved_at: wallet.provedAt,
        message: wallet.message,
        signature: wallet.signature,
        linked_at: wallet.provedAt,
        kind: wallet.kind ?? null,
        chains,
      })
      .onConflict((conflict) =>
        conflict.columns(["platform", "user_id", "address"]).doUpdateSet((row) => ({
          chain: row.ref("excluded.chain"),
          label: row.ref("excluded.label"),
          proved_at: row.ref("excluded.proved_at"),
          message: row.ref("excluded.message"),
          signature: row.ref("excluded.signature"),
          kind: row.ref("excluded.kind"),
          chains: row.ref("excluded.chains"),
        })),
      ),
  );
  return { kept: present ? "updated" : "added", movedFrom: moved.map((row) => row.user_id) };
}

/** A person's wallets, proved (with their proof) or linked before proofs. */
export class SqlWalletStore implements WalletStore {
  constructor(private readonly sql: Sql) {}

  /** The person's wallets in list()'s order: the most recently proved first, then linked. */
  private ofPerson(platform: string, userId: string) {
    return this.sql.q
      .selectFrom("wallets")
      .select(["address", "chain", "label", "proved_at", "linked_at", "kind", "chains"])
      .where("platform", "=", platform)
      .where("user_id", "=", userId);
  }

  private static ordered<Q extends ReturnType<SqlWalletStore["ofPerson"]>>(query: Q) {
    return query
      .orderBy((row) => row("proved_at", "is", null))
      .orderBy("proved_at", "desc")
      .orderBy("linked_at", "desc")
      .orderBy("address", "asc");
  }

  async list(platform: string, userId: string): Promise<PersonWallet[]> {
    const rows = await this.sql.all(SqlWalletStore.ordered(this.ofPerson(platform, userId)));
    return rows.map(walletOf);
  }

  async addProved(wallet: ProvedWallet): Promise<"added" | "updated" | "full"> {
    const { sql } = this;
    const kept = await sql.transaction((tx) => keepProved(sql, tx, wallet), { immediate: true });
    return kept === "full" ? kept : kept.kept;
  }

  async remove(platform: string, userId: string, address: string): Promise<number> {
    const { q } = this.sql;
    const mine = q
      .deleteFrom("wallets")
      .where("platform", "=", platform)
      .where("user_id", "=", userId);
    return this.sql.run(
      address === "all" ? mine : mine.where("address", "=", address.toLowerCase()),
    );
  }

  async reportWallet(platform: string, userId: string): Promise<PersonWallet | undefined> {
    const row = await this.sql.first(
      SqlWalletStore.ordered(
        this.ofPerson(platform, userId).where("proved_at", "is not", null),
      ).limit(1),
    );
    return row && walletOf(row);
  }

  async link(
    platform: string,
    userId: string,
    address: string,
    label: string,
    now: number,
  ): Promise<void> {
    const { q } = this.sql;
    const lower = address.toLowerCase();
    await this.sql.transaction(
      function* (tx) {
        yield* tx.run(
          q
            .deleteFrom("wallets")
            .where("platform", "=", platform)
            .where("user_id", "=", userId)
            .where("proved_at", "is", null)
            .where("address", "<>", lower),
        );
        yield* tx.run(
          q
            .insertInto("wallets")
            .values({
              platform,
              user_id: userId,
              address: lower,
              chain: "",
              label,
              linked_at: now,
            })
            .onConflict((conflict) =>
              conflict.columns(["platform", "user_id", "address"]).doUpdateSet((row) => ({
                label: row.ref("excluded.label"),
                linked_at: row.ref("excluded.linked_at"),
              })),
            ),
        );
      },
      { immediate: true },
    );
  }

  async unlink(platform: string, userId: string): Promise<boolean> {
    return (await this.remove(platform, userId, "all")) > 0;
  }

  async find(platform: string, userId: string): Promise<LinkedWallet | undefined> {
    return linkedOf(await this.list(platform, userId));
  }

  async proof(
    platform: string,
    userId: string,
    address: string,
  ): Promise<{ message: string; signature: string; chain: string } | undefined> {
    const row = await this.sql.first(
      this.sql.q
        .selectFrom("wallets")
        .select(["message", "signature", "chain"])
        .where("platform", "=", platform)
        .where("user_id", "=", userId)
        .where("address", "=", address.toLowerCase())
        .where("proved_at", "is not", null),
    );
    return row?.message && row.signature
      ? { message: row.message, signature: row.signature, chain: row.chain }
      : undefined;
  }

  async setKind(platform: string, userId: string, address: string, kind: WalletKind) {
    await this.sql.run(
      this.sql.q
        .updateTable("wallets")
        .set({ kind })
        .where("platform", "=", platform)
        .where("user_id", "=", userId)
        .where("address", "=", address.toLowerCase())
        .where("kind", "is", null),
    );
  }
}

/** The /verify links (their tokens' hashes) and their pending challenges. */
export class SqlVerifyLinkStore implements VerifyLinkStore {
  constructor(private readonly sql: Sql) {}

  async create(link: VerifyLinkRow): Promise<void> {
    const { q } = this.sql;
    await this.sql.run(
      q.insertInto("verify_links").values({
        token_hash: link.tokenHash,
        platform: link.platform,
        user_id: link.userId,
        chat_id: link.chatId,
        confirm: link.confirm ?? null,
        chain: link.chain,
        created_at: link.createdAt,
        expires_at: link.expiresAt,
        nonce: link.nonce ?? null,
        nonce_address: link.nonceAddress ?? null,
        used_at: link.usedAt ?? null,
        challenge: link.challenge ?? null,
        place: link.place ?? null,
        user_name: link.name ?? null,
        place_name: link.placeName ?? null,
        bot_name: link.botName ?? null,
      }),
    );
  }

  async find(tokenHash: string): Promise<VerifyLinkRow | undefined> {
    const { q } = this.sql;
    const row = await this.sql.first(
      q
        .selectFrom("verify_links")
        .select([
          "token_hash",
          "platform",
          "user_id",
          "chat_id",
          "confirm",
          "chain",
          "created_at",
          "expires_at",
          "nonce",
          "nonce_address",
          "used_at",
          "challenge",
          "place",
          "user_name",
          "place_name",
          "bot_name",
        ])
        .where("token_hash", "=", tokenHash),
    );
    return row && verifyLinkOf(row);
  }

  async setNonce(
    tokenHash: string,
    nonce: string,
    address: string,
    now: number,
    challenge: string,
  ): Promise<boolean> {
    const { q } = this.sql;
    const changed = await this.sql.run(
      q
        .updateTable("verify_links")
        .set({ nonce, nonce_address: address, challenge })
        .where("token_hash", "=", tokenHash)
        .where("used_at", "is", null)
        .where("expires_at", ">", now),
    );
    return changed > 0;
  }

  async complete(
    tokenHash: string,
    nonce: string,
    wallet: ProvedWallet,
    now: number,
  ): Promise<KeptWallet | "used" | "full"> {
    const { sql } = this;
    const { q } = sql;
    return unlessFull(() =>
      sql.transaction(
        function* (tx): Work<KeptWallet | "used"> {
          // The link is used once: the first completion takes it, any other finds it used.
          const used = yield* tx.run(
            q
              .updateTable("verify_links")
              .set({ used_at: now, confirm: null })
              .where("token_hash", "=", tokenHash)
              .where("used_at", "is", null)
              .where("nonce", "=", nonce)
              .where("expires_at", ">", now),
          );
          if (used === 0) return "used";
          const kept = yield* keepProved(sql, tx, wallet);
          // Throwing rolls the link's use back: a person with too many wallets keeps the link.
          if (kept === "full") throw new WalletsFull();
          return kept;
        },
        { immediate: true },
      ),
    );
  }

  async prune(now: number, before: number): Promise<number> {
    const { q } = this.sql;
    return this.sql.transaction(
      function* (tx) {
        yield* tx.run(
          q
            .updateTable("verify_links")
            .set({ confirm: null })
            .where("expires_at", "<=", now)
            .where("confirm", "is not", null),
        );
        return yield* tx.run(q.deleteFrom("verify_links").where("expires_at", "<", before));
      },
      { immediate: true },
    );
  }
}
