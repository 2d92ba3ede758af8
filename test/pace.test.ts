import { afterEach, beforeEach, describe, expect, it, vi } from "vitest";
import { SteadyPace } from "../src/adapters/pace.ts";

/** The most times that fall in any one window of `spanMs` (end excluded), as a server counts. */
function busiest(times: number[], spanMs = 1000): number {
  const sorted = [...times].sort((a, b) => a - b);
  let most = 0;
  for (let i = 0, j = 0; j < sorted.length; j++) {
    while ((sorted[i] ?? 0) <= (sorted[j] ?? 0) - spanMs) i++;
    most = Math.max(most, j - i + 1);
  }
  return most;
}

/** `count` requests, `inFlight` at a time; each reaches the server `delay(start)` ms after it starts. */
async function send(
  pace: SteadyPace,
  count: number,
  inFlight: number,
  delay: (startedAt: number) => number,
) {
  const starts: number[] = [];
  const arrivals: number[] = [];
  let left = count;
  const workers = Array.from({ length: inFlight }, async () => {
    while (left-- > 0) {
      await pace.run(async () => {
        starts.push(Date.now());
        await new Promise((resolve) => setTimeout(resolve, delay(Date.now())));
        arrivals.push(Date.now());
        await new Promise((resolve) => setTimeout(resolve, 5));
      });
    }
  });
  const all = Promise.all(workers);
  await vi.runAllTimersAsync();
  await all;
  return { starts, arrivals };
}

describe("SteadyPace", () => {
  beforeEach(() => {
    vi.useFakeTimers({ loopLimit: 100_000 });
  });
  afterEach(() => {
    vi.useRealTimers();
  });

  it("starts requests evenly spaced, at most perSecond + 2 in any second, at the full rate", async () => {
    const { starts } = await send(new SteadyPace(47, () => Date.now()), 500, 16, () => 3);
    expect(busiest(starts)).toBeLessThanOrEqual(49);
    const gaps = starts.slice(1).map((at, i) => at - (starts[i] ?? 0));
    expect(Math.min(...gaps)).toBeGreaterThanOrEqual(20);
    // 499 gaps of 1000/47 ms: no throughput lost to rounding or waiting.
    expect((starts.at(-1) ?? 0) - (starts[0] ?? 0)).toBeLessThanOrEqual(
      Math.ceil(499 * (1000 / 47)) + 1,
    );
  });

  it("keeps the server's count under the limit when requests bunch up on the way", async () => {
    // The way to the server jams for half a second, then clears: everything sent meanwhile arrives
    // at once, just before the requests sent after it.
    const t0 = Date.now();
    const jam = { from: t0 + 1000, to: t0 + 1500 };
    const { arrivals } = await send(new SteadyPace(47, () => Date.now()), 300, 16, (at) =>
      at >= jam.from && at < jam.to ? jam.to - at : 1,
    );
    expect(arrivals).toHaveLength(300);
    expect(busiest(arrivals)).toBeLessThanOrEqual(49);
  });
});
