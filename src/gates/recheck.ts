import type { Lease } from "../jobs/lease.ts";
import { LeasedLoop, MinuteBudget } from "../jobs/leased-loop.ts";
import type { Check } from "../jobs/liveness.ts";
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
  private readonly job: LeasedLoop;
  /** Re-checks made in the current minute. */
  private readonly budget: MinuteBudget;

  constructor(private readonly deps: GateRecheckDeps) {
    const now = deps.now ?? Date.now;
    this.job = new LeasedLoop({
      lease: GATES_LEASE,
      name: "gates",
      leases: deps.leases,
      holder: deps.holder,
      tickMs: deps.settings.tickMs,
      leaseTtlMs: deps.settings.leaseTtlMs,
      logger: deps.logger,
      now,
      monotonic: deps.monotonic,
      messages: {
        failed: "gate re-check failed; will try again",
        notReleased: "could not release the gates lease",
      },
      onFailure: () => {
        deps.service.counters.failures++;
      },
    });
    this.budget = new MinuteBudget(deps.settings.checksPerMinute, now);
  }

  get lease(): Lease {
    return this.job.lease;
  }

  start(): void {
    this.job.start(async (signal) => {
      await this.tick(signal);
    });
  }

  stop(): Promise<void> {
    return this.job.stop();
  }

  /** For /healthz, without I/O: rounds on the lease holder, lease attempts on the others. */
  checks(boundMs: number): Check[] {
    return this.job.checks(boundMs);
  }

  /** One round: false when this process does not hold the lease; else how many were re-checked. */
  async tick(signal?: AbortSignal): Promise<number | false> {
    // The lease is renewed while the round runs, and the round's calls end if it is lost: two
    // instances never re-check the same people at once (issue 34).
    const hold = await this.job.hold(signal);
    if (!hold) return false;
    try {
      const checked = await this.deps.service.recheckDue(this.budget.left(), hold.signal);
      this.budget.spend(checked);
      return checked;
    } finally {
      hold.end();
    }
  }
}
