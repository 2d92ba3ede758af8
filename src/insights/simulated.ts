import type { ApiClient } from "../api/client.ts";
import type { Chain } from "../chains.ts";
import type { Person } from "./figures.ts";
import type { SimulatedCommunity } from "./service.ts";

/** The console's community: this many of the simulator's wallets, one member each. */
const MEMBERS = 300;
const PAGE = 100;

/**
 * The console's chat as a community (`npm start` on the simulator, issue 36): the owners of the
 * simulator's busiest collections, read through the data service like any wallet, as members
 * "Simulated member N". Made up and marked so; never stored (a later real deployment on the same
 * data folder has no such members). Every 20th keeps their wallets private, as real people may.
 */
export function simulatedCommunity(
  mark: string,
  apis: ReadonlyMap<string, ApiClient>,
): SimulatedCommunity {
  const made = new Map<string, Promise<Person[]>>();
  const startedAt = Date.now();
  const build = async (chain: Chain, signal?: AbortSignal): Promise<Person[]> => {
    const api = apis.get(chain.id);
    if (!api) return [];
    const top = await api.collections.top(
      "METRIC_SALES_VOLUME",
      "DURATION_30_DAYS",
      { limit: 5 },
      { signal },
    );
    const wallets = new Set<string>();
    for (const collection of top.collections) {
      for (let offset = 0; wallets.size < MEMBERS && offset < 3 * PAGE; offset += PAGE) {
        const page = await api.collections.ownersList(
          collection.contractAddress,
          { limit: PAGE, offset },
          { signal },
        );
        for (const owner of page.owner) if (wallets.size < MEMBERS) wallets.add(owner.address);
        if (page.owner.length < PAGE) break;
      }
      if (wallets.size >= MEMBERS) break;
    }
    return [...wallets].map((address, i) => ({
      userId: `simulated-${i + 1}`,
      name: `Simulated member ${i + 1}`,
      // Joined over the last 90 days, the first the earliest.
      since: startedAt - Math.round(((MEMBERS - i) / MEMBERS) * 90 * 86_400_000),
      wallets: [address.toLowerCase()],
      private: (i + 1) % 20 === 0,
      simulated: true,
    }));
  };
  return {
    mark,
    platform: "console",
    place: "console",
    people(chain, signal) {
      let people = made.get(chain.id);
      if (!people) {
        people = build(chain, signal);
        made.set(chain.id, people);
        // A failure is not kept: the next ask tries again.
        people.catch(() => made.delete(chain.id));
      }
      return people;
    },
  };
}
