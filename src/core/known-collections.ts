import { distance } from "fastest-levenshtein";
import { type Address, toChecksumAddress } from "../api/validate.ts";
import type { Logger } from "../log.ts";

/**
 * The collections the bot has seen (top lists, new contracts, any answer that names one): what
 * people may call a collection by, and the source of autocomplete suggestions. Matching runs in
 * memory; every change is written through to a store, so a restart starts with what was known.
 */

/** A collection as an answer shows it. */
export interface CollectionSighting {
  address: string;
  name: string;
  symbol?: string | undefined;
}

/** Where the index last saw a collection. */
export type CollectionSource = "top" | "contracts" | "answer";

export interface IndexedCollection {
  address: Address;
  name: string;
  symbol: string;
  /** Best place in the top lists of the last refresh (0 is first); undefined when not ranked. */
  rank: number | undefined;
  source: CollectionSource;
  /** Epoch milliseconds of the last answer that showed it. */
  seenAt: number;
}

/** Where one chain's index is kept between runs. */
export interface CollectionIndexStore {
  load(): Promise<IndexedCollection[]>;
  /** Saves `put` (replacing what is kept for those addresses) and drops `remove`, at once. */
  write(change: { put: readonly IndexedCollection[]; remove: readonly Address[] }): Promise<void>;
}

/**
 * The store's collection index: a collection is known on one chain (the same address may be
 * another contract on another chain), so each chain has its own index. Used directly, it is
 * ethereum's (what the store held before chains).
 */
export interface ChainCollectionIndexStore extends CollectionIndexStore {
  forChain(chain: string): CollectionIndexStore;
}

/** How a text matches a collection, strongest first. */
const MATCH_KINDS = ["exact", "symbol", "initials", "prefix", "word", "contains"] as const;
export type MatchKind = (typeof MATCH_KINDS)[number];

/** Kinds that name a collection when it is the only one matching so: the others only suggest. */
export const NAMING_KINDS: ReadonlySet<MatchKind> = new Set([
  "exact",
  "symbol",
  "initials",
  "prefix",
]);

export interface Match {
  collection: IndexedCollection;
  kind: MatchKind;
}

/** Case, accents, width, spaces and punctuation do not count: "Bored-Ape yacht club" is "boredapeyachtclub". */
export function nameKey(text: string): string {
  return wordsOf(text).join("");
}

function wordsOf(text: string): string[] {
  return text
    .normalize("NFKD")
    .replace(/\p{M}+/gu, "")
    .toLowerCase()
    .split(/[^\p{L}\p{N}]+/u)
    .filter((word) => word.length > 0);
}

/** The parts of an address the bot prints short, `0x1234…abcd` (or typed `0x1234...abcd`). */
export interface ShortForm {
  head: string;
  tail: string;
}

export function parseShortForm(text: string): ShortForm | undefined {
  const match = /^0x([0-9a-f]{2,38})(?:…|\.{2,3})([0-9a-f]{2,38})$/i.exec(text.trim());
  if (!match?.[1] || !match[2] || match[1].length + match[2].length > 40) return undefined;
  return { head: `0x${match[1].toLowerCase()}`, tail: match[2].toLowerCase() };
}

export function matchesShortForm(address: string, form: ShortForm): boolean {
  const lower = address.toLowerCase();
  return lower.startsWith(form.head) && lower.endsWith(form.tail);
}

interface Entry extends IndexedCollection {
  /** When the store last heard of this entry (its `seenAt` there). */
  storedAt: number;
  key: string;
  /** The name's words joined from each word on: "apeyachtclub", "yachtclub", "club". */
  wordTails: string[];
  /** First letters of a name of two words or more ("bayc"); "" otherwise. */
  initials: string;
  symbolKey: string;
}

function toEntry(collection: IndexedCollection): Entry {
  const words = wordsOf(collection.name);
  return {
    ...collection,
    storedAt: collection.seenAt,
    key: words.join(""),
    wordTails: words.slice(1).map((_, i) => words.slice(i + 1).join("")),
    initials: words.length >= 2 ? words.map((word) => word.charAt(0)).join("") : "",
    symbolKey: nameKey(collection.symbol),
  };
}

function plain(entry: Entry): IndexedCollection {
  const { address, name, symbol, rank, source, seenAt } = entry;
  return { address, name, symbol, rank, source, seenAt };
}

