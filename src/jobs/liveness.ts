/**
 * What /healthz says about one part: ok, or the reason it is not. Other parts (Redis, the disk)
 * add their own checks to the same list.
 */
export interface Check {
  name: string;
  ok: boolean;
  reason?: string;
  /**
   * A job's: seconds since its last good round, null before the first (the leased jobs say it
   * on the instance that leads them).
   */
  lastGoodAgoSeconds?: number | null;
}

const seconds = (ms: number) => Math.round(ms / 1000);

/**
 * A job's last good round, kept in memory so that health reads it without any I/O: a job wedged
 * on a hung connection stops recording, and health says so however long the hang lasts.
 */
export class Liveness {
  private lastGood: number | undefined;

  constructor(
    readonly name: string,
    private readonly monotonic: () => number = () => performance.now(),
  ) {}

  /** A round completed (whatever it found to do). */
  good(): void {
    this.lastGood = this.monotonic();
  }

  /** Monotonic time of the last good round; undefined before the first. */
  get lastGoodAt(): number | undefined {
    return this.lastGood;
  }

  /**
   * Whether a round completed within `boundMs`, counting from `since` (when the job began to be
   * owed: its start, or when this process took its lease) if none completed after it.
   */
  check(boundMs: number, since: number): Check {
    const now = this.monotonic();
    const lagMs = now - Math.max(since, this.lastGood ?? since);
    const lastGoodAgoSeconds = this.lastGood === undefined ? null : seconds(now - this.lastGood);
    if (lagMs < boundMs) return { name: this.name, ok: true, lastGoodAgoSeconds };
    return {
      name: this.name,
      ok: false,
      lastGoodAgoSeconds,
      reason: `${this.name}: no round completed for ${seconds(lagMs)} s (bound ${seconds(boundMs)} s)${
        this.lastGood === undefined || this.lastGood < since ? ", none since it began" : ""
      }`,
    };
  }
}
