/** Which contracts a subscription wants: rules the stores apply at enqueue and /alerts test shows. */

import type { BadActorRule, SubscriptionTypes } from "../store/types.ts";
import { BAD_ACTOR } from "./minters.ts";

const ERC721_TYPES = new Set(["TYPE_ERC721", "TYPE_ERC721_LEGACY", "TYPE_CRYPTOPUNKS"]);

/** Whether a subscription wants a contract: erc721 covers the legacy and CryptoPunks types too. */
export function wants(types: SubscriptionTypes, contractTypes: readonly string[]): boolean {
  if (types === "all") return true;
  if (types === "erc1155") return contractTypes.includes("TYPE_ERC1155");
  return contractTypes.some((type) => ERC721_TYPES.has(type));
}

/** Whether a subscription leaves out a contract for its minter: bad actors' unless it shows them. */
export function hides(rule: BadActorRule | undefined, minterBehavior: string | undefined): boolean {
  return minterBehavior === BAD_ACTOR && rule !== "show";
}
