import type { ChatAdapter } from "../adapters/types.ts";
import type { Shared } from "../cache/index.ts";
import type { Health } from "../http/ops.ts";
import { boundedProbe, type Job } from "../jobs/job.ts";
import type { Check } from "../jobs/liveness.ts";
import type { LogDestinationState } from "../log-destination.ts";
import type { Store } from "../store/types.ts";
import { within } from "../within.ts";
import type { FeatureParts } from "./feature.ts";

/** /healthz answers within 1 s: the store's SELECT 1 gets half of it, the figures the other. */
export const STORE_PROBE_MS = 500;

/**
 * /healthz's verdict: each adapter, the database (its answer, its disk, its migrations), the logs'
 * destination, every job and every feature's own checks; then the features' figures (the pollers,
 * the gates' counts), which never fail it.
 */
export function healthOf(parts: {
  adapters: readonly ChatAdapter[];
  store: Store;
  logState: (() => LogDestinationState) | undefined;
  jobs: readonly Job[];
  features: readonly FeatureParts[];
  shared: Shared | undefined;
  /** Why the background jobs have not started when they should have (a late start that failed). */
  jobsNotStarted?: () => string | undefined;
}): () => Promise<Health> {
  const { adapters, store, logState, jobs, features, shared } = parts;
  const databaseAnswers = boundedProbe(() => store.healthy(), STORE_PROBE_MS);
  return async () => {
    const checks: Check[] = [];
    const connected: Record<string, boolean> = {};
    for (const adapter of adapters) {
      connected[adapter.platform] = adapter.healthy();
      checks.push({
        name: `adapter ${adapter.platform}`,
        ok: connected[adapter.platform] as boolean,
        ...(connected[adapter.platform] ? {} : { reason: `${adapter.label} is not connected` }),
      });
    }
    const database = await databaseAnswers();
    checks.push({
      name: "database",
      ok: database,
      ...(database
        ? {}
        : { reason: `database: the store did not answer within ${STORE_PROBE_MS} ms` }),
    });
    const disk = store.diskFull?.();
    checks.push({ name: "disk", ok: disk === undefined, ...(disk ? { reason: disk } : {}) });
    const waiting = store.waiting?.();
    if (waiting !== undefined)
      checks.push({
        name: "database migrations",
        ok: false,
        reason: `${waiting}: alerts, digests, watches and gates wait`,
      });
    const notStarted = parts.jobsNotStarted?.();
    if (notStarted !== undefined)
      checks.push({ name: "background jobs", ok: false, reason: notStarted });
    const log = logState?.().failing;
    if (logState)
      checks.push({ name: "log", ok: log === undefined, ...(log ? { reason: log } : {}) });
    for (const job of jobs) checks.push(...job.checks());
    for (const feature of features) checks.push(...(feature.checks?.() ?? []));
    // Each feature's figures, side by side, each within the probe's time: a slow or failing one
    // is left out, never holding or failing /healthz.
    const figures: Partial<Health> = {};
    const given = await Promise.all(
      features.map(async (feature) => {
        const asked = feature.figures?.(database);
        if (!asked) return {};
        const outcome = await within(
          Promise.resolve(asked).catch(() => ({})),
          STORE_PROBE_MS,
        );
        return outcome.done ? outcome.value : {};
      }),
    );
    for (const each of given) Object.assign(figures, each);
    return {
      ok: checks.every((check) => check.ok),
      adapters: connected,
      database,
      ...(disk ? { disk } : {}),
      ...(log ? { log } : {}),
      ...figures,
      ...shared?.link.health(),
      checks,
    };
  };
}
