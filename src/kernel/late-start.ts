import type { Migration } from "kysely";
import type { Job } from "../jobs/job.ts";
import type { Logger } from "../log.ts";
import type { Store } from "../store/types.ts";
import { runFeatureMigrations } from "./feature.ts";

/** How long after a failed late start the next try comes. */
const RETRY_MS = 10_000;

/**
 * Runs the features' migrations at start-up: true once they have run. On a full disk (the store
 * says so) they wait, false, and the background jobs with them; any other failure fails the start.
 */
export async function featuresMigratedAtStart(
  store: Pick<Store, "sql" | "waiting" | "diskFull">,
  migrations: Readonly<Record<string, Migration>>,
  logger: Logger,
): Promise<boolean> {
  if (store.waiting?.() !== undefined) return false;
  try {
    await runFeatureMigrations(store, migrations, logger);
    return true;
  } catch (error) {
    if (store.diskFull?.() === undefined) throw error;
    logger.warn({ err: error }, "the features' migrations wait for room on the disk");
    return false;
  }
}

/**
 * The background jobs of a start whose migrations waited (a full disk), from `begin()`: once the
 * store has run its own, the features' run, then the jobs start. A failure is tried again every
 * 10 s until the bot stops; meanwhile `notStarted()` says why, for /healthz (no job reports until
 * it started).
 */
export function lateStart(options: {
  store: Pick<Store, "sql" | "ready">;
  migrations: Readonly<Record<string, Migration>>;
  jobs: readonly Job[];
  start: (jobs: readonly Job[]) => Promise<void>;
  stopped: () => boolean;
  logger: Logger;
  retryMs?: number;
}): { begin: () => void; notStarted: () => string | undefined; stop: () => void } {
  let failure: string | undefined;
  let timer: NodeJS.Timeout | undefined;
  const attempt = async (): Promise<void> => {
    if (options.stopped()) return;
    try {
      await options.store.ready?.();
      if (options.stopped()) return;
      await runFeatureMigrations(options.store, options.migrations, options.logger);
      failure = undefined;
      options.logger.info("the database's migrations have run: the background jobs start");
      await options.start(options.jobs);
    } catch (error) {
      failure = `the background jobs could not start: ${(error as Error).message}`;
      options.logger.error({ err: error }, "could not start the background jobs; trying again");
      timer = setTimeout(() => void attempt(), options.retryMs ?? RETRY_MS);
      timer.unref();
    }
  };
  return {
    begin: () => {
      failure = "the database's migrations wait for room";
      void attempt();
    },
    notStarted: () => failure,
    stop: () => clearTimeout(timer),
  };
}
