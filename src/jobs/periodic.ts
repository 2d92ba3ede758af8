import type { Logger } from "../log.ts";
import type { Job } from "./job.ts";
import { type Check, Liveness } from "./liveness.ts";
import { type LoopHandle, startLoop } from "./loop.ts";

export interface PeriodicJobOptions {
  /** Names the job in logs and health. */
  name: string;
  /** The wait between the end of one round and the start of the next. */
  everyMs: number;
  /** When the first round runs after start (default at once). */
  firstAfterMs?: number;
  /** One round; it failed when it throws (no good round is recorded then). */
  round: (signal: AbortSignal) => unknown;
  /** How long the job may go without a good round before health fails (default 3 rounds). */
  boundMs?: number;
  logger: Logger;
  /** Told of a failed round instead of the default warning (a job that says it itself). */
  onError?: (error: unknown) => void;
  monotonic?: () => number;
}

/**
 * A job that every process runs on its own (no lease): a round every `everyMs`, its last good
 * round kept for /healthz, which fails once none has completed for `boundMs` since the start.
 * `run()` runs a round out of turn (an operator's, a test's), recorded the same way.
 */
export class PeriodicJob implements Job {
  readonly liveness: Liveness;
  private loop: LoopHandle | undefined;
  private since: number | undefined;
  private readonly monotonic: () => number;

  constructor(private readonly options: PeriodicJobOptions) {
    this.monotonic = options.monotonic ?? (() => performance.now());
    this.liveness = new Liveness(options.name, this.monotonic);
  }

  get name(): string {
    return this.options.name;
  }

  get isRunning(): boolean {
    return this.loop?.isRunning ?? false;
  }

  start(): void {
    if (this.loop) return;
    const { name, everyMs, firstAfterMs, round, logger, onError } = this.options;
    this.since = this.monotonic();
    this.loop = startLoop({
      name,
      everyMs,
      ...(firstAfterMs === undefined ? {} : { firstAfterMs }),
      round: async (signal) => {
        await round(signal);
      },
      logger,
      ...(onError ? { onError } : {}),
      monotonic: this.monotonic,
      liveness: this.liveness,
    });
  }

  /** A round now, apart from the loop's; never throws (a failure is told as the loop's are). */
  async run(): Promise<void> {
    try {
      await this.options.round(new AbortController().signal);
      this.liveness.good();
    } catch (error) {
      if (this.options.onError) this.options.onError(error);
      else
        this.options.logger.warn(
          { err: error, job: this.options.name },
          "job round failed; will try again",
        );
    }
  }

  /** No more rounds; resolves once the round in flight has ended. */
  async stop(): Promise<void> {
    await this.loop?.stop();
  }

  checks(): Check[] {
    if (this.since === undefined) return [];
    return [this.liveness.check(this.options.boundMs ?? 3 * this.options.everyMs, this.since)];
  }
}

/** `promise`, or `otherwise` as soon as `signal` aborts (a stop need not wait for a slow call). */
export function untilAborted<T>(
  promise: Promise<T>,
  signal: AbortSignal,
  otherwise: T,
): Promise<T> {
  if (signal.aborted) return Promise.resolve(otherwise);
  return new Promise<T>((resolve, reject) => {
    const onAbort = () => resolve(otherwise);
    signal.addEventListener("abort", onAbort, { once: true });
    promise.then(resolve, reject).finally(() => signal.removeEventListener("abort", onAbort));
  });
}
