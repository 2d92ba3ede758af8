import {
  type Address,
  type Checked,
  checkAddress,
  checkEnsName,
  checkTokenId,
  checkWallet,
  type EnsName,
  invalid,
  quoteInput,
  type TokenId,
  valid,
} from "../api/validate.ts";
import { KNOWN_CHAINS } from "../chains.ts";
import { parseShortForm } from "./known-collections.ts";
import type { Lookup } from "./resolver.ts";

/**
 * What people paste for a wallet, a collection or an NFT: bare addresses (with or without 0x),
 * or links of block explorers and marketplaces that hold one, often wrapped in <> (Discord's
 * no-embed form) or spaces. One reader, readPasted, for every option that takes them; the chain
 * a link names is checked against the chain asked when the option is resolved (resolver.ts).
 */

export interface NftRef {
  contract: Address;
  tokenId?: TokenId;
}

/** What the page a link opens shows: a wallet, a collection, one NFT, or an address (either). */
export type PageKind = "address" | "wallet" | "collection" | "item";

export type Pasted =
  | {
      kind: "address";
      address: Address;
      page: PageKind;
      tokenId?: TokenId;
      /** The chain id the link names (its explorer, or a chain in its path). */
      chain?: string;
      /** The link's host (without www.); absent for a bare address. */
      host?: string;
    }
  /** A collection link that holds its name (opensea.io/collection/<slug>): looked up by name. */
  | { kind: "slug"; slug: string; site: string; host: string; chain?: string }
  /** An ENS app link: the name it shows. */
  | { kind: "name"; name: string; host: string };

/** A value read from a link: what the option takes, and where the link says it lives. */
export interface Linked<T> {
  linked: T;
  chain?: string;
  host: string;
}

export function isLinked(value: unknown): value is Linked<unknown> {
  return typeof value === "object" && value !== null && "linked" in value;
}

/** Removes surrounding whitespace and one layer of <>, as Discord users do to suppress embeds. */
export function unwrap(input: string): string {
  const trimmed = input.trim();
  return trimmed.startsWith("<") && trimmed.endsWith(">") ? trimmed.slice(1, -1).trim() : trimmed;
}

/**
 * An address pasted without its 0x: 40 hex digits with a letter among them (40 decimal digits may
 * be a token id).
 */
export function isBareAddress(text: string): boolean {
  return /^(?=[0-9]*[a-f])[0-9a-f]{40}$/i.test(text);
}

/** Longer than any link to a wallet, a collection or an NFT (a token id has at most 78 digits). */
const MAX_LINK_LENGTH = 1000;

/** Each known chain's explorer host: etherscan.io is ethereum, optimistic.etherscan.io optimism. */
const EXPLORER_HOSTS: ReadonlyMap<string, string> = new Map(
  Object.entries(KNOWN_CHAINS).map(([id, chain]) => [new URL(chain.explorer).host, id]),
);

/**
 * Chain words in marketplace paths: each chain's id, the word its OpenSea path uses ("matic"),
 * and the short forms other marketplaces use.
 */
const CHAIN_WORDS: ReadonlyMap<string, string> = new Map([
  ...Object.entries(KNOWN_CHAINS).flatMap(([id, chain]) => [
    [id, id] as const,
    ...(chain.marketplace ? [[chain.marketplace.split("/").at(-1) ?? id, id] as const] : []),
  ]),
  ["eth", "ethereum"],
  ["mainnet", "ethereum"],
  ["matic", "polygon"],
  ["arb", "arbitrum"],
  ["arbitrum-one", "arbitrum"],
  ["op", "optimism"],
]);

/** Marketplaces whose links hold addresses (host → the name messages use). */
const MARKETPLACES: ReadonlyMap<string, string> = new Map([
  ["opensea.io", "OpenSea"],
  ["blur.io", "Blur"],
  ["magiceden.io", "Magic Eden"],
  ["magiceden.us", "Magic Eden"],
  ["looksrare.org", "LooksRare"],
  ["rarible.com", "Rarible"],
  ["x2y2.io", "X2Y2"],
]);

const ENS_APP_HOSTS = new Set(["app.ens.domains", "ens.app"]);

/** Path words before an address that say the page is a person's. */
const PROFILE_WORDS = new Set([
  "u",
  "user",
  "users",
  "account",
  "accounts",
  "profile",
  "portfolio",
]);
/** Path words before a name that say it is a collection's. */
const COLLECTION_WORDS = new Set(["collection", "collections"]);

/** The sites a refusal names: every known chain's explorer (as EXPLORER_HOSTS reads them). */
const KNOWN_SITES = `a block explorer (${[...EXPLORER_HOSTS.keys()].join(", ")}), OpenSea, Blur, Magic Eden, LooksRare or Rarible`;

