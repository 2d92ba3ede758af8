import { randomBytes } from "node:crypto";
import { hostname } from "node:os";
import type { LeaseStore } from "../store/types.ts";
import { bounded } from "../within.ts";
import type { Check } from "./liveness.ts";

export interface LeaseOptions {
  store: LeaseStore;
  /** The lease's name in the store (one per job that must run on one instance at a time). */
  name: string;
  /** Identifies this process. */
  holder: string;
  /** How long a taken lease lasts unless renewed. */
  ttlMs: number;
  /** Whether a holder is known to be gone (a crashed process on this host): no need to wait. */
  isDead?: (holder: string) => boolean;
  /** Wall clock passed to the store (SQLite times the lease by it; PostgreSQL by its own). */
  now?: () => number;
  /** Monotonic clock in ms for how long leadership lasts. */
  monotonic?: () => number;
}

/** The attempt's answer did not come before the lease could have expired. */
export class LeaseTimeoutError extends Error {
  constructor(name: string, ms: number) {
    super(`the ${name} lease was not confirmed within ${ms} ms`);
    this.name = "LeaseTimeoutError";
  }
}

/**
 * A lease in the store (one leader per job across instances): acquire or renew with attempt(),
 * give it up with release(). This process counts itself the leader only until a little before
 * the lease could have expired, measured from before the confirming call: the store may time the
 * lease by another clock (the database's), but the span is the same. An attempt whose answer does
 * not come by then fails, and the late answer of that hung call is ignored: leadership is never
 * held on a hung connection, and the next attempt goes out on time.
 */
export class Lease {
  private leaderUntil = 0;
  private since: number | undefined;
  private confirmedAt: number | undefined;
  /** Start of the first attempt that failed since the last confirmed one. */
  private failingSince: number | undefined;
  /** The `before` of the newest answer applied: an older answer arriving later changes nothing. */
  private appliedBefore = Number.NEGATIVE_INFINITY;
  private readonly monotonic: () => number;
  private readonly now: () => number;

  constructor(private readonly options: LeaseOptions) {
    this.monotonic = options.monotonic ?? (() => performance.now());
    this.now = options.now ?? Date.now;
  }

  get name(): string {
    return this.options.name;
  }

  get holder(): string {
    return this.options.holder;
  }

  get ttlMs(): number {
    return this.options.ttlMs;
  }

  /** How long an answer may take: the lease's life less a margin for the clocks and the wire. */
  private get confirmWithinMs(): number {
    const ttl = this.options.ttlMs;
    return ttl - Math.min(1_000, ttl / 4);
  }

  /** Whether this process holds the lease now. */
  get isLeader(): boolean {
    return this.monotonic() < this.leaderUntil;
  }

  /** How much longer this process counts itself the leader without another renewal (0: not). */
  get leaderForMs(): number {
    return Math.max(0, this.leaderUntil - this.monotonic());
  }

  /** Monotonic time since which this process holds the lease without a break; undefined if not. */
  get leaderSince(): number | undefined {
    return this.isLeader ? this.since : undefined;
  }

  /** Monotonic time of the last attempt that got an answer (leader or not); health reads it. */
  get lastConfirmedAt(): number | undefined {
    return this.confirmedAt;
  }

  /**
   * Takes or renews the lease; returns who holds it. Throws (and this process is no longer the
   * leader) when the store fails or does not answer in time.
   */
  async attempt(): Promise<string> {
    const { store, name, holder, ttlMs, isDead } = this.options;
    const before = this.monotonic();
    const withinMs = this.confirmWithinMs;
    try {
      const current = await bounded(
        store.acquire(name, holder, ttlMs, this.now(), isDead),
        withinMs,
        () => new LeaseTimeoutError(name, withinMs),
      );
      if (before < this.appliedBefore) return current;
      this.appliedBefore = before;
      this.confirmedAt = this.monotonic();
      this.failingSince = undefined;
      if (current === holder) {
        // Held without a break since the first of these answers: only another holder's answer or
        // a failed attempt ends that (a late answer leads for no time, but nobody else took it).
        this.since ??= before;
        this.leaderUntil = before + withinMs;
      } else this.lose();
      return current;
    } catch (error) {
      if (before >= this.appliedBefore) {
        this.appliedBefore = before;
        this.failingSince ??= before;
        this.lose();
      }
      throw error;
    }
  }

  /** Gives the lease up in the store (bounded like an attempt); it simply expires if that fails. */
  async release(): Promise<void> {
    this.lose();
    const { store, name, holder } = this.options;
    await bounded(
      store.release(name, holder),
      this.confirmWithinMs,
      () => new LeaseTimeoutError(name, this.confirmWithinMs),
    );
  }

  private lose(): void {
    this.leaderUntil = 0;
    this.since = undefined;
  }

  /**
   * Unhealthy once attempts have failed (an error, or no answer in time) for `boundMs` without
   * one confirmed: a process whose lease attempts cannot complete would never take over from a
   * dead leader, and must not look healthy.
   */
  check(boundMs: number): Check {
    const checkName = `lease ${this.options.name}`;
    const failingMs = this.failingSince === undefined ? 0 : this.monotonic() - this.failingSince;
    if (failingMs < boundMs) return { name: checkName, ok: true };
    return {
      name: checkName,
      ok: false,
      reason: `${checkName}: no attempt confirmed for ${Math.round(failingMs / 1000)} s (the store does not answer)`,
    };
  }
}

/** A lease holder's name: host, process id and a random suffix (process ids are reused). */
export function leaseHolderName(): string {
  return `${hostname()}:${process.pid}:${randomBytes(3).toString("hex")}`;
}

/** A holder on this host whose process no longer exists crashed: its lease need not be waited out. */
export function isDeadLocalHolder(holder: string): boolean {
  const [host, pid] = holder.split(":");
  if (host !== hostname() || !pid || !/^\d+$/.test(pid) || Number(pid) === process.pid)
    return false;
  try {
    process.kill(Number(pid), 0);
    return false;
  } catch (error) {
    return (error as NodeJS.ErrnoException).code === "ESRCH";
  }
}

/**
 * The lease of a chain's leader: its poller holds it, and the default chain's leader also
 * delivers the alerts, posts the digests and retries the reports.
 */
export const chainLeaseName = (chain: string) => `new-contract-poller:${chain}`;
