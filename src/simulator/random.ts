/**
 * Seeded randomness for the simulator. Everything the data set contains comes from here, so the
 * same seed always yields the same wallets, collections and names.
 */

/** mulberry32: a tiny 32-bit PRNG, good enough for synthetic data and fully reproducible. */
export function mulberry32(seed: number): () => number {
  let state = seed >>> 0;
  return () => {
    state = (state + 0x6d2b79f5) >>> 0;
    let t = state;
    t = Math.imul(t ^ (t >>> 15), t | 1);
    t ^= t + Math.imul(t ^ (t >>> 7), t | 61);
    return ((t ^ (t >>> 14)) >>> 0) / 4294967296;
  };
}

/** FNV-1a with a final avalanche: derives independent sub-seeds from a seed and a label. */
export function hashSeed(seed: number, label: string): number {
  let h = (0x811c9dc5 ^ seed) >>> 0;
  for (let i = 0; i < label.length; i++) {
    h ^= label.charCodeAt(i);
    h = Math.imul(h, 0x01000193) >>> 0;
  }
  h ^= h >>> 16;
  h = Math.imul(h, 0x85ebca6b) >>> 0;
  h ^= h >>> 13;
  h = Math.imul(h, 0xc2b2ae35) >>> 0;
  h ^= h >>> 16;
  return h >>> 0;
}

const HEX_BYTES = Array.from({ length: 256 }, (_, byte) => byte.toString(16).padStart(2, "0"));

export class Rng {
  private readonly source: () => number;

  constructor(seed: number) {
    this.source = mulberry32(seed);
  }

  /** Uniform in [0, 1). */
  next(): number {
    return this.source();
  }

  /** Uniform integer in [min, max], both inclusive. */
  int(min: number, max: number): number {
    return min + Math.floor(this.source() * (max - min + 1));
  }

  /** Uniform float in [min, max). */
  float(min: number, max: number): number {
    return min + this.source() * (max - min);
  }

  /** Log-uniform float in [min, max): most values small, a few large. */
  logFloat(min: number, max: number): number {
    return Math.exp(this.float(Math.log(min), Math.log(max)));
  }

  chance(probability: number): boolean {
    return this.source() < probability;
  }

  pick<T>(items: readonly T[]): T {
    const item = items[Math.floor(this.source() * items.length)];
    if (item === undefined) throw new Error("pick from an empty list");
    return item;
  }

  weighted<T>(entries: readonly (readonly [T, number])[]): T {
    let total = 0;
    for (const entry of entries) total += entry[1];
    let r = this.source() * total;
    for (const entry of entries) {
      r -= entry[1];
      if (r < 0) return entry[0];
    }
    const last = entries[entries.length - 1];
    if (last === undefined) throw new Error("weighted pick from an empty list");
    return last[0];
  }

  /** `length` random hex digits, eight per draw (start-up speed matters: thousands of hashes). */
  hex(length: number): string {
    let out = "";
    for (let i = 0; i < length; i += 8) {
      const word = Math.floor(this.source() * 4294967296);
      out +=
        (HEX_BYTES[word >>> 24] ?? "") +
        (HEX_BYTES[(word >>> 16) & 0xff] ?? "") +
        (HEX_BYTES[(word >>> 8) & 0xff] ?? "") +
        (HEX_BYTES[word & 0xff] ?? "");
    }
    return out.length === length ? out : out.slice(0, length);
  }

  /** `length` random decimal digits, six per draw. */
  digits(length: number): string {
    const parts: string[] = [];
    for (let i = 0; i < length; i += 6) {
      parts.push(String(Math.floor(this.source() * 1_000_000)).padStart(6, "0"));
    }
    return parts.join("").slice(0, length);
  }

  address(): string {
    return `0x${this.hex(40)}`;
  }

  txHash(): string {
    return `0x${this.hex(64)}`;
  }

  /** Fisher-Yates on a copy. */
  shuffle<T>(items: readonly T[]): T[] {
    const out = [...items];
    for (let i = out.length - 1; i > 0; i--) {
      const j = Math.floor(this.source() * (i + 1));
      const a = out[i] as T;
      out[i] = out[j] as T;
      out[j] = a;
    }
    return out;
  }
}
