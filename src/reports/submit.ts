import type { ApiClient } from "../api/client.ts";
import { ApiError } from "../api/errors.ts";
import type { Logger } from "../log.ts";
import type { ReportRepository, SpamReport } from "../store/reports.ts";

/** Attempts at a queued report before it is marked failed. */
export const MAX_REPORT_ATTEMPTS = 8;

export type ReportOutcome =
  | { status: "sent" }
  | { status: "queued"; retryInMs: number }
  | { status: "unsupported" }
  | { status: "failed"; reason: string };

const retryDelayMs = (attempts: number, retryAfter?: number) =>
  Math.max(
    (retryAfter ?? 0) * 1000,
    Math.min(30 * 60_000, 10_000 * 2 ** attempts) * (0.75 + Math.random() / 2),
  );

/**
 * One call to endpoint 19 (spam) or 20 (not spam) for a recorded report, and what became of it.
 * The client never retries reports (a retried report could count twice upstream); this is the
 * one place that decides whether to try again later.
 */
export async function attemptReport(
  api: ApiClient,
  reports: ReportRepository,
  report: SpamReport,
  logger: Logger,
  now: () => number = Date.now,
): Promise<ReportOutcome> {
  const input = {
    wallet: report.wallet,
    contract: report.contract,
    tokenId: report.tokenId === "" ? undefined : report.tokenId,
    feedback: report.feedback ?? undefined,
  };
  try {
    const answer =
      report.kind === "spam"
        ? await api.wallets.reportSpam(input)
        : await api.wallets.reportNotSpam(input);
    reports.finish(report.id, "sent", JSON.stringify(answer ?? {}), now());
    logger.info({ report: report.id, kind: report.kind }, "spam report sent");
    return { status: "sent" };
  } catch (error) {
    if (!(error instanceof ApiError)) throw error;
    const upstream = `${error.kind}${error.status ? ` ${error.status}` : ""}: ${error.message}`;
    if (error.kind === "not_found" && report.kind === "not_spam") {
      // Endpoint 20's path is not in the spec (API_REPORT_NOT_SPAM_PATH is our guess).
      reports.finish(report.id, "unsupported", upstream, now());
      logger.warn(
        { report: report.id, path: error.path },
        "not-spam reports are not supported at the configured path",
      );
      return { status: "unsupported" };
    }
    if (error.transient && report.attempts + 1 < MAX_REPORT_ATTEMPTS) {
      const retryInMs = retryDelayMs(report.attempts, error.retryAfter);
      reports.queue(report.id, upstream, now() + retryInMs, now());
      logger.warn(
        { report: report.id, kind: error.kind, retryInMs },
        "spam report queued for a retry",
      );
      return { status: "queued", retryInMs };
    }
    reports.finish(report.id, "failed", upstream, now());
    logger.warn({ report: report.id, kind: error.kind }, "spam report failed");
    return {
      status: "failed",
      reason: error.kind === "unauthorized" ? "the bot's API key was refused" : error.message,
    };
  }
}

/** Retries queued reports (and first attempts a crash interrupted), only in the leader process. */
export class ReportRetryWorker {
  private timer: NodeJS.Timeout | undefined;
  private running: Promise<void> | undefined;

  constructor(
    private readonly deps: {
      api: ApiClient;
      reports: ReportRepository;
      logger: Logger;
      isLeader: () => boolean;
      intervalMs: number;
      now?: () => number;
    },
  ) {}

  start(): void {
    this.timer = setInterval(() => {
      if (this.running) return;
      this.running = this.retryDue()
        .catch((error: unknown) =>
          this.deps.logger.error({ err: error }, "report retry round failed"),
        )
        .finally(() => {
          this.running = undefined;
        });
    }, this.deps.intervalMs);
  }

  async stop(): Promise<void> {
    clearInterval(this.timer);
    await this.running;
  }

  async retryDue(): Promise<void> {
    if (!this.deps.isLeader()) return;
    const now = this.deps.now ?? Date.now;
    for (const report of this.deps.reports.due(now(), 50)) {
      await attemptReport(this.deps.api, this.deps.reports, report, this.deps.logger, now);
    }
  }
}
