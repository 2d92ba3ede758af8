import type { PersonDelegation } from "../store/types.ts";

/**
 * Adds to each person's wallets the cold wallets that delegated all their rights to one of them on
 * `chain` (issue 37), as they count (a cold wallet is one account's on a platform).
 */
export function withDelegated(
  wallets: Map<string, { address: string; provedAt: number }[]>,
  delegated: ReadonlyMap<string, readonly PersonDelegation[]>,
  chain: string,
): void {
  for (const [userId, list] of delegated)
    for (const d of list) {
      const own = wallets.get(userId);
      if (!own || !d.counts || d.contract !== "" || d.chain !== chain) continue;
      if (own.some((w) => w.address === d.hot) && !own.some((w) => w.address === d.cold))
        own.push({ address: d.cold, provedAt: own[0]?.provedAt ?? 0 });
    }
}