function kindOf(entry: Entry, key: string): MatchKind | undefined {
  if (entry.key === key) return "exact";
  if (entry.symbolKey === key) return "symbol";
  if (entry.initials === key) return "initials";
  if (entry.key.startsWith(key)) return "prefix";
  if (entry.wordTails.some((tail) => tail.startsWith(key))) return "word";
  // One or two letters are inside most names: they would match everything.
  if (key.length >= 3 && entry.key.includes(key)) return "contains";
  return undefined;
}

/** The better known first: ranked in the top lists, higher first; then the more recently seen. */
function byPopularity(a: IndexedCollection, b: IndexedCollection): number {
  return (a.rank ?? Infinity) - (b.rank ?? Infinity) || b.seenAt - a.seenAt;
}

const ADDRESS = /^0x[0-9a-fA-F]{40}$/;

/**
 * How stale a collection's last-seen time may get in the store: it only orders what is evicted
 * first, so an hour off costs nothing, and a command answered from the cache writes nothing.
 */
const SEEN_STORE_INTERVAL_MS = 3_600_000;

export interface KnownCollectionsOptions {
  store?: CollectionIndexStore | undefined;
  /** Collections kept; past it, the least recently seen go. */
  max?: number;
  /** The wall clock: when a collection was seen. */
  now?: () => number;
  logger?: Logger | undefined;
}

export class KnownCollections {
  /** By lower-case address, least recently seen first. */
  private readonly entries = new Map<string, Entry>();
  private readonly writes = new Set<Promise<void>>();
  private readonly max: number;
  private readonly now: () => number;

  constructor(private readonly options: KnownCollectionsOptions = {}) {
    this.max = options.max ?? 10_000;
    this.now = options.now ?? Date.now;
  }

  get size(): number {
    return this.entries.size;
  }

  /** Reads what the store kept (at start, before the first command). */
  async load(): Promise<number> {
    const kept = (await this.options.store?.load()) ?? [];
    for (const collection of kept.sort((a, b) => a.seenAt - b.seenAt))
      this.entries.set(collection.address.toLowerCase(), toEntry(collection));
    this.write([], this.evict());
    return this.entries.size;
  }

  /** Collections an answer showed: a name or symbol it gives replaces the one known. */
  remember(sightings: Iterable<CollectionSighting>, source: CollectionSource = "answer"): void {
    this.write(
      this.upsert(sightings, source, (known) => known?.rank),
      this.evict(),
    );
  }

  /**
   * The top lists of a refresh, each in its order: a collection's rank becomes its best place in
   * any of them, and collections no longer listed lose theirs.
   */
  rank(lists: readonly (readonly CollectionSighting[])[]): void {
    const best = new Map<string, { sighting: CollectionSighting; place: number }>();
    for (const list of lists) {
      for (const [place, sighting] of list.entries()) {
        const key = sighting.address.toLowerCase();
        const known = best.get(key);
        if (!known || place < known.place) best.set(key, { sighting, place });
      }
    }
    const unranked: Entry[] = [];
    for (const [key, entry] of this.entries) {
      if (entry.rank !== undefined && !best.has(key)) {
        entry.rank = undefined;
        unranked.push(entry);
      }
    }
    const ranked = this.upsert(
      [...best.values()].map(({ sighting }) => sighting),
      "top",
      (_, key) => best.get(key)?.place,
    );
    this.write([...unranked, ...ranked], this.evict());
  }

  name(address: string): string | undefined {
    return this.entries.get(address.toLowerCase())?.name || undefined;
  }

  /** Every collection the text names or may mean, best match first (see MATCH_KINDS). */
  match(text: string): Match[] {
    const key = nameKey(text);
    if (key.length === 0) return [];
    const matches: { entry: Entry; kind: MatchKind; order: number }[] = [];
    for (const entry of this.entries.values()) {
      const kind = kindOf(entry, key);
      if (kind) matches.push({ entry, kind, order: MATCH_KINDS.indexOf(kind) });
    }
    return matches
      .sort((a, b) => a.order - b.order || byPopularity(a.entry, b.entry))
      .map(({ entry, kind }) => ({ collection: plain(entry), kind }));
  }

  /** Collections whose address has this short form, the better known first. */
  withShortForm(form: ShortForm): IndexedCollection[] {
    return [...this.entries.values()]
      .filter((entry) => matchesShortForm(entry.address, form))
      .sort(byPopularity)
      .map(plain);
  }

