import type { CollectionRefresher } from "./core/collection-refresh.ts";
import type { Job } from "./jobs/job.ts";
import { PeriodicJob } from "./jobs/periodic.ts";
import type { Logger } from "./log.ts";
import type { Store, StoreChore } from "./store/types.ts";

/** Expired rows are deleted this often, the first time an hour after start. */
const PRUNE_EVERY_MS = 3_600_000;
/** A store's chore (the checkpoint, every second) may miss rounds this long before health fails. */
const CHORE_MIN_BOUND_MS = 60_000;

/** A chore that could not be done for a reason its store says itself (a full disk). */
const SAID_BY_THE_STORE = new Error("not done: the store says why");

export interface UpkeepOptions {
  /** Each chain's collection index refresher, the default chain's first. */
  refreshers: ReadonlyMap<string, CollectionRefresher>;
  /**
   * Whether the other chains' refreshers start at the first name their index misses (the
   * embedded simulator builds a chain's data set at its first request: most of its start-up).
   */
  lazyRefresh: boolean;
  /** The first refresh waits this long after start (a name it misses refreshes it at once). */
  firstRefreshAfterMs: number;
  store: Pick<Store, "chores">;
  /** What the prune deletes, each with what to say when it fails. */
  prune: readonly { what: string; run: () => Promise<unknown> }[];
  logger: Logger;
  monotonic?: (() => number) | undefined;
}

/**
 * The bot's own upkeep as jobs, in the order they start (stopped in the reverse): each chain's
 * collection index refresh, the store's chores (SQLite's checkpoint) and the hourly prune of
 * expired rows. `prune` runs the prune's round out of turn too (Bot.prune).
 */
export function upkeepJobs(options: UpkeepOptions): {
  jobs: Job[];
  /** The store's chores that start first, before it is ready (its migrations waiting for room). */
  first: Job[];
  prune: PeriodicJob;
} {
  const { logger, monotonic } = options;
  const clock = monotonic ? { monotonic } : {};
  const refreshes = [...options.refreshers.values()].map(
    (refresher, index): Job => ({
      name: refresher.name,
      start: () => {
        if (index > 0 && options.lazyRefresh) refresher.startWhenUsed();
        else refresher.start(options.firstRefreshAfterMs);
      },
      stop: () => refresher.stop(),
      checks: () => refresher.checks(),
    }),
  );
  const all = options.store.chores?.() ?? [];
  const asJob = (chore: StoreChore) =>
    new PeriodicJob({
      name: chore.name,
      everyMs: chore.everyMs,
      firstAfterMs: chore.everyMs,
      boundMs: Math.max(3 * chore.everyMs, CHORE_MIN_BOUND_MS),
      round: () => {
        if (!chore.run()) throw SAID_BY_THE_STORE;
      },
      onError: (error) => {
        if (error !== SAID_BY_THE_STORE)
          logger.warn({ err: error, job: chore.name }, "the store's upkeep failed; will try again");
      },
      logger,
      ...clock,
    });
  const first = all.filter((chore) => chore.first).map(asJob);
  const chores = all.filter((chore) => !chore.first).map(asJob);
  const prune = new PeriodicJob({
    name: "prune",
    everyMs: PRUNE_EVERY_MS,
    firstAfterMs: PRUNE_EVERY_MS,
    round: async () => {
      let failed = 0;
      for (const { what, run } of options.prune) {
        try {
          await run();
        } catch (error) {
          failed++;
          logger.warn(
            { err: error, what },
            "could not clean up expired rows; trying again in an hour",
          );
        }
      }
      if (failed > 0) throw new Error(`${failed} of the clean-ups failed`);
    },
    // Each failure was said above; a failed round only goes unrecorded.
    onError: () => {},
    logger,
    ...clock,
  });
  return { jobs: [...refreshes, ...chores, prune], first, prune };
}
