const sleep = (ms: number) => new Promise((resolve) => setTimeout(resolve, ms));

/** The platforms' limits of a bot token, whatever the number of processes using it. */
export type PlatformLimit =
  | "discord:global"
  | "telegram:global"
  | "telegram:chat"
  | "telegram:group";

/**
 * A platform limit counted across every instance of the bot (src/cache/limits.ts, over Redis):
 * `acquire` resolves when one more send under `limit` (for `key`: the group of a per-group limit)
 * may start. Each instance still spaces its own sends; this keeps their sum under the limit.
 */
export interface SharedPace {
  acquire(limit: PlatformLimit, key?: string): Promise<void>;
}

/**
 * Keeps requests under a server's limit of so many a second, without ever being told "429".
 *
 * Requests start one at a time, `1000 / perSecond` ms apart (a token bucket holding one token):
 * a limit counted per second is reached by a steady rate, never by a burst. A burst refilled at
 * each second's start (discord.js's own global counter, on its clock rather than the server's)
 * puts up to twice the limit into a rolling second. Each start is due one gap after the previous
 * one was due, so a late timer costs no throughput, and no start comes before the previous one:
 * starts in any rolling second stay at most `perSecond + 2`.
 *
 * A stall between our start and the server's arrival (a busy event loop, a slow network) could
 * still bunch requests up where the server counts them. So a request also holds its place until
 * a second after its answer came back (the server saw it before then): a start waits while
 * `perSecond + 2` requests are unanswered or answered within the last second. Whatever the
 * delays, no rolling second at the server holds more than that.
 */
export class SteadyPace {
  private readonly gapMs: number;
  private readonly cap: number;
  private due = Number.NEGATIVE_INFINITY;
  private turn: Promise<void> = Promise.resolve();
  private unanswered = 0;
  /** When recent requests were answered, oldest first. */
  private readonly answered: number[] = [];
  /** The next start waiting for an answer, when every place is held by an unanswered request. */
  private wake: (() => void) | undefined;

  constructor(
    perSecond: number,
    private readonly now: () => number = () => performance.now(),
    /** The bot's other instances' count too (after our own spacing, before the request starts). */
    private readonly shared?: () => Promise<void>,
  ) {
    this.gapMs = 1000 / perSecond;
    this.cap = Math.floor(perSecond) + 2;
  }

  /** Runs `request` at its turn. */
  async run<T>(request: () => Promise<T>): Promise<T> {
    await this.start();
    try {
      return await request();
    } finally {
      this.unanswered--;
      this.answered.push(this.now());
      this.wake?.();
    }
  }

  private start(): Promise<void> {
    const mine = this.turn.then(async () => {
      this.due = Math.max(this.now(), this.due + this.gapMs);
      for (;;) {
        const now = this.now();
        while ((this.answered[0] ?? now) <= now - 1000) this.answered.shift();
        const full = this.unanswered + this.answered.length >= this.cap;
        const oldest = this.answered[0];
        if (full && oldest === undefined) {
          await new Promise<void>((resolve) => {
            this.wake = resolve;
          });
          this.wake = undefined;
          continue;
        }
        const left = Math.max(
          this.due - now,
          full && oldest !== undefined ? oldest + 1000 - now : 0,
        );
        if (left <= 0) break;
        await sleep(Math.ceil(left));
      }
      await this.shared?.();
      this.unanswered++;
    });
    this.turn = mine;
    return mine;
  }
}
