import { CALLS_PER_WALLET, readWallet } from "./reads.ts";
import { type InsightsService, READ_TTL_MS, WANTED_FOR_MS } from "./service.ts";
import type { WalletRead } from "./store.ts";
import type { Community } from "./types.ts";
import { MIN_PEOPLE } from "./types.ts";

/** How long a community whose wallets were all read is left alone. */
const IDLE_MS = 10 * 60_000;

/**
 * Reads up to `wallets` wallets not read within a day, of the communities asked for lately (the
 * most recent first), and takes the day's snapshot of those that have none; how many wallets it
 * read. Called by the job on its lease, within its share of the upstream budget.
 */
/**
 * How many wallets a round of `tickMs` reads: its part of the minute's calls, and at least one
 * wallet's worth while the minute's budget has it (else a small INSIGHTS_CALLS_PER_MINUTE, under
 * a wallet's calls a round, would read nothing, ever).
 */
export function walletsThisRound(perMinute: number, left: number, tickMs: number): number {
  const part = Math.max(CALLS_PER_WALLET, Math.ceil((perMinute * tickMs) / 60_000));
  return Math.floor(Math.min(left, part) / CALLS_PER_WALLET);
}

export async function readSome(
  service: InsightsService,
  wallets: number,
  signal: AbortSignal,
): Promise<number> {
  const at = service.now();
  let done = 0;
  for (const { platform, place, chain } of await service.store.wanted(at - WANTED_FOR_MS)) {
    if (signal.aborted || done >= wallets) break;
    const key = `${platform}:${place}:${chain}`;
    // All read at the last look: not looked at again for a while (a new member ends the wait).
    if ((service.idle.get(key) ?? 0) > at) continue;
    const community: Community = { platform, id: place, channelId: place };
    const people = await service.people(community, chain);
    if (people.length >= MIN_PEOPLE)
      await service.aggregates(community, chain, signal).catch((error: unknown) => {
        service.failures++;
        service.logger.warn(
          { err: error, platform, chain },
          "could not take a community's snapshot",
        );
      });
    const addresses = [...new Set(people.flatMap((p) => p.wallets))];
    let unread = 0;
    for (let i = 0; i < addresses.length && done < wallets && !signal.aborted; i += 500) {
      // A turn of the event loop between slices: commands answer meanwhile.
      await new Promise((resolve) => setImmediate(resolve));
      const slice = addresses.slice(i, i + 500);
      const fresh = await service.store.freshAddresses(chain, slice, at - READ_TTL_MS);
      for (const address of slice) {
        if (done >= wallets || signal.aborted) break;
        if (fresh.has(address)) continue;
        unread++;
        service.walletCalls += CALLS_PER_WALLET;
        const read: WalletRead = await readWallet(
          service.api(chain),
          address,
          service.now(),
          signal,
        );
        await service.store.putWalletRead(chain, read);
        done++;
      }
    }
    if (unread === 0 && !signal.aborted) service.idle.set(key, at + IDLE_MS);
  }
  if (done > 0) service.forget();
  return done;
}
