import { readWallet } from "./reads.ts";
import { type InsightsService, READ_TTL_MS, WANTED_FOR_MS } from "./service.ts";
import type { WalletRead } from "./store.ts";
import type { Community } from "./types.ts";
import { MIN_PEOPLE } from "./types.ts";

/**
 * Reads up to `wallets` wallets not read within a day, of the communities asked for lately (the
 * most recent first), and takes the day's snapshot of those that have none; how many wallets it
 * read. Called by the job on its lease, within its share of the upstream budget.
 */
export async function readSome(
  service: InsightsService,
  wallets: number,
  signal: AbortSignal,
): Promise<number> {
  const at = service.now();
  let done = 0;
  for (const { platform, place, chain } of await service.store.wanted(at - WANTED_FOR_MS)) {
    if (signal.aborted || done >= wallets) break;
    const community: Community = { platform, id: place, channelId: place };
    const people = await service.people(community, chain);
    if (people.length >= MIN_PEOPLE)
      await service.aggregates(community, chain, signal).catch((error: unknown) => {
        service.logger.warn(
          { err: error, platform, chain },
          "could not take a community's snapshot",
        );
      });
    const addresses = [...new Set(people.flatMap((p) => p.wallets.map((w) => w.toLowerCase())))];
    for (let i = 0; i < addresses.length && done < wallets && !signal.aborted; i += 500) {
      const slice = addresses.slice(i, i + 500);
      const fresh = await service.store.walletReads(chain, slice, at - READ_TTL_MS);
      for (const address of slice) {
        if (done >= wallets || signal.aborted) break;
        if (fresh.has(address)) continue;
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
  }
  if (done > 0) service.forget();
  return done;
}
