import { isDeadLocalHolder } from "../alerts/poller.ts";
import { Lease } from "../jobs/lease.ts";
import type { Check } from "../jobs/liveness.ts";
import { type LoopHandle, startLoop } from "../jobs/loop.ts";
import type { Logger } from "../log.ts";
import type { LeaseStore } from "../store/types.ts";
import type { GateService } from "./service.ts";

/** The re-check job's lease: one process re-checks every gate's members. */
export const GATES_LEASE = "gates";

export interface GateRecheckSettings {
  /** GATE_CHECKS_PER_MINUTE: members re-checked in a minute at most (each reads the data service). */
  checksPerMinute: number;
  /** How often the job looks for due members and expired join requests. */
  tickMs: number;
  /** Lease lifetime; default 3 ticks, at least 10 s. */
  leaseTtlMs?: number;
}

export interface GateRecheckDeps {
  service: GateService;
  leases: LeaseStore;
  holder: string;
  logger: Logger;
  settings: GateRecheckSettings;
  now?: () => number;
  monotonic?: () => number;
}

/**
 * Re-checks gates' members about once a day each (behaviors change daily; holdings and spend are
 * spread over the day by when each member was last checked), at most GATE_CHECKS_PER_MINUTE a
 * minute, and declines Telegram join requests past their deadline. Only the holder of the `gates`
 * lease runs it.
 */
export class GateRecheck {
  readonly lease: Lease;
  private loop: LoopHandle | undefined;
  private readonly now: () => number;
  /** Re-checks made in the current minute. */
  private window = { start: Number.NEGATIVE_INFINITY, used: 0 };

  constructor(private readonly deps: GateRecheckDeps) {
    this.now = deps.now ?? Date.now;
    this.lease = new Lease({
      store: deps.leases,
      name: GATES_LEASE,
      holder: deps.holder,
      ttlMs: deps.settings.leaseTtlMs ?? Math.max(10_000, 3 * deps.settings.tickMs),
      isDead: isDeadLocalHolder,
      now: this.now,
      ...(deps.monotonic ? { monotonic: deps.monotonic } : {}),
    });
  }

  start(): void {
    this.loop = startLoop({
      name: "gates",
      everyMs: this.deps.settings.tickMs,
      round: async (signal) => {
        await this.tick(signal);
      },
      logger: this.deps.logger,
      onError: (error) => {
        this.deps.service.counters.failures++;
        this.deps.logger.warn({ err: error }, "gate re-check failed; will try again");
      },
    });
  }

  async stop(): Promise<void> {
    await this.loop?.stop();
    try {
      await this.lease.release();
    } catch (error) {
      this.deps.logger.warn({ err: error }, "could not release the gates lease");
    }
  }

  /** For /healthz, without I/O: rounds on the lease holder, lease attempts on the others. */
  checks(boundMs: number): Check[] {
    const loop = this.loop;
    if (!loop) return [];
    const since = this.lease.leaderSince;
    if (since !== undefined) return [loop.liveness.check(boundMs, since)];
    return [this.lease.check(this.lease.ttlMs + this.deps.settings.tickMs)];
  }

  /** One round: false when this process does not hold the lease; else how many were re-checked. */
  async tick(signal?: AbortSignal): Promise<number | false> {
    if ((await this.lease.attempt()) !== this.deps.holder) return false;
    const now = this.now();
    if (now - this.window.start >= 60_000) this.window = { start: now, used: 0 };
    const budget = Math.max(0, this.deps.settings.checksPerMinute - this.window.used);
    const checked = await this.deps.service.recheckDue(budget, signal);
    this.window.used += checked;
    return checked;
  }
}
