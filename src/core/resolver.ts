import { type Address, quoteInput } from "../api/validate.ts";
import { type Chain, chainList, KNOWN_CHAINS } from "../chains.ts";
import { cutText } from "../strings.ts";
import { within } from "../within.ts";
import type { CollectionRefresher } from "./collection-refresh.ts";
import { short } from "./format.ts";
import {
  type IndexedCollection,
  type KnownCollections,
  NAMING_KINDS,
  parseShortForm,
} from "./known-collections.ts";
import type { RecentWallets } from "./recent-wallets.ts";

/** What an option's parser leaves to look up before the command runs: a name, a short form. */
export interface Lookup {
  readonly lookup: string;
  /** The name came from this site's collection link (opensea.io/collection/<name>). */
  readonly slug?: string;
}

export function isLookup(value: unknown): value is Lookup {
  return typeof value === "object" && value !== null && "lookup" in value;
}

/** One of the answers a person may pick: the button shows `label`, and gives `value` as the option. */
export interface Choice {
  label: string;
  value: string;
}

/**
 * A looked-up option: found, or a question back (several match: pick one), or nothing found
 * (with what may have been meant). The runtime turns the last two into a reply with buttons.
 */
export type Resolution<T> =
  | { kind: "found"; value: T }
  | { kind: "choose"; text: string; choices: Choice[] }
  | { kind: "unknown"; text: string; choices: Choice[] };

export function found<T>(value: T): Resolution<T> {
  return { kind: "found", value };
}

/** At most this many buttons to pick from. */
const MAX_CHOICES = 5;
const ADDRESS_WORKS = "A contract address (0x…) or an OpenSea or Etherscan link always works.";

/** A name as a suggestion shows it: long ones cut. */
function shownName(collection: IndexedCollection): string {
  const name = collection.name.trim();
  if (name.length === 0) return "Unnamed collection";
  return cutText(name, 40);
}

function choiceOf(collection: IndexedCollection): Choice {
  return {
    label: `${shownName(collection)} (${short(collection.address)})`,
    value: collection.address,
  };
}

type Decision =
  | { kind: "one"; collection: IndexedCollection }
  | { kind: "several"; collections: IndexedCollection[] }
  | { kind: "maybe"; collections: IndexedCollection[] }
  | { kind: "none" };

export interface NameResolverDeps {
  collections: KnownCollections;
  refresher: CollectionRefresher | undefined;
  wallets: RecentWallets;
  /** The chat the invocation comes from (`platform:id`): wallets are remembered per chat. */
  chat: string;
  /** The chain the invocation reads, and whether it was asked for (else the chat's or the first). */
  chain?: Pick<Chain, "id" | "name">;
  chainAsked?: boolean;
  /** Every chain served. */
  chains?: readonly Pick<Chain, "id">[];
}

/** A chain's name for messages, served or not. */
const chainName = (id: string) => KNOWN_CHAINS[id]?.name ?? id;

/**
 * Turns what people type for a collection (a name, a symbol, initials, a prefix, the short form
 * the bot prints) into an address, through the collection index; and a wallet's short form into
 * the wallet this chat was shown. A name the index misses refreshes it once before the answer.
 */
export class NameResolver {
  constructor(private readonly deps: NameResolverDeps) {}

  /**
   * A value read from a link, when the link is on the chain this invocation reads (or names no
   * chain); else what to do instead.
   */
  linked<T>(link: { linked: T; chain?: string }): Resolution<T> {
    const { chain, chainAsked, chains } = this.deps;
    if (link.chain === undefined || chain === undefined || link.chain === chain.id)
      return found(link.linked);
    const on = `That link is on ${chainName(link.chain)}`;
    const served = chains?.some((c) => c.id === link.chain) ?? false;
    return {
      kind: "unknown",
      text: !served
        ? `${on}, which this bot does not serve (it serves ${chainList(chains ?? [chain])}).`
        : chainAsked
          ? `${on}, and you asked about ${chain.name}: leave the chain out, or ask with chain:${link.chain}.`
          : `${on}, and this reads ${chain.name}: ask with chain:${link.chain}.`,
      choices: [],
    };
  }

