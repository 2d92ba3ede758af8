import type { Logger } from "../log.ts";
import { Liveness } from "./liveness.ts";

export interface LoopOptions {
  /** Names the job in logs and health. */
  name: string;
  /** The wait between the end of one round and the start of the next. */
  everyMs: number;
  /**
   * One round. `signal` aborts when stop() is called: a long round may end early. Resolving true
   * means the round took a full batch: more is likely waiting, and the next round starts at once.
   */
  round: (signal: AbortSignal) => Promise<unknown>;
  logger: Logger;
  /** Told of a round's failure instead of the default warning (a job's own counters and words). */
  onError?: (error: unknown) => void;
  /** When the first round runs after start (default at once). */
  firstAfterMs?: number;
  monotonic?: () => number;
  /** Where the good rounds are recorded (default one of the loop's own, on `monotonic`). */
  liveness?: Liveness;
}

export interface LoopHandle {
  /** Work is waiting: run a round now, or right after the one in flight (pokes merge). */
  poke(): void;
  /** No more rounds; resolves once the round in flight has ended. */
  stop(): Promise<void>;
  readonly isRunning: boolean;
  /** The last good round; health reads it. */
  readonly liveness: Liveness;
}

/**
 * Runs `round` one at a time for ever: every `everyMs` after the last one ended, at once after a
 * poke or a full batch. A failed round is logged and the loop goes on; stop() ends it.
 */
export function startLoop(options: LoopOptions): LoopHandle {
  const monotonic = options.monotonic ?? (() => performance.now());
  const liveness = options.liveness ?? new Liveness(options.name, monotonic);
  const stopping = new AbortController();
  let timer: NodeJS.Timeout | undefined;
  let inFlight: Promise<void> | undefined;
  let again = false;

  const schedule = (ms: number) => {
    clearTimeout(timer);
    timer = setTimeout(run, ms);
  };

  function run(): void {
    timer = undefined;
    inFlight = (async () => {
      try {
        if ((await options.round(stopping.signal)) === true) again = true;
        liveness.good();
      } catch (error) {
        if (options.onError) options.onError(error);
        else
          options.logger.warn(
            { err: error, job: options.name },
            "job round failed; will try again",
          );
      }
    })().finally(() => {
      inFlight = undefined;
      if (stopping.signal.aborted) return;
      const soon = again;
      again = false;
      schedule(soon ? 0 : options.everyMs);
    });
  }

  schedule(options.firstAfterMs ?? 0);
  return {
    poke() {
      if (stopping.signal.aborted) return;
      if (inFlight) again = true;
      else schedule(0);
    },
    async stop() {
      stopping.abort();
      clearTimeout(timer);
      timer = undefined;
      await inFlight;
    },
    get isRunning() {
      return !stopping.signal.aborted;
    },
    liveness,
  };
}
