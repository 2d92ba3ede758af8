import { ledBy, SLOW_JOB_BOUND_MS } from "../jobs/job.ts";
import type { Feature } from "../kernel/feature.ts";
import { ReportRetryWorker } from "./submit.ts";

/** How often queued spam reports are looked at. */
const REPORT_RETRY_MS = 5_000;

/**
 * Spam reports (the buttons under the bot's messages, /report, /reports): the commands are in
 * commands/; this is the retry of reports the data service could not take, on the leader.
 */
export const reportsFeature: Feature = {
  name: "reports",
  build(kernel) {
    const { config, leader } = kernel;
    const retries = new ReportRetryWorker({
      api: kernel.api,
      apis: kernel.apis,
      reports: kernel.stores.reports,
      logger: kernel.logger.child({ part: "reports" }),
      isLeader: () => leader.isLeader,
      intervalMs: REPORT_RETRY_MS,
      // Every attempt's timeout and the waits between them, and a second of slack.
      callMaxMs: config.api.retryMaxTotalMs + config.api.timeoutMs + 1_000,
    });
    return {
      jobs: [
        {
          name: "report retries",
          start: () => retries.start(),
          stop: () => retries.stop(),
          checks: () =>
            ledBy(leader, retries.liveness, Math.max(3 * REPORT_RETRY_MS, SLOW_JOB_BOUND_MS)),
        },
      ],
    };
  },
};
