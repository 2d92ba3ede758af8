/** Which contracts a subscription wants: rules the stores apply at enqueue and /alerts test shows. */

import { BAD_ACTOR } from "./minters.ts";
import { type AlertRules, filteredBy } from "./rules.ts";
import type { BadActorRule, NewContract, SubscriptionTypes } from "./store/types.ts";

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

/**
 * Why a subscription leaves a new contract out, or undefined when it is posted: its types, a bad
 * actor's mint it hides, or one of its rules' filters (minter behaviors, name keywords). The
 * stores ask it when they queue alerts, and /alerts test when it replays the last hour.
 */
export function leftOutBy(
  subscription: {
    types: SubscriptionTypes;
    badActors?: BadActorRule | undefined;
    rules?: AlertRules | undefined;
  },
  contract: NewContract,
): "types" | "bad" | "minter" | "keyword" | undefined {
  if (!wants(subscription.types, contract.types)) return "types";
  if (hides(subscription.badActors, contract.minterBehavior)) return "bad";
  return subscription.rules ? filteredBy(subscription.rules, contract) : undefined;
}
