import type { UpdateDedup, UpdateStore } from "./types.ts";

/** Telegram keeps an undelivered update for 24 hours: no redelivery comes later than that. */
export const UPDATE_REDELIVERY_WINDOW_MS = 24 * 3_600_000;

/** One source's update ids (one bot token's), forgotten after the redelivery window. */
export class SourceUpdateDedup implements UpdateDedup {
  private readonly source: string;
  private readonly windowMs: number;
  private readonly now: () => number;

  constructor(
    private readonly store: UpdateStore,
    options: { source: string; windowMs?: number; now?: () => number },
  ) {
    this.source = options.source;
    this.windowMs = options.windowMs ?? UPDATE_REDELIVERY_WINDOW_MS;
    // Wall clock: when an id was seen outlives the process.
    this.now = options.now ?? Date.now;
  }

  firstSeen(updateId: number | bigint): Promise<boolean> {
    return this.store.firstSeen(this.source, updateId, this.now());
  }

  /** Drops this source's ids older than the window; returns how many. */
  prune(): Promise<number> {
    return this.store.prune(this.source, this.now() - this.windowMs);
  }
}
