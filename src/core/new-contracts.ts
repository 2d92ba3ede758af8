import type { CallOptions } from "../api/call.ts";
import type { ApiClient } from "../api/client.ts";
import { NFT_CONTRACT_TYPES } from "../api/schemas.ts";

/** Contracts read per page when counting new ones (endpoint 10's largest page). */
const COUNT_PAGE = 500;

export interface NewContracts {
  count: number;
  /** More were listed than the pages read. */
  capped: boolean;
}

/**
 * Contracts minted in (`since`, `until`] (endpoint 10 with blockTimestampGt, the upper bound
 * applied here: a mint dated past it, as year 9999, does not count; one without a mint time
 * does), counted by address over at most `pages` pages; `capped` when there were more. A page
 * that starts where the last did is a service ignoring the offset: nothing more to read. The
 * same question asked again (a digest's slot, /contracts within a minute) is the answer cache's.
 */
export async function countNewContracts(
  api: Pick<ApiClient, "foundational">,
  window: { since: number; until: number },
  options: {
    contractTypes?: readonly string[] | undefined;
    pages: number;
    call: CallOptions;
  },
): Promise<NewContracts> {
  const seen = new Set<string>();
  let previousFirst: string | undefined;
  for (let page = 0; page < options.pages; page++) {
    const { contracts } = await api.foundational.contracts(
      {
        contractTypes: options.contractTypes ?? NFT_CONTRACT_TYPES,
        blockTimestampGt: new Date(window.since).toISOString(),
        limit: COUNT_PAGE,
        ...(page > 0 ? { offset: page * COUNT_PAGE } : {}),
      },
      options.call,
    );
    const first = contracts[0]?.address.toLowerCase();
    if (page > 0 && first === previousFirst) return { count: seen.size, capped: false };
    previousFirst = first;
    for (const contract of contracts) {
      const minted = Date.parse(contract.mintEvent?.blockTimestamp ?? "");
      if (!(minted > window.until)) seen.add(contract.address.toLowerCase());
    }
    // A short page is the last.
    if (contracts.length < COUNT_PAGE) return { count: seen.size, capped: false };
  }
  return { count: seen.size, capped: true };
}
