/**
 * Collections the bot has seen in answers (top lists, new contracts, lookups): the source of
 * autocomplete suggestions. Bounded; the most recently seen stay.
 */
export interface KnownCollection {
  address: string;
  name: string;
}

export class KnownCollections {
  private readonly byAddress = new Map<string, KnownCollection>();

  constructor(private readonly max = 5_000) {}

  remember(collections: Iterable<KnownCollection>): void {
    for (const collection of collections) {
      const key = collection.address.toLowerCase();
      const existing = this.byAddress.get(key);
      this.byAddress.delete(key);
      this.byAddress.set(key, {
        address: collection.address,
        name: collection.name || existing?.name || "",
      });
      if (this.byAddress.size > this.max) {
        const oldest = this.byAddress.keys().next().value;
        if (oldest !== undefined) this.byAddress.delete(oldest);
      }
    }
  }

  name(address: string): string | undefined {
    return this.byAddress.get(address.toLowerCase())?.name || undefined;
  }

  /** Up to `limit` matches: names containing the text, or addresses starting with it. */
  search(text: string, limit = 25): KnownCollection[] {
    const needle = text.trim().toLowerCase();
    const all = [...this.byAddress.values()].reverse();
    if (needle.length === 0) return all.slice(0, limit);
    const starts: KnownCollection[] = [];
    const contains: KnownCollection[] = [];
    for (const collection of all) {
      const name = collection.name.toLowerCase();
      if (name.startsWith(needle) || collection.address.toLowerCase().startsWith(needle))
        starts.push(collection);
      else if (name.includes(needle)) contains.push(collection);
      if (starts.length >= limit) break;
    }
    return [...starts, ...contains].slice(0, limit);
  }
}
