import type { Logger } from "../log.ts";
import { settledBy, within } from "../within.ts";
import type { Lease } from "./lease.ts";
import type { Check, Liveness } from "./liveness.ts";

/** A background job as bot.ts runs it: started in list order, stopped in reverse. */
export interface Job {
  name: string;
  start(): void | Promise<void>;
  /** Ends the job's rounds; resolves once the round in flight has ended. */
  stop(): Promise<void>;
  /** What /healthz says about it, read without I/O. */
  checks(): Check[];
}

/**
 * A leader's job: judged only while this process holds `lease`, from when it took it. `liveness`
 * is undefined before the job started.
 */
export function ledBy(lease: Lease, liveness: Liveness | undefined, boundMs: number): Check[] {
  const since = lease.leaderSince;
  return since === undefined || liveness === undefined ? [] : [liveness.check(boundMs, since)];
}

/**
 * Stops the jobs last first (a job listed after another may feed it: the pollers poke delivery),
 * each given until `deadline`: a job wedged on a hung connection is left behind, logged, and the
 * shutdown goes on. A failure to stop is logged, not thrown.
 */
export async function stopJobs(jobs: readonly Job[], deadline: number, logger: Logger) {
  for (const job of [...jobs].reverse()) {
    const stopping = job.stop().catch((error: unknown) => {
      logger.warn({ err: error, job: job.name }, "could not stop a job cleanly");
    });
    if (!(await settledBy(stopping, deadline)))
      logger.warn({ job: job.name }, "a job's round did not end in time; shutdown goes on");
  }
}

/**
 * A probe (the store's SELECT 1) that answers within `withinMs` whatever hangs: false when it
 * fails or has not answered by then. One probe at a time: while one hangs, later calls wait on it
 * rather than pile more work on the hung connection.
 */
export function boundedProbe(
  probe: () => Promise<boolean>,
  withinMs: number,
): () => Promise<boolean> {
  let inFlight: Promise<boolean> | undefined;
  return async () => {
    inFlight ??= probe()
      .catch(() => false)
      .finally(() => {
        inFlight = undefined;
      });
    const outcome = await within(inFlight, withinMs);
    return outcome.done && outcome.value;
  };
}

/**
 * How long a slow job (digests, watches, gates, report retries: they read the data service per
 * item) may go without completing a round before health fails.
 */
export const SLOW_JOB_BOUND_MS = 300_000;