  /**
   * Suggestions while typing (Discord autocomplete): the better known when nothing is typed,
   * addresses that start with what is typed, or names ranked as `match` ranks them.
   */
  search(text: string, limit = 25): IndexedCollection[] {
    const typed = text.trim();
    if (typed.length === 0)
      return [...this.entries.values()].sort(byPopularity).slice(0, limit).map(plain);
    const form = parseShortForm(typed);
    if (form) return this.withShortForm(form).slice(0, limit);
    if (/^0x[0-9a-f]*$/i.test(typed)) {
      const lower = typed.toLowerCase();
      return [...this.entries.values()]
        .filter((entry) => entry.address.toLowerCase().startsWith(lower))
        .sort(byPopularity)
        .slice(0, limit)
        .map(plain);
    }
    return this.match(typed)
      .slice(0, limit)
      .map((match) => match.collection);
  }

  /**
   * Names close to a text that matches none ("did you mean"): a few edits away from the whole
   * name, its beginning, or its symbol; the closest first, then the better known.
   */
  closest(text: string, limit = 3): IndexedCollection[] {
    const key = nameKey(text);
    if (key.length < 2) return [];
    const allowed = Math.max(1, Math.floor(key.length / 3));
    const near: { entry: Entry; edits: number }[] = [];
    for (const entry of this.entries.values()) {
      if (entry.key.length === 0) continue;
      let edits = Infinity;
      if (Math.abs(entry.key.length - key.length) <= allowed) edits = distance(key, entry.key);
      if (entry.key.length > key.length)
        edits = Math.min(edits, distance(key, entry.key.slice(0, key.length)));
      if (entry.symbolKey && Math.abs(entry.symbolKey.length - key.length) <= allowed)
        edits = Math.min(edits, distance(key, entry.symbolKey));
      if (edits <= allowed) near.push({ entry, edits });
    }
    return near
      .sort((a, b) => a.edits - b.edits || byPopularity(a.entry, b.entry))
      .slice(0, limit)
      .map(({ entry }) => plain(entry));
  }

  /** Resolves when every change so far is in the store (before it closes). */
  async flush(): Promise<void> {
    await Promise.all([...this.writes]);
  }

  private upsert(
    sightings: Iterable<CollectionSighting>,
    source: CollectionSource,
    rankOf: (known: Entry | undefined, key: string) => number | undefined,
  ): Entry[] {
    const put = new Map<string, Entry>();
    const seenAt = this.now();
    for (const sighting of sightings) {
      if (!ADDRESS.test(sighting.address)) continue;
      const key = sighting.address.toLowerCase();
      const known = this.entries.get(key);
      const name = sighting.name.trim() || known?.name || "";
      const symbol = sighting.symbol?.trim() || known?.symbol || "";
      const rank = rankOf(known, key);
      if (
        known &&
        known.name === name &&
        known.symbol === symbol &&
        known.rank === rank &&
        known.source === source
      ) {
        // Seen again, nothing new (a cached answer shown once more): it becomes the most
        // recently seen here, and the store hears of it only now and then.
        known.seenAt = seenAt;
        this.entries.delete(key);
        this.entries.set(key, known);
        if (seenAt - known.storedAt >= SEEN_STORE_INTERVAL_MS) put.set(key, known);
        continue;
      }
      const entry = toEntry({
        address: known?.address ?? toChecksumAddress(sighting.address),
        name,
        symbol,
        rank,
        source,
        seenAt,
      });
      this.entries.delete(key);
      this.entries.set(key, entry);
      put.set(key, entry);
    }
    return [...put.values()];
  }

  /** Drops the least recently seen past `max`; returns their addresses. */
  private evict(): Address[] {
    const removed: Address[] = [];
    for (const [key, entry] of this.entries) {
      if (this.entries.size <= this.max) break;
      this.entries.delete(key);
      removed.push(entry.address);
    }
    return removed;
  }

  private write(put: readonly Entry[], remove: readonly Address[]): void {
    const { store, logger } = this.options;
    if (!store || (put.length === 0 && remove.length === 0)) return;
    for (const entry of put) entry.storedAt = entry.seenAt;
    const writing = store
      .write({ put: put.map(plain), remove })
      .catch((error: unknown) => {
        // Matching goes on from memory; what was not saved is seen again on the next refresh.
        logger?.warn({ err: error }, "could not save the collection index");
      })
      .finally(() => this.writes.delete(writing));
    this.writes.add(writing);
  }
}
