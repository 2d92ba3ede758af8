import { setTimeout as sleep } from "node:timers/promises";

/**
 * Lets calls start one at a time, `1000 / perSecond` ms apart: a token bucket holding one token.
 * A limit counted per second is reached by a steady rate, never by a burst: a burst refilled at
 * each second's start (discord.js's own global counter, on its clock rather than the server's)
 * puts up to twice the limit into a rolling second.
 *
 * Each start is due one gap after the previous one was due, not after it actually started, so a
 * late timer costs no throughput; yet no start comes before the previous one, which bounds any
 * rolling second to `perSecond + 2` starts even after the event loop stalls.
 */
export class SteadyPace {
  private readonly gapMs: number;
  private due = Number.NEGATIVE_INFINITY;
  private turn: Promise<void> = Promise.resolve();

  constructor(
    perSecond: number,
    private readonly now: () => number = () => performance.now(),
  ) {
    this.gapMs = 1000 / perSecond;
  }

  /** Resolves when the caller may start. */
  wait(): Promise<void> {
    const mine = this.turn.then(async () => {
      this.due = Math.max(this.now(), this.due + this.gapMs);
      // A timer may fire a fraction of a millisecond early: never start before the due time.
      for (let left = this.due - this.now(); left > 0; left = this.due - this.now())
        await sleep(left);
    });
    this.turn = mine;
    return mine;
  }
}
