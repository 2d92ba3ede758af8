import fc from "fast-check";
import { describe, expect, it, vi } from "vitest";
import { formatFixed } from "../src/render/chart-numbers.ts";

/**
 * The painter writes axis numbers without Intl (issue 34, item 10), and its pictures must stay
 * byte-identical to Chart.js's: every number is compared with Intl's en-US output for the same
 * decimals, the options Chart.js's tick formatter passes.
 */
const formats = new Map<number, Intl.NumberFormat>();
const intl = (value: number, digits: number) => {
  let format = formats.get(digits);
  if (!format) {
    format = new Intl.NumberFormat("en-US", {
      minimumFractionDigits: digits,
      maximumFractionDigits: digits,
    });
    formats.set(digits, format);
  }
  return format.format(value);
};

describe("formatFixed, against Intl.NumberFormat en-US", () => {
  it("writes any finite double with 0 to 20 decimals as Intl does", () => {
    fc.assert(
      fc.property(
        fc.double({ noNaN: true, noDefaultInfinity: true }),
        fc.integer({ min: 0, max: 20 }),
        (value, digits) => {
          expect(formatFixed(value, digits)).toBe(intl(value, digits));
        },
      ),
      { numRuns: 10_000 },
    );
  });

  it("writes the values axes show (steps of 1, 2 or 5 times a power of ten, and their sums) as Intl does", () => {
    const step = fc
      .tuple(fc.constantFrom(1, 2, 2.5, 5), fc.integer({ min: -8, max: 12 }))
      .map(([unit, power]) => unit * 10 ** power);
    fc.assert(
      fc.property(
        step,
        fc.integer({ min: -1000, max: 1000 }),
        fc.double({ min: -1e9, max: 1e9, noNaN: true }),
        fc.integer({ min: 0, max: 20 }),
        (delta, k, start, digits) => {
          // Chart.js builds ticks as start + k * step, which lands next to round numbers.
          for (const value of [
            k * delta,
            start + k * delta,
            Math.round(start / delta) * delta + k * delta,
          ])
            expect(formatFixed(value, digits)).toBe(intl(value, digits));
        },
      ),
      { numRuns: 10_000 },
    );
  });

  it("rounds halves away from zero, carries and groups like Intl", () => {
    for (const [value, digits] of [
      [0.5, 0],
      [1.5, 0],
      [2.5, 0],
      [-2.5, 0],
      [1.005, 2],
      [0.045, 2],
      [999.5, 0],
      [999_999.995, 2],
      [-0.001, 2],
      [-0, 1],
      [0, 3],
      [1e21, 0],
      [123456789.123, 1],
      [5e-324, 20],
      [Number.MAX_VALUE, 0],
      [0.1 + 0.2, 1],
      [0.1 + 0.2, 17],
    ] as const)
      expect(formatFixed(value, digits)).toBe(intl(value, digits));
  });
});

describe("the painter's charts", () => {
  it("write their axes without Intl, which would load ICU's number data into the painter", async () => {
    const { audienceChart, compareChart, linesChart, ownersHistoryChart, rankingChart } =
      await import("../src/render/chart-drawing.ts");
    const made = vi.spyOn(Intl, "NumberFormat");
    try {
      const points = Array.from({ length: 30 }, (_, d) => ({
        timestamp: new Date(Date.UTC(2025, 0, 1) + d * 86_400_000).toISOString(),
        count: String(1000 + d * 7),
      }));
      await ownersHistoryChart("Owners", points);
      await rankingChart("Top", "Volume (ETH)", [
        { label: "A", value: 12.5 },
        { label: "B", value: 3.25 },
      ]);
      await audienceChart("Audience", [
        { label: "Whale", share: 12.3, change: "+1" },
        { label: "Newbie", share: 0.4, change: "-2" },
      ]);
      await linesChart(
        "Trend",
        "Wallets",
        points.map((point) => point.timestamp.slice(5, 10)),
        [
          { name: "Members", values: points.map((_, d) => 1000 + d * 7) },
          { name: "Whales", values: points.map((_, d) => (d % 5 === 0 ? null : 0.5 * d)) },
        ],
      );
      await compareChart(
        "Versus",
        "Share (%)",
        ["Yours", "Theirs"],
        [
          { label: "Whale", values: [12.3, 4.1] },
          { label: "Newbie", values: [undefined, 0.4] },
        ],
      );
      expect(made).not.toHaveBeenCalled();
    } finally {
      made.mockRestore();
    }
  });
});
