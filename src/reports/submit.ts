import type { ApiClient } from "../api/client.ts";
import { ApiError } from "../api/errors.ts";
import { InvalidInputError } from "../api/validate.ts";
import type { Liveness } from "../jobs/liveness.ts";
import { type LoopHandle, startLoop } from "../jobs/loop.ts";
import type { Logger } from "../log.ts";
import { type RetryableFailure, retryWait } from "../outbound/policy.ts";
import type { ReportStore, SpamReport } from "../store/types.ts";

/** Attempts at a report before it is marked failed (each one certainly never reached the service). */
export const MAX_REPORT_ATTEMPTS = 8;

export type ReportOutcome =
  | { status: "sent" }
  | { status: "queued"; retryInMs: number }
  | { status: "unsupported" }
  | { status: "unknown"; reason: string }
  | { status: "failed"; reason: string };

/**
 * The wait before a report's next try, by the one send policy: a 429 that says when waits that
 * long, anything else the service certainly did not take backs off from 10 s. (A refusal of the
 * report itself is not retried at all, and nothing pauses: a report is no chat's sender.)
 */
function retryDelayMs(error: ApiError, attempts: number): number {
  const failure: RetryableFailure =
    error.kind === "rate_limited" && error.retryAfter !== undefined
      ? { kind: "rate_limited", retryAfterMs: error.retryAfter * 1000 }
      : { kind: "transient", reason: error.message };
  return retryWait(failure, attempts, { baseMs: 10_000 }).afterMs;
}

/** Network errors raised before the request was written: nothing reached the service. */
const NOT_SENT_CODES: ReadonlySet<string> = new Set([
  "ECONNREFUSED",
  "ENOTFOUND",
  "EAI_AGAIN",
  "UND_ERR_CONNECT_TIMEOUT",
]);

/**
 * Whether the service certainly did not take the report: rate limited (429) or unavailable
 * (503), refused before any work, or a connection that was never made. A timeout, a dropped
 * connection or another 5xx may come after the service recorded it: sending again could count
 * it twice.
 */
function certainlyNotReceived(error: ApiError): boolean {
  if (error.kind === "rate_limited" || error.status === 503) return true;
  return (
    error.status === undefined &&
    error.kind === "unavailable" &&
    error.code !== undefined &&
    NOT_SENT_CODES.has(error.code)
  );
}

/**
 * One call to endpoint 19 (spam) or 20 (not spam) for a recorded report, and what became of it.
 * The attempt is recorded before the call. The client never retries reports; this is the one
 * place that decides whether to try again later, and it does so only when the service certainly
 * did not get the report: at most once to the service.
 */
export async function attemptReport(
  api: ApiClient,
  reports: ReportStore,
  recorded: SpamReport,
  logger: Logger,
  now: () => number = Date.now,
): Promise<ReportOutcome> {
  const report = await reports.begin(recorded.id, now());
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
    await reports.finish(report.id, "sent", JSON.stringify(answer ?? {}), now());
    logger.info({ report: report.id, kind: report.kind }, "spam report sent");
    return { status: "sent" };
  } catch (error) {
    if (!(error instanceof ApiError)) {
      // Input refused before the request never left the bot; anything else may have.
      const status = error instanceof InvalidInputError ? "failed" : "unknown";
      await reports.finish(
        report.id,
        status,
        error instanceof Error ? error.message : "error",
        now(),
      );
      throw error;
    }
    const upstream = `${error.kind}${error.status ? ` ${error.status}` : ""}: ${error.message}`;
    if (error.kind === "not_found" && report.kind === "not_spam") {
      // Endpoint 20's path is not in the spec (API_REPORT_NOT_SPAM_PATH is our guess).
      await reports.finish(report.id, "unsupported", upstream, now());
      logger.warn(
        { report: report.id, path: error.path },
        "not-spam reports are not supported at the configured path",
      );
      return { status: "unsupported" };
    }
    if (certainlyNotReceived(error)) {
      if (report.attempts < MAX_REPORT_ATTEMPTS) {
        const retryInMs = retryDelayMs(error, report.attempts - 1);
        await reports.queue(report.id, upstream, now() + retryInMs, now());
        logger.warn(
          { report: report.id, kind: error.kind, retryInMs },
          "spam report queued for a retry",
        );
        return { status: "queued", retryInMs };
      }
    } else if (error.transient) {
      await reports.finish(report.id, "unknown", upstream, now());
      logger.warn(
        { report: report.id, kind: error.kind, status: error.status },
        "spam report outcome unknown; not sent again",
      );
      return {
        status: "unknown",
        reason:
          error.kind === "timeout"
            ? "the data service did not answer in time"
            : "the data service failed during the call",
      };
    }
    await reports.finish(report.id, "failed", upstream, now());
    logger.warn({ report: report.id, kind: error.kind }, "spam report failed");
    return {
      status: "failed",
      reason: error.kind === "unauthorized" ? "it refused the bot's key" : error.message,
    };
  }
}

/** Retries queued reports, only in the leader process. */
export class ReportRetryWorker {
  private loop: LoopHandle | undefined;

  constructor(
    private readonly deps: {
      /** The first chain's client: a report of a chain missing from `apis` goes there. */
      api: ApiClient;
      /** Each chain's client: a report is retried on its own chain's data service. */
      apis?: ReadonlyMap<string, ApiClient>;
      reports: ReportStore;
      logger: Logger;
      isLeader: () => boolean;
      intervalMs: number;
      /**
       * The longest one report's call can take (every attempt and wait): a report 'sending' for
       * longer was left by a process that stopped. Younger ones may be another instance's call.
       */
      callMaxMs: number;
      now?: () => number;
    },
  ) {}

  /** Marks what a stopped process left mid-call as unknown, then retries queued reports. */
  async start(): Promise<void> {
    // On a full disk this write fails; each round marks them again, so the start goes on.
    await this.markInterrupted().catch((error: unknown) =>
      this.deps.logger.warn({ err: error }, "could not mark interrupted spam reports yet"),
    );
    this.loop = startLoop({
      name: "report retries",
      everyMs: this.deps.intervalMs,
      firstAfterMs: this.deps.intervalMs,
      round: () => this.retryDue(),
      logger: this.deps.logger,
      onError: (error) => this.deps.logger.error({ err: error }, "report retry round failed"),
    });
  }

  async stop(): Promise<void> {
    await this.loop?.stop();
  }

  /** The last good round (health judges it on the leader). */
  get liveness(): Liveness | undefined {
    return this.loop?.liveness;
  }

  /**
   * Reports 'sending' for longer than a call can take: their process stopped mid-call (whether
   * the service got them is unknown; they are not sent again). Safe on any instance at any time:
   * a call still in progress is younger.
   */
  private async markInterrupted(): Promise<void> {
    const now = (this.deps.now ?? Date.now)();
    const interrupted = await this.deps.reports.markInterrupted(now, now - this.deps.callMaxMs);
    if (interrupted > 0) {
      this.deps.logger.warn(
        { reports: interrupted },
        "spam reports left mid-call by a stopped bot: outcome unknown, not sent again",
      );
    }
  }

  async retryDue(): Promise<void> {
    if (!this.deps.isLeader()) return;
    // A process that stopped mid-call and came straight back found its report still young at
    // its start: the leader's rounds settle it once it is old enough.
    await this.markInterrupted();
    const now = this.deps.now ?? Date.now;
    for (const report of await this.deps.reports.due(now(), 50)) {
      const api = this.deps.apis?.get(report.chain) ?? this.deps.api;
      await attemptReport(api, this.deps.reports, report, this.deps.logger, now);
    }
  }
}
