/**
 * Each gate criterion in plain words, for /gate list, /gate test and the log (what the manager
 * typed is read in src/gates/criteria.ts). Collection names come from the resolver, never from
 * what was typed.
 */

import { KNOWN_CHAINS } from "../chains.ts";
import { behaviorLabel, formatDecimal } from "../core/format.ts";
import type { GateCriterion } from "./types.ts";

/** A chain's name for people. */
export function chainWords(chain: string): string {
  return KNOWN_CHAINS[chain]?.name ?? chain;
}

const symbolOf = (chain: string) => KNOWN_CHAINS[chain]?.symbol ?? "";

/** A criterion in plain words: "holds at least 1 Azuki on Ethereum". */
export function describeCriterion(c: GateCriterion): string {
  const on = `on ${chainWords(c.chain)}`;
  switch (c.kind) {
    case "holds":
      return `holds at least ${c.min.toLocaleString("en-US")} ${c.name ?? c.contract} ${on}`;
    case "behavior": {
      const names = c.behaviors.map(behaviorLabel);
      const list =
        names.length <= 1
          ? (names[0] ?? "")
          : `${names.slice(0, -1).join(", ")} or ${names.at(-1)}`;
      return `${c.not ? "behavior is not" : "behavior is"} ${list} ${on}`;
    }
    case "spend": {
      const symbol = symbolOf(c.chain);
      const parts: string[] = [];
      if (c.volumeGte !== undefined)
        parts.push(`NFT purchase volume at least ${formatDecimal(c.volumeGte)} ${symbol}`.trim());
      if (c.priceAvgGte !== undefined)
        parts.push(`average NFT price at least ${formatDecimal(c.priceAvgGte)} ${symbol}`.trim());
      if (c.collectionsGte !== undefined)
        parts.push(`owns NFTs of at least ${c.collectionsGte} collections`);
      if (c.lastPurchaseDaysLte !== undefined)
        parts.push(
          `bought an NFT within ${c.lastPurchaseDaysLte} day${c.lastPurchaseDaysLte === 1 ? "" : "s"}`,
        );
      return `one wallet: ${parts.join(", ")} ${on}`;
    }
  }
}
