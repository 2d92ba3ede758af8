import type { Sql } from "../query.ts";
import type { DelegationStore, PersonDelegation } from "../types.ts";

/** How many hot wallets or people one query names (SQLite binds at most 32,766 values). */
const BATCH = 500;

const batches = <T>(items: readonly T[]): T[][] => {
  const out: T[][] = [];
  for (let i = 0; i < items.length; i += BATCH) out.push(items.slice(i, i + BATCH));
  return out;
};

/**
 * Delegations read from delegate.xyz's registry (issue 37), and which of them count for whom. On a
 * platform a cold wallet is one account's, as a proved wallet is (issue 34): else one cold wallet
 * delegating to ten hot wallets would admit ten accounts. The account that proved the cold wallet
 * itself keeps it; else the account whose delegation the bot saw first (then the lowest user id).
 */
export class SqlDelegationStore implements DelegationStore {
  constructor(private readonly sql: Sql) {}

  async put(
    hot: string,
    chain: string,
    found: readonly { cold: string; contract: string }[],
    at: number,
  ): Promise<void> {
    const { q } = this.sql;
    const keys = new Set(found.map((d) => `${d.cold} ${d.contract}`));
    await this.sql.transaction(
      function* (tx) {
        const known = yield* tx.all(
          q
            .selectFrom("wallet_delegations")
            .select(["cold", "contract"])
            .where("hot", "=", hot)
            .where("chain", "=", chain),
        );
        const kept = new Set(known.map((row) => `${row.cold} ${row.contract}`));
        for (const row of known)
          if (!keys.has(`${row.cold} ${row.contract}`))
            yield* tx.run(
              q
                .deleteFrom("wallet_delegations")
                .where("hot", "=", hot)
                .where("chain", "=", chain)
                .where("cold", "=", row.cold)
                .where("contract", "=", row.contract),
            );
        const added = found.filter((d) => !kept.has(`${d.cold} ${d.contract}`));
        const unique = [...new Map(added.map((d) => [`${d.cold} ${d.contract}`, d])).values()];
        for (const part of batches(unique))
          yield* tx.run(
            q
              .insertInto("wallet_delegations")
              .values(part.map((d) => ({ hot, chain, ...d, first_seen: at })))
              .onConflict((conflict) => conflict.doNothing()),
          );
        yield* tx.run(
          q
            .insertInto("wallet_delegation_reads")
            .values({ hot, chain, read_at: at })
            .onConflict((conflict) =>
              conflict.columns(["hot", "chain"]).doUpdateSet({ read_at: at }),
            ),
        );
      },
      { immediate: true },
    );
  }

  async readAt(hot: readonly string[]): Promise<Map<string, number>> {
    const out = new Map<string, number>();
    for (const part of batches([...new Set(hot)])) {
      const rows = await this.sql.all(
        this.sql.q
          .selectFrom("wallet_delegation_reads")
          .select(["hot", "chain", "read_at"])
          .where("hot", "in", part),
      );
      for (const row of rows) out.set(`${row.hot} ${row.chain}`, Number(row.read_at));
    }
    return out;
  }

  async ofPeople(
    platform: string,
    userIds: readonly string[],
  ): Promise<Map<string, PersonDelegation[]>> {
    const { q } = this.sql;
    const out = new Map<string, PersonDelegation[]>();
    const mine: (PersonDelegation & { userId: string })[] = [];
    for (const part of batches([...new Set(userIds)])) {
      const rows = await this.sql.all(
        q
          .selectFrom("wallet_delegations as d")
          .innerJoin("wallets as w", "w.address", "d.hot")
          .select(["w.user_id", "d.hot", "d.cold", "d.contract", "d.chain", "d.first_seen"])
          .where("w.platform", "=", platform)
          .where("w.proved_at", "is not", null)
          .where("w.user_id", "in", part)
          .orderBy("d.first_seen")
          .orderBy("d.cold"),
      );
      for (const row of rows)
        mine.push({
          userId: row.user_id,
          hot: row.hot,
          cold: row.cold,
          contract: row.contract,
          chain: row.chain,
          firstSeen: Number(row.first_seen),
          counts: true,
        });
    }
    if (mine.length === 0) return out;
    const colds = [...new Set(mine.map((d) => d.cold))];
    // Who proved each cold wallet itself, on this platform.
    const provedBy = new Map<string, string>();
    // Each cold wallet's first delegation to an account of this platform: [first seen, user id].
    const firstTo = new Map<string, [number, string]>();
    for (const part of batches(colds)) {
      const proved = await this.sql.all(
        q
          .selectFrom("wallets")
          .select(["address", "user_id"])
          .where("platform", "=", platform)
          .where("proved_at", "is not", null)
          .where("address", "in", part),
      );
      for (const row of proved) provedBy.set(row.address, row.user_id);
      const delegated = await this.sql.all(
        q
          .selectFrom("wallet_delegations as d")
          .innerJoin("wallets as w", "w.address", "d.hot")
          .select(["d.cold", "w.user_id", "d.first_seen"])
          .where("w.platform", "=", platform)
          .where("w.proved_at", "is not", null)
          .where("d.cold", "in", part),
      );
      for (const row of delegated) {
        const seen = Number(row.first_seen);
        const before = firstTo.get(row.cold);
        if (!before || seen < before[0] || (seen === before[0] && row.user_id < before[1]))
          firstTo.set(row.cold, [seen, row.user_id]);
      }
    }
    for (const { userId, ...delegation } of mine) {
      const prover = provedBy.get(delegation.cold);
      const first = firstTo.get(delegation.cold);
      const heldElsewhere =
        prover === userId
          ? "own"
          : prover !== undefined
            ? "proved"
            : first && first[1] !== userId
              ? "earlier"
              : undefined;
      const list = out.get(userId) ?? [];
      list.push(
        heldElsewhere
          ? { ...delegation, counts: false, heldElsewhere }
          : { ...delegation, counts: true },
      );
      out.set(userId, list);
    }
    return out;
  }
}