function addressAt(
  text: string,
  tokenText: string | undefined,
  page: PageKind,
  where: { chain?: string | undefined; host?: string; what: string },
): Checked<Pasted> {
  const address = checkAddress(text, where.what);
  if (!address.ok) return address;
  const base = {
    kind: "address" as const,
    address: address.value,
    page,
    ...(where.chain ? { chain: where.chain } : {}),
    ...(where.host ? { host: where.host } : {}),
  };
  if (tokenText === undefined) return valid(base);
  const tokenId = checkTokenId(tokenText);
  return tokenId.ok ? valid({ ...base, page: "item", tokenId: tokenId.value }) : tokenId;
}

/** /address/0x…, /token/0x…(?a=id), /nft/0x…/id */
function readExplorer(
  url: URL,
  segments: string[],
  where: { chain: string; host: string; what: string },
): Checked<Pasted> {
  const [page, address = "", token] = segments;
  const { host } = where;
  if (page === "address") return addressAt(address, undefined, "address", where);
  if (page === "nft") return addressAt(address, token, "item", where);
  if (page === "token") {
    const holder = url.searchParams.get("a") ?? "";
    return addressAt(address, /^\d+$/.test(holder) ? holder : undefined, "collection", where);
  }
  return invalid(
    "invalid_link",
    `That ${host} link shows no address of a wallet or a collection: paste an /address/ or /token/ link, or the address.`,
  );
}

/**
 * Marketplaces put the address somewhere in the path (after words like assets, item, u or
 * collections, and maybe a chain), then maybe the token id (as the next part, or after a colon).
 */
function readMarketplace(
  segments: string[],
  host: string,
  site: string,
  what: string,
): Checked<Pasted> {
  const at = segments.findIndex((segment) => /^0x[0-9a-f]*(:\d+)?$/i.test(segment));
  const before = (at < 0 ? segments : segments.slice(0, at)).map((word) => word.toLowerCase());
  const chain = before.map((word) => CHAIN_WORDS.get(word)).find((id) => id !== undefined);
  const words = before.filter((word) => !CHAIN_WORDS.has(word));
  if (at >= 0) {
    const [address = "", colonToken] = (segments[at] ?? "").split(":");
    const next = segments[at + 1];
    const token = colonToken ?? (next !== undefined && /^\d+$/.test(next) ? next : undefined);
    const page: PageKind =
      words.length === 0 || words.some((word) => PROFILE_WORDS.has(word)) ? "wallet" : "collection";
    return addressAt(address, token, page, { chain, host, what });
  }
  const named = before.findIndex((word) => COLLECTION_WORDS.has(word));
  const slug = named >= 0 ? segments.slice(named + 1).find((word) => !CHAIN_WORDS.has(word)) : "";
  if (slug && /^[\w.-]{1,100}$/.test(slug))
    return valid({ kind: "slug", slug, site, host, ...(chain ? { chain } : {}) });
  if (segments.length === 1 || words.some((word) => PROFILE_WORDS.has(word)))
    return invalid(
      "invalid_link",
      `That ${site} profile link holds a user name, not the wallet's address: paste the address (0x…) or an ENS name.`,
    );
  return invalid(
    "invalid_link",
    `I found no address in that ${site} link: paste the address (0x…), or a link to a profile, a collection or an item.`,
  );
}

/**
 * Reads an address or a link; undefined when the text is neither (a name, an ENS name, the
 * bot's short form `0x1234…abcd`): those are for the option to read. A link of an unknown site,
 * one that holds no address, or any link with spaces, markup or control characters in it is
 * refused with what to paste instead.
 */