  async collection(text: string, slug?: string): Promise<Resolution<Address>> {
    let decision = this.decide(text);
    let stale = false;
    if (decision.kind === "none" || decision.kind === "maybe") {
      const refreshing = this.deps.refresher?.refreshForMiss();
      if (refreshing) {
        stale = !(await refreshing);
        decision = this.decide(text);
      }
    }
    const asked = quoteInput(text);
    switch (decision.kind) {
      case "one":
        return found(decision.collection.address);
      case "several": {
        const count = decision.collections.length;
        return {
          kind: "choose",
          text: `${asked} matches ${count} collections I know${count > MAX_CHOICES ? ` (the ${MAX_CHOICES} best known are below)` : ""}: which one? More of the name, or the address, also works.`,
          choices: decision.collections.slice(0, MAX_CHOICES).map(choiceOf),
        };
      }
      case "maybe":
        return {
          kind: "unknown",
          text: `I know no collection named ${asked}. Did you mean one of these? ${ADDRESS_WORKS}`,
          choices: decision.collections.slice(0, MAX_CHOICES).map(choiceOf),
        };
      case "none": {
        const staleNote = stale ? " (I could not update my list of collections just now.)" : "";
        if (slug) {
          return {
            kind: "unknown",
            text: `That ${slug} collection link names ${asked}, and I know no collection by that name: paste the collection's contract address (0x…), or a link to one of its items.${staleNote}`,
            choices: [],
          };
        }
        if (parseShortForm(text)) {
          return {
            kind: "unknown",
            text: `I know no collection at ${asked}: the short form works for collections I have shown. Paste the whole address (0x and 40 hex digits), or the name.${staleNote}`,
            choices: [],
          };
        }
        const near = this.deps.collections.closest(text);
        const guess = near.length > 0 ? ` Did you mean ${near.map(shownName).join(", ")}?` : "";
        return {
          kind: "unknown",
          text: `I know no collection named ${asked}.${guess} ${ADDRESS_WORKS}${staleNote}`,
          choices: near.map(choiceOf),
        };
      }
    }
  }

  /**
   * The name the index has for a collection. An index never filled yet (the first command on a
   * chain whose refresher waits for its first use) is filled first, for at most `waitMs`: a
   * collection asked for by its address or an explorer link is then named as the bot knows it.
   */
  async collectionName(address: string, waitMs = 5_000): Promise<string | undefined> {
    const known = this.deps.collections.name(address);
    if (known !== undefined) return known;
    const filling = this.deps.refresher?.firstFill();
    if (!filling) return undefined;
    await within(filling, waitMs);
    return this.deps.collections.name(address);
  }

  /** A wallet's short form: the one wallet with it among those shown in this chat lately. */
  wallet(text: string): Resolution<Address> {
    const form = parseShortForm(text);
    const shown = form ? this.deps.wallets.matching(this.deps.chat, form) : [];
    const [only] = shown;
    if (only && shown.length === 1) return found(only);
    const asked = quoteInput(text);
    return {
      kind: "unknown",
      text:
        shown.length === 0
          ? `${asked} is a shortened address, and I have not shown a wallet like it in this chat lately: paste the whole address (0x and 40 hex digits) or an ENS name.`
          : `${asked} matches ${shown.length} wallets I showed in this chat: paste the whole address.`,
      choices: [],
    };
  }

  /** Wallets a reply shows, so their short forms can be given back in this chat. */
  rememberWallets(addresses: Iterable<string>): void {
    this.deps.wallets.remember(this.deps.chat, addresses);
  }

  private decide(text: string): Decision {
    const form = parseShortForm(text);
    if (form) {
      const collections = this.deps.collections.withShortForm(form);
      const [first] = collections;
      if (!first) return { kind: "none" };
      return collections.length === 1
        ? { kind: "one", collection: first }
        : { kind: "several", collections };
    }
    const matches = this.deps.collections.match(text);
    const best = matches[0];
    if (!best) return { kind: "none" };
    if (!NAMING_KINDS.has(best.kind))
      return { kind: "maybe", collections: matches.map((m) => m.collection) };
    const named = matches.filter((m) => m.kind === best.kind).map((m) => m.collection);
    return named.length === 1
      ? { kind: "one", collection: best.collection }
      : { kind: "several", collections: named };
  }
}
