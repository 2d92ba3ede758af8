import { SLOW_JOB_BOUND_MS } from "../jobs/job.ts";
import type { Feature } from "../kernel/feature.ts";
import { WatchChecker } from "./checker.ts";
import { watchCounters } from "./metrics.ts";
import { watchStoreOf } from "./store.ts";

/** Watches (/watch): checked under their own lease, `watches`, and posted through outbound. */
export const watchesFeature: Feature<WatchChecker> = {
  name: "watches",
  setup: (kernel) => ({
    moveChat: (platform, from, to) => watchStoreOf(kernel.store).moveChat(platform, from, to),
  }),
  build(kernel) {
    const { config } = kernel;
    const watches = new WatchChecker({
      watches: watchStoreOf(kernel.store),
      apis: kernel.apis,
      chains: kernel.chains,
      outbound: kernel.outbound,
      leases: kernel.store.leases,
      holder: kernel.holder,
      logger: kernel.logger.child({ part: "watches" }),
      settings: {
        tickMs: config.watches.tickMs,
        checksPerMinute: config.watches.checksPerMinute,
      },
    });
    watchCounters(kernel.metrics.registry, () => watches.stats);
    return {
      exposes: watches,
      // The manager's page: the chat's watches, as /watch list gives them.
      chatSections: async (platform, chatId) => [
        {
          title: "Watches",
          lines: (await watchStoreOf(kernel.store).forChat(platform, chatId)).map(
            (w) =>
              `${w.kind} ${w.label} on ${w.chain}${w.ownersPercent === null ? "" : `: owners ±${w.ownersPercent}%/day`}${w.whalesPoints === null ? "" : `, whales ±${w.whalesPoints} pts`}`,
          ),
        },
      ],
      jobs: [
        {
          name: "watches",
          start: () => watches.start(),
          stop: () => watches.stop(),
          checks: () => watches.checks(Math.max(3 * config.watches.tickMs, SLOW_JOB_BOUND_MS)),
        },
      ],
    };
  },
};
