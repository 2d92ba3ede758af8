/**
 * Issue 12, item 3: a chart that cannot be drawn drops the picture, never the answer. The chart
 * functions are wrapped so they meet the real failure of @napi-rs/canvas on a NUL in a string
 * ("Convert String to CString failed"), which no longer comes from the client's data.
 */
import { afterEach, describe, expect, it, vi } from "vitest";
import { capturingLogger, type RuntimeSetup, startRuntime } from "./helpers.ts";

vi.mock("../src/render/charts.ts", async (importOriginal) => {
  const real = await importOriginal<typeof import("../src/render/charts.ts")>();
  return {
    ...real,
    rankingChart: (title: string, ...rest: [string, { label: string; value: number }[]]) =>
      real.rankingChart(`${title}\u0000`, ...rest),
    ownersHistoryChart: (title: string, points: { timestamp: string; count: string }[]) =>
      real.ownersHistoryChart(`${title}\u0000`, points),
    audienceChart: (title: string, rows: { label: string; share: number; change: string }[]) =>
      real.audienceChart(`${title}\u0000`, rows),
  };
});

describe("a chart that fails", () => {
  let t: RuntimeSetup;
  afterEach(async () => {
    await t?.close();
  });

  it("/top, /owners and /audience answer with their text and no picture, and the failure is logged once each", async () => {
    const { logger, lines } = capturingLogger();
    t = await startRuntime({}, {}, [], { logger });
    const { fixtures: f } = t.sim;
    const cases: [string, RegExp][] = [
      ["/top volume 7d 5", /^Top collections by sales volume/],
      [`/owners ${f.collection} 30d`, /^Owners of /],
      [`/audience ${f.collection}`, /^Audience of /],
    ];
    for (const [line, title] of cases) {
      const reply = await t.say(line);
      expect(reply.title, line).toMatch(title);
      expect(reply.table?.rows.length, line).toBeGreaterThan(0);
      expect(reply.image, line).toBeUndefined();
    }
    const failures = lines.filter((line) => line.includes("chart could not be drawn"));
    expect(failures).toHaveLength(3);
    expect(failures.join("\n")).toContain("Convert String to CString failed");
    expect(failures.every((line) => JSON.parse(line).level === 40)).toBe(true);
  });
});
