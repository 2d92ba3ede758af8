import { ledBy, SLOW_JOB_BOUND_MS } from "../jobs/job.ts";
import type { Feature } from "../kernel/feature.ts";
import { DigestScheduler } from "./scheduler.ts";
import { digestStoreOf } from "./store.ts";

/** Scheduled digests (/digest): posted by the leader, a slot's claim in the store making it once. */
export const digestsFeature: Feature<DigestScheduler> = {
  name: "digests",
  setup: (kernel) => ({
    moveChat: (platform, from, to) => digestStoreOf(kernel.store).moveChat(platform, from, to),
  }),
  build(kernel) {
    const { config, leader, metrics } = kernel;
    const digests = new DigestScheduler({
      digests: digestStoreOf(kernel.store),
      apis: kernel.apis,
      chains: kernel.chains,
      collectionIndexes: kernel.stores.collectionIndexes,
      outbound: kernel.outbound,
      // Only the leader looks; the run's claim in the store is what makes a slot post once.
      isLeader: () => leader.isLeader,
      holder: kernel.holder,
      onOutcome: (outcome) => metrics.onDigest(outcome),
      logger: kernel.logger.child({ part: "digests" }),
      settings: {
        tickMs: config.digests.tickMs,
        lateAfterMs: config.digests.lateAfterMs,
        maxAttempts: config.alerts.maxAttempts,
      },
      now: kernel.now,
    });
    return {
      exposes: digests,
      // The manager's page: the chat's digests, as /digest list gives them.
      chatSections: async (platform, chatId) => [
        {
          title: "Digests",
          lines: (await digestStoreOf(kernel.store).forChat(platform, chatId)).map(
            (d) =>
              `${d.cadence === "weekly" ? `weekly (day ${d.weekday})` : "daily"} at ${d.time} ${d.zone}: top ${d.metric} ${d.period} on ${d.chain}`,
          ),
        },
      ],
      jobs: [
        {
          name: "digests",
          start: () => digests.start(),
          stop: () => digests.stop(),
          checks: () =>
            ledBy(leader, digests.liveness, Math.max(3 * config.digests.tickMs, SLOW_JOB_BOUND_MS)),
        },
      ],
    };
  },
};
