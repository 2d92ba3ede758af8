/** The budget refused a request: waiting for a token would take `retryAfterMs` or more. */
export class BudgetExceededError extends Error {
  override name = "BudgetExceededError";
  constructor(readonly retryAfterMs: number) {
    super("the budget of requests to the data service is spent for now");
  }
}

export interface BudgetOptions {
  /** Tokens added per second. */
  perSecond: number;
  /** Tokens the bucket holds: requests that may go at once after a quiet spell. */
  burst: number;
  /** Longest a request waits in line before it is refused. */
  maxWaitMs: number;
  /** Monotonic milliseconds. */
  now?: () => number;
}

/** Who may send a request to the data service now: this process's bucket, or one shared over Redis. */
export interface Budget {
  /** Resolves when the request may go; rejects with BudgetExceededError, or the signal's reason. */
  take(options?: {
    background?: boolean | undefined;
    signal?: AbortSignal | undefined;
  }): Promise<void>;
  /**
   * Takes a token now if one is free and nobody waits, without a promise: the request goes out in
   * the same turn. False: ask `take` (a budget kept elsewhere may have no such shortcut).
   */
  tryTake?(): boolean;
}

interface Waiter {
  background: boolean;
  go(): void;
}

/**
 * One token bucket for every request the process makes to the data service. A request that finds
 * the bucket empty waits in line (first come, first served) for at most `maxWaitMs`, and is
 * refused when its turn would come later than that, so people hear "busy, try again in N s"
 * quickly instead of waiting on a queue that only grows.
 *
 * Background work (the alert poller) is never refused: it goes to the front of the line, after
 * other background work, so it waits at most for the next token and commands cannot starve it;
 * it asks once per page per poll, so it cannot starve commands either.
 */
export class UpstreamBudget implements Budget {
  private tokens: number;
  private refilledAt: number;
  private readonly line: Waiter[] = [];
  private timer: NodeJS.Timeout | undefined;
  private readonly now: () => number;

  constructor(private readonly options: BudgetOptions) {
    this.now = options.now ?? (() => performance.now());
    this.tokens = options.burst;
    this.refilledAt = this.now();
  }

  /** Resolves when the request may go; rejects with BudgetExceededError, or the signal's reason. */
  take(
    options: { background?: boolean | undefined; signal?: AbortSignal | undefined } = {},
  ): Promise<void> {
    const { signal } = options;
    const background = options.background === true;
    if (signal?.aborted) return Promise.reject(signal.reason);
    if (this.tryTake()) return Promise.resolve();
    const ahead = background ? this.line.filter((w) => w.background).length : this.line.length;
    const waitMs = this.msUntil(ahead + 1);
    if (!background && waitMs > this.options.maxWaitMs) {
      return Promise.reject(new BudgetExceededError(waitMs));
    }
    return new Promise<void>((resolve, reject) => {
      const leave = (error: unknown) => {
        const index = this.line.indexOf(waiter);
        if (index >= 0) this.line.splice(index, 1);
        settle();
        reject(error);
      };
      const onAbort = () => leave(signal?.reason);
      const deadline = background
        ? undefined
        : setTimeout(() => {
            this.refill();
            leave(new BudgetExceededError(this.msUntil(this.line.length)));
          }, this.options.maxWaitMs);
      const settle = () => {
        clearTimeout(deadline);
        signal?.removeEventListener("abort", onAbort);
      };
      const waiter: Waiter = {
        background,
        go() {
          settle();
          resolve();
        },
      };
      signal?.addEventListener("abort", onAbort, { once: true });
      this.line.splice(ahead, 0, waiter);
      this.schedule();
    });
  }

  tryTake(): boolean {
    this.refill();
    if (this.line.length > 0 || this.tokens < 1) return false;
    this.tokens -= 1;
    return true;
  }

  /** Milliseconds until the bucket holds `count` tokens. */
  private msUntil(count: number): number {
    return Math.max(0, ((count - this.tokens) * 1000) / this.options.perSecond);
  }

  private refill(): void {
    const now = this.now();
    const added = ((now - this.refilledAt) * this.options.perSecond) / 1000;
    this.tokens = Math.min(this.options.burst, this.tokens + added);
    this.refilledAt = now;
  }

  private schedule(): void {
    if (this.timer !== undefined || this.line.length === 0) return;
    this.timer = setTimeout(
      () => {
        this.timer = undefined;
        this.serve();
      },
      Math.max(1, Math.ceil(this.msUntil(1))),
    );
  }

  private serve(): void {
    this.refill();
    while (this.tokens >= 1) {
      const waiter = this.line.shift();
      if (!waiter) break;
      this.tokens -= 1;
      waiter.go();
    }
    this.schedule();
  }
}
