import type { Chain } from "../chains.ts";
import type { Logger } from "../log.ts";
import { cutText } from "../strings.ts";
import { findChain } from "./chain-option.ts";
import type { CollectionRefresher } from "./collection-refresh.ts";
import type { AnyCommand, Invocation } from "./command.ts";
import { short } from "./format.ts";
import type { KnownCollections } from "./known-collections.ts";

/** What suggestions read of the runtime (the Runtime is one). */
export interface SuggestionSource {
  readonly chains: readonly Chain[];
  readonly defaultChain: Chain;
  readonly refreshers: ReadonlyMap<string, CollectionRefresher>;
  find(name: string): AnyCommand | undefined;
  chainFor(
    invocation: Pick<Invocation, "platform" | "chat">,
    requested: string | undefined,
    logger?: Logger,
  ): Promise<Chain>;
  collectionsOf(chain: Pick<Chain, "id">): KnownCollections;
}

/**
 * Suggestions while typing an option with an autocomplete source (at most 25), from the chain
 * the interaction names so far, else the chat's (as last seen), else the first. With several
 * chains each suggestion names its chain (see Runtime.autocomplete).
 */
export async function collectionSuggestions(
  runtime: SuggestionSource,
  logger: Logger,
  name: string,
  option: string,
  text: string,
  where: { chain?: string | undefined; chat?: Pick<Invocation, "platform" | "chat"> },
): Promise<{ name: string; value: string }[]> {
  const source = runtime.find(name)?.options[option]?.autocomplete;
  if (source !== "collection") return [];
  // The chain named so far, else the chat's as a command there would read it (one small read
  // of its settings, well within Discord's 3 s), else the first.
  const chain =
    (where.chain ? findChain(runtime.chains, where.chain) : undefined) ??
    (where.chat ? await runtime.chainFor(where.chat, undefined, logger) : runtime.defaultChain);
  const found = runtime.collectionsOf(chain).search(text, 25);
  // Discord wants the answer within 3 s: nothing waits, but the next keystroke may find more.
  if (found.length === 0) void runtime.refreshers.get(chain.id)?.refreshForMiss();
  const suffix = runtime.chains.length > 1 ? ` · ${chain.name}` : "";
  return found.map((collection) => ({
    name: cutText(
      `${collection.name || "Unnamed collection"} (${short(collection.address)})${suffix}`,
      100,
      {
        unit: "utf16",
        mark: "",
      },
    ),
    value: collection.address,
  }));
}
