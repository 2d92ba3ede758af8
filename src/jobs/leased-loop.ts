import type { Logger } from "../log.ts";
import type { LeaseStore } from "../store/types.ts";
import { isDeadLocalHolder, Lease } from "./lease.ts";
import type { Check } from "./liveness.ts";
import { type LoopHandle, startLoop } from "./loop.ts";

export interface LeasedLoopOptions {
  /**
   * The lease's name in the store, or the lease itself when the caller shares it (bot.ts: the
   * default chain's poller lease also decides delivery, digests and report retries).
   */
  lease: string | Lease;
  /** Names the loop in logs and health. */
  name: string;
  leases: LeaseStore;
  holder: string;
  /** The wait between rounds. */
  tickMs: number;
  /** Lease lifetime; default 3 ticks, at least 10 s. */
  leaseTtlMs?: number | undefined;
  /**
   * Takes or renews the lease this often, apart from the rounds (first after one such wait), so
   * that a lease shorter than the rounds' wait is kept, and a process that takes it over from a
   * dead leader runs a round at once. Default: only the rounds take it.
   */
  renewEveryMs?: number | undefined;
  logger: Logger;
  /** Wall clock passed to the lease's store. */
  now: () => number;
  /** The lease's monotonic clock (default performance.now). */
  monotonic?: (() => number) | undefined;
  /** The job's own words in its warnings. */
  messages: { failed: string; notReleased: string; notRenewed?: string };
  /** Counts a failed round in the job's own counters (the warning is logged here). */
  onFailure: () => void;
}

/**
 * A background job that one process at a time runs, every `tickMs`: the lease that picks the
 * process, the loop of rounds, its stop (the lease given up so another can take over at once),
 * and what /healthz says of it. Each round takes the lease itself: `held()` once, or `hold()`,
 * which also renews it during the round and ends the round's work if it is lost.
 */
export class LeasedLoop {
  readonly lease: Lease;
  private loop: LoopHandle | undefined;
  private renewals: LoopHandle | undefined;

  constructor(private readonly options: LeasedLoopOptions) {
    this.lease =
      typeof options.lease === "string"
        ? new Lease({
            store: options.leases,
            name: options.lease,
            holder: options.holder,
            ttlMs: options.leaseTtlMs ?? Math.max(10_000, 3 * options.tickMs),
            isDead: isDeadLocalHolder,
            now: options.now,
            ...(options.monotonic ? { monotonic: options.monotonic } : {}),
          })
        : options.lease;
  }

  /** Takes or renews the lease: whether this process holds it now. */
  async held(): Promise<boolean> {
    return (await this.lease.attempt()) === this.lease.holder;
  }

  /** Whether this process holds the lease now (no I/O). */
  get isLeader(): boolean {
    return this.lease.isLeader;
  }

  /** Work is waiting: a round now, or right after the one in flight. */
  poke(): void {
    this.loop?.poke();
  }

  /**
   * Takes the lease for one round and keeps it while the round runs: renewed every third of its
   * life, so a round longer than the lease is never shared with another instance. Undefined when
   * another process holds it. The hold's signal aborts with `outer` (a stop) and as soon as this
   * process may no longer count itself the leader (a renewal refused, failed, or unanswered
   * until a little before the lease could lapse): the round's calls end before another instance
   * can take over. end() stops the renewals.
   */
  async hold(outer?: AbortSignal): Promise<LeaseHold | undefined> {
    if (!(await this.held())) return undefined;
    const controller = new AbortController();
    const lost = () => controller.abort(new Error(`the ${this.lease.name} lease was lost`));
    const onOuter = () => controller.abort(outer?.reason);
    outer?.addEventListener("abort", onOuter, { once: true });
    if (outer?.aborted) onOuter();
    let deadline: NodeJS.Timeout | undefined;
    const arm = () => {
      clearTimeout(deadline);
      deadline = setTimeout(lost, this.lease.leaderForMs);
    };
    arm();
    let renewing = false;
    const renewer = setInterval(
      () => {
        if (renewing || controller.signal.aborted) return;
        renewing = true;
        this.held()
          .then((held) => (held ? arm() : lost()), lost)
          .finally(() => {
            renewing = false;
          });
      },
      Math.max(50, this.lease.ttlMs / 3),
    );
    return {
      signal: controller.signal,
      end: () => {
        clearInterval(renewer);
        clearTimeout(deadline);
        outer?.removeEventListener("abort", onOuter);
      },
    };
  }

  start(round: (signal: AbortSignal) => Promise<unknown>): void {
    const { logger, messages, monotonic, renewEveryMs } = this.options;
    this.loop = startLoop({
      name: this.options.name,
      everyMs: this.options.tickMs,
      round,
      logger,
      ...(monotonic ? { monotonic } : {}),
      onError: (error) => {
        this.options.onFailure();
        logger.warn({ err: error }, messages.failed);
      },
    });
    if (renewEveryMs === undefined) return;
    this.renewals = startLoop({
      name: `lease ${this.lease.name}`,
      everyMs: renewEveryMs,
      firstAfterMs: renewEveryMs,
      round: async () => {
        const wasLeader = this.lease.isLeader;
        await this.lease.attempt();
        // Just became the leader (the last one died): a round now, not at the next tick.
        if (!wasLeader && this.lease.isLeader) this.loop?.poke();
      },
      logger,
      ...(monotonic ? { monotonic } : {}),
      onError: (error) =>
        logger.warn(
          { err: error },
          messages.notRenewed ?? `could not renew the ${this.lease.name} lease`,
        ),
    });
  }

  async stop(): Promise<void> {
    await Promise.all([this.loop?.stop(), this.renewals?.stop()]);
    try {
      await this.lease.release();
    } catch (error) {
      this.options.logger.warn({ err: error }, this.options.messages.notReleased);
    }
  }

  /**
   * For /healthz, without I/O: on the lease holder, whether rounds complete; on the others,
   * whether their lease attempts (one a round) get answers.
   */
  checks(boundMs: number): Check[] {
    const loop = this.loop;
    if (!loop) return [];
    const since = this.lease.leaderSince;
    if (since !== undefined) return [loop.liveness.check(boundMs, since)];
    return this.leaseChecks();
  }

  /**
   * Whether this process's lease attempts get answers (once started): one that cannot reach the
   * store could never take over from a dead leader.
   */
  leaseChecks(): Check[] {
    if (!this.loop) return [];
    const between = this.options.renewEveryMs ?? this.options.tickMs;
    return [this.lease.check(this.lease.ttlMs + between)];
  }
}

/** The lease held for one round (LeasedLoop.hold). */
export interface LeaseHold {
  /** Aborts on a stop, or once the lease may have lapsed. */
  readonly signal: AbortSignal;
  end(): void;
}

/** A share of something per minute (upstream reads): spent as it goes, new each minute. */
export class MinuteBudget {
  private window = { start: Number.NEGATIVE_INFINITY, used: 0 };

  constructor(
    private readonly perMinute: number,
    private readonly now: () => number,
  ) {}

  /** What is left of this minute's share; a minute after the last one began, a new share. */
  left(): number {
    const now = this.now();
    if (now - this.window.start >= 60_000) this.window = { start: now, used: 0 };
    return Math.max(0, this.perMinute - this.window.used);
  }

  spend(count: number): void {
    this.window.used += count;
  }

  /** Takes one from the share; false when it is spent. */
  take(): boolean {
    if (this.left() <= 0) return false;
    this.spend(1);
    return true;
  }
}