export function readPasted(input: string, what = "address"): Checked<Pasted> | undefined {
  const value = unwrap(input);
  if (isBareAddress(value)) return addressAt(`0x${value}`, undefined, "address", { what });
  if (/^0x[0-9a-f]*$/i.test(value)) return addressAt(value, undefined, "address", { what });
  if (!/^[a-z][a-z0-9+.-]{0,20}:\/\//i.test(value)) return undefined;
  if (value.length > MAX_LINK_LENGTH)
    return invalid(
      "input_too_long",
      `That link is too long (at most ${MAX_LINK_LENGTH} characters).`,
    );
  // Nothing a link copied from a browser holds: spaces, controls, markup, quotes.
  if (/[\s\u0000-\u001f\u007f-\u009f<>"'`\\{}|^[\]]/u.test(value))
    return invalid(
      "invalid_link",
      "That link has characters a link cannot have (spaces, quotes or markup): paste the link alone, or the address.",
    );
  let url: URL;
  try {
    url = new URL(value);
  } catch {
    return invalid(
      "invalid_link",
      `${quoteInput(value, 80)} is not a link I can read: paste the address (0x…).`,
    );
  }
  if (url.protocol !== "https:" && url.protocol !== "http:")
    return invalid(
      "invalid_link",
      "Only http(s) links hold a wallet or a collection: paste the address (0x…).",
    );
  const host = url.hostname.toLowerCase().replace(/^www\./, "");
  const segments = url.pathname.split("/").filter((segment) => segment.length > 0);
  const chain = EXPLORER_HOSTS.get(host);
  if (chain) return readExplorer(url, segments, { chain, host, what });
  const site = MARKETPLACES.get(host);
  if (site) return readMarketplace(segments, host, site, what);
  if (ENS_APP_HOSTS.has(host)) {
    const name = segments[0] === "name" ? segments[1] : segments[0];
    let decoded: string | undefined;
    try {
      decoded = name === undefined ? undefined : decodeURIComponent(name);
    } catch {
      // A broken %-escape: no name to read.
    }
    if (decoded) return valid({ kind: "name", name: decoded, host });
  }
  return invalid(
    "invalid_link",
    `I cannot read links of ${quoteInput(host, 60)}: paste the address (0x…), or a link of ${KNOWN_SITES}.`,
  );
}

/** What a page is, for "That link is to …, not a wallet". */
const PAGE_WORDS: Record<PageKind, string> = {
  address: "an address",
  wallet: "a wallet's profile",
  collection: "a collection",
  item: "an NFT",
};

function linkedOrPlain<T>(pasted: { chain?: string; host?: string }, value: T): T | Linked<T> {
  return pasted.host === undefined
    ? value
    : { linked: value, ...(pasted.chain ? { chain: pasted.chain } : {}), host: pasted.host };
}

const MAX_NAME_LENGTH = 200;

/**
 * An NFT, or a collection (with no token id): an address or a link (checked here, with the
 * precise complaint when it is neither), or text to look up (a name, a symbol, initials, a
 * prefix, the short form `0x1234…abcd`, the name in a marketplace's collection link).
 */
export function checkNftArg(input: string): Checked<NftRef | Linked<NftRef> | Lookup> {
  const value = unwrap(input);
  if (parseShortForm(value)) return valid({ lookup: value });
  const pasted = readPasted(value, "contract address");
  if (pasted) {
    if (!pasted.ok) return pasted;
    const read = pasted.value;
    if (read.kind === "slug") return valid({ lookup: read.slug, slug: read.site });
    if (read.kind === "name" || read.page === "wallet")
      return invalid(
        "wrong_link_kind",
        `That link is to ${read.kind === "name" ? "an ENS name" : PAGE_WORDS.wallet}, not a collection: paste the collection's address, name or link (/wallet takes this one).`,
      );
    const ref: NftRef =
      read.tokenId === undefined
        ? { contract: read.address }
        : { contract: read.address, tokenId: read.tokenId };
    return valid(linkedOrPlain(read, ref));
  }
  if (value.length === 0)
    return invalid(
      "missing_argument",
      "Give a collection: its name or symbol, its address, or a link.",
    );
  if (Array.from(value).length > MAX_NAME_LENGTH) {
    return invalid(
      "input_too_long",
      `That is longer than any collection name (at most ${MAX_NAME_LENGTH} characters).`,
    );
  }
  return valid({ lookup: value });
}

/** A collection: as checkNftArg reads it, the token id of an item link left out. */
export function checkCollectionArg(input: string): Checked<Address | Linked<Address> | Lookup> {
  const ref = checkNftArg(input);
  if (!ref.ok) return ref;
  const read = ref.value;
  if ("lookup" in read) return valid(read);
  if (isLinked(read)) return valid({ ...read, linked: read.linked.contract });
  return valid(read.contract);
}

/**
 * A wallet: an address (with or without 0x), an ENS name, the short form of one the bot showed
 * in this chat, or a link to an address, a profile or an ENS name.
 */
export function checkWalletArg(
  input: string,
): Checked<Address | EnsName | Linked<Address> | Lookup> {
  const value = unwrap(input);
  if (parseShortForm(value)) return valid({ lookup: value });
  const pasted = readPasted(value, "wallet address");
  if (!pasted) return checkWallet(value);
  if (!pasted.ok) return pasted;
  const read = pasted.value;
  if (read.kind === "name") return checkEnsName(read.name);
  if (read.kind === "slug" || read.page === "collection" || read.page === "item")
    return invalid(
      "wrong_link_kind",
      `That link is to ${read.kind === "slug" ? PAGE_WORDS.collection : PAGE_WORDS[read.page]}, not a wallet: paste the wallet's address, ENS name, or a link to its address or profile.`,
    );
  return valid(linkedOrPlain(read, read.address));
}

/** The chain the first link among these words names (for OptionDef.chainOf). */
export function linkedChainOf(raw: string): string | undefined {
  for (const word of raw.split(/[\s,;]+/)) {
    const read = readPasted(word);
    if (read?.ok && read.value.kind !== "name" && read.value.chain) return read.value.chain;
  }
  return undefined;
}
