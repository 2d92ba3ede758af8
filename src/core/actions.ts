import { randomBytesPooled } from "./random.ts";
import type { ButtonAction } from "./reply.ts";

export interface StoredAction {
  id: string;
  platform: string;
  chatId: string;
  /** Whose buttons these are: the person who invoked, or `alert:<chat>` for an alert's. */
  userId: string;
  action: ButtonAction;
  /** Epoch milliseconds. */
  expiresAt: number;
}

export type NewAction = Omit<StoredAction, "id">;

/** Stored actions one person may hold: past it, their oldest go (a reply never has more than 25). */
export const DEFAULT_MAX_ACTIONS_PER_USER = 500;

/**
 * Where the actions behind buttons live. Buttons carry only the id; what it does stays here, so
 * a forged or stale id can do nothing. The SQLite implementation keeps them across restarts.
 */
export interface ActionStore {
  /**
   * Stores one reply's actions at once (all or none; they share platform, chat, owner and
   * expiry) and returns their ids in order; past the per-person cap, that person's oldest
   * replies are dropped.
   */
  putMany(actions: readonly NewAction[]): Promise<string[]>;
  get(id: string): Promise<StoredAction | undefined>;
  /** Drops expired entries; returns how many. */
  prune(now: number): Promise<number>;
}

/**
 * Where a store that keeps each person's replies as rows numbered by a running count
 * (`first_seq`) trims after storing one: the first_seq below which their replies go, or nothing.
 * `lowest` is the lowest first_seq they held; `seq` and `count` are the reply just stored.
 *
 * Past the cap, a tenth of it more goes (deleting a row per reply cost more than the insert), so
 * the next trim waits for that many buttons: a person holds at most the cap, and after a trim at
 * least the cap less a tenth and one reply. The reply just stored always stays.
 */
export function trimBelow(lowest: number, seq: number, count: number, cap: number) {
  const end = seq + count;
  if (end - lowest <= cap) return undefined;
  return Math.min(seq, end - cap + Math.max(1, Math.floor(cap / 10)));
}

/**
 * `count` ids from one draw of random bytes (a reply has up to 25 buttons): 128 random bits each,
 * base64url, 22 characters, well inside Discord's 100 and Telegram's 64 bytes.
 */
function newActionIds(count: number): string[] {
  const bytes = randomBytesPooled(16 * count);
  const ids: string[] = [];
  for (let i = 0; i < count; i++) ids.push(bytes.toString("base64url", 16 * i, 16 * (i + 1)));
  return ids;
}

export const ACTION_ID_PATTERN = /^[A-Za-z0-9_-]{22}$/;

const ownerKey = (action: NewAction) => `${action.platform}\u0000${action.userId}`;

export class MemoryActionStore implements ActionStore {
  private readonly entries = new Map<string, StoredAction>();
  /** Each owner's ids, oldest first (some may be gone already). */
  private readonly byOwner = new Map<string, string[]>();

  constructor(
    private readonly maxEntries = 100_000,
    private readonly maxPerUser = DEFAULT_MAX_ACTIONS_PER_USER,
  ) {}

  async putMany(actions: readonly NewAction[]): Promise<string[]> {
    const ids = newActionIds(actions.length);
    for (const [i, action] of actions.entries()) {
      if (this.entries.size >= this.maxEntries) await this.prune(Date.now());
      // Still full after pruning: the oldest entry goes (Map iterates in insertion order).
      if (this.entries.size >= this.maxEntries) {
        const oldest = this.entries.keys().next().value;
        if (oldest !== undefined) this.entries.delete(oldest);
      }
      const id = ids[i] ?? "";
      this.entries.set(id, { id, ...action });
      const key = ownerKey(action);
      const owned = (this.byOwner.get(key) ?? []).filter((old) => this.entries.has(old));
      owned.push(id);
      while (owned.length > this.maxPerUser) this.entries.delete(owned.shift() ?? "");
      this.byOwner.set(key, owned);
    }
    return ids;
  }

  async get(id: string): Promise<StoredAction | undefined> {
    return this.entries.get(id);
  }

  async prune(now: number): Promise<number> {
    let removed = 0;
    for (const [id, entry] of this.entries) {
      if (entry.expiresAt <= now) {
        this.entries.delete(id);
        removed++;
      }
    }
    for (const [key, owned] of this.byOwner) {
      const live = owned.filter((id) => this.entries.has(id));
      if (live.length === 0) this.byOwner.delete(key);
      else this.byOwner.set(key, live);
    }
    return removed;
  }
}
