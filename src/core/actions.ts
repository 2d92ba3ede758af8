import { randomBytes } from "node:crypto";
import type { ButtonAction } from "./reply.ts";

export interface StoredAction {
  id: string;
  platform: string;
  chatId: string;
  action: ButtonAction;
  /** Epoch milliseconds. */
  expiresAt: number;
}

/**
 * Where the actions behind buttons live. Buttons carry only the id; what it does stays here, so
 * a forged or stale id can do nothing. The SQLite implementation keeps them across restarts.
 */
export interface ActionStore {
  put(action: Omit<StoredAction, "id">): Promise<string>;
  get(id: string): Promise<StoredAction | undefined>;
  /** Drops expired entries; returns how many. */
  prune(now: number): Promise<number>;
}

/** 128 random bits, base64url: 22 characters, well inside Discord's 100 and Telegram's 64 bytes. */
export function newActionId(): string {
  return randomBytes(16).toString("base64url");
}

export const ACTION_ID_PATTERN = /^[A-Za-z0-9_-]{22}$/;

export class MemoryActionStore implements ActionStore {
  private readonly entries = new Map<string, StoredAction>();

  constructor(private readonly maxEntries = 100_000) {}

  async put(action: Omit<StoredAction, "id">): Promise<string> {
    if (this.entries.size >= this.maxEntries) await this.prune(Date.now());
    // Still full after pruning: the oldest entry goes (Map iterates in insertion order).
    if (this.entries.size >= this.maxEntries) {
      const oldest = this.entries.keys().next().value;
      if (oldest !== undefined) this.entries.delete(oldest);
    }
    const id = newActionId();
    this.entries.set(id, { id, ...action });
    return id;
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
    return removed;
  }
}
