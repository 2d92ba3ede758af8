/**
 * The "lines" and "compare" charts (the insights' trends and comparisons): how many points a spec
 * has, so a chart of one day or one category is never drawn, and what their configurations ask of
 * Chart.js, checked without drawing. The pictures themselves are drawn in test/charts.test.ts.
 */

import type { ChartConfiguration } from "chart.js";
import { describe, expect, it } from "vitest";
import { CHART_LIMITS, chartable, chartPoints } from "../src/core/charts.ts";
import type { ChartSpec } from "../src/core/reply.ts";
import {
  audienceConfig,
  chartText,
  compareConfig,
  linesConfig,
  ownersConfig,
  rankingConfig,
} from "../src/render/chart-drawing.ts";

const lines = (
  labels: string[],
  series: { name: string; values: (number | null)[] }[],
): ChartSpec => ({ kind: "lines", subject: "s", title: "T", axis: "A", labels, series });

const compare = (
  rows: { label: string; values: [number | undefined, number | undefined] }[],
): ChartSpec => ({
  kind: "compare",
  subject: "s",
  title: "T",
  axis: "%",
  groups: ["a", "b"],
  rows,
});

const days = (n: number) => Array.from({ length: n }, (_, i) => `Nov ${i + 1}`);

describe("chartPoints of a lines chart: the days with at least one value", () => {
  it("counts a day once however many series have it, and not at all when none has", () => {
    const spec = lines(days(4), [
      { name: "Members", values: [10, null, 12, null] },
      { name: "Proved", values: [3, null, null, null] },
    ]);
    expect(chartPoints(spec)).toBe(2);
    expect(chartable(spec)).toBe(true);
  });

  it("one day with values is no chart; neither are missing, NaN or unseen values", () => {
    expect(chartPoints(lines(days(3), [{ name: "M", values: [null, 5, null] }]))).toBe(1);
    expect(chartable(lines(days(3), [{ name: "M", values: [null, 5, null] }]))).toBe(false);
    // Values shorter than the labels, and a NaN the painter would not place.
    expect(chartPoints(lines(days(3), [{ name: "M", values: [Number.NaN, 5] }]))).toBe(1);
    expect(chartPoints(lines(days(3), []))).toBe(0);
    expect(chartPoints(lines([], [{ name: "M", values: [1, 2] }]))).toBe(0);
  });

  it("counts only what the painter draws: the latest days, the first series", () => {
    const many = days(CHART_LIMITS.labels + 10);
    // Values only in the ten oldest days, which the painter leaves out.
    const old = many.map((_, i) => (i < 10 ? i : null));
    expect(chartPoints(lines(many, [{ name: "M", values: old }]))).toBe(0);
    const hidden = Array.from({ length: CHART_LIMITS.series + 1 }, (_, i) => ({
      name: `s${i}`,
      values: i === CHART_LIMITS.series ? [1, 2, 3] : [null, null, null],
    }));
    expect(chartPoints(lines(days(3), hidden))).toBe(0);
  });
});

describe("chartPoints of a compare chart: the rows with at least one value", () => {
  it("a row with one group's value counts, a row with neither does not", () => {
    const spec = compare([
      { label: "whale", values: [12, 4] },
      { label: "trader", values: [undefined, 7] },
      { label: "newbie", values: [undefined, undefined] },
    ]);
    expect(chartPoints(spec)).toBe(2);
    expect(chartable(spec)).toBe(true);
    expect(chartable(compare([{ label: "whale", values: [12, 4] }]))).toBe(false);
  });

  it("counts only the rows the painter draws", () => {
    const rows = Array.from({ length: CHART_LIMITS.rows + 5 }, (_, i) => ({
      label: `r${i}`,
      values: [i, undefined] as [number | undefined, number | undefined],
    }));
    expect(chartPoints(compare(rows))).toBe(CHART_LIMITS.rows);
  });
});

describe("the lines chart's configuration", () => {
  const config = linesConfig("Trend of X", "Count", days(3), [
    { name: "Members", values: [10, null, 12] },
    { name: "Proved wallets", values: [3, 4, 5] },
    { name: "Whales", values: [1, 1] },
  ]);

  it("draws straight segments between visible points, never a smoothed curve", () => {
    expect(config.type).toBe("line");
    expect(config.data.datasets).toHaveLength(3);
    for (const line of config.data.datasets) {
      expect(line.tension).toBe(0);
      expect(line.pointRadius).toBeGreaterThan(0);
      expect(line.fill).toBe(false);
    }
  });

  it("names each series in a legend, each in its own colour", () => {
    expect(config.options?.plugins?.legend?.display).toBe(true);
    expect(config.data.datasets.map((line) => line.label)).toEqual([
      "Members",
      "Proved wallets",
      "Whales",
    ]);
    const colors = config.data.datasets.map((line) => line.borderColor);
    expect(new Set(colors).size).toBe(3);
  });

  it("a day without a value is a gap, not a zero, and a short series ends in gaps", () => {
    expect(config.data.labels).toEqual(["Nov 1", "Nov 2", "Nov 3"]);
    expect(config.data.datasets.map((line) => line.data)).toEqual([
      [10, null, 12],
      [3, 4, 5],
      [1, 1, null],
    ]);
    expect(config.data.datasets.every((line) => line.spanGaps === false)).toBe(true);
  });

  it("keeps the latest days and the first series, all in distinct colours", () => {
    const many = days(CHART_LIMITS.labels + 5);
    const series = Array.from({ length: CHART_LIMITS.series + 3 }, (_, i) => ({
      name: `s${i}`,
      values: many.map((_, day) => day + i),
    }));
    const capped = linesConfig("T", "A", many, series);
    expect(capped.data.labels).toEqual(many.slice(5));
    expect(capped.data.datasets).toHaveLength(CHART_LIMITS.series);
    expect(capped.data.datasets[0]?.data[0]).toBe(5);
    expect(new Set(capped.data.datasets.map((line) => line.borderColor)).size).toBe(
      CHART_LIMITS.series,
    );
  });
});

describe("the compare chart's configuration", () => {
  const config = compareConfig(
    "Your members vs Azuki",
    "Share (%)",
    ["Your members", "Azuki"],
    [
      { label: "whale", values: [12, 4] },
      { label: "trader", values: [undefined, 7] },
    ],
  );

  it("two bars per category side by side, named in a legend, in two colours", () => {
    expect(config.type).toBe("bar");
    expect(config.data.labels).toEqual(["whale", "trader"]);
    expect(config.data.datasets.map((group) => group.label)).toEqual(["Your members", "Azuki"]);
    expect(config.data.datasets.map((group) => group.data)).toEqual([
      [12, null],
      [4, 7],
    ]);
    expect(config.data.datasets[0]?.backgroundColor).not.toBe(
      config.data.datasets[1]?.backgroundColor,
    );
    expect(config.options?.plugins?.legend?.display).toBe(true);
  });

  it("keeps the first rows", () => {
    const rows = Array.from({ length: CHART_LIMITS.rows + 1 }, (_, i) => ({
      label: `r${i}`,
      values: [i, i] as [number, number],
    }));
    const capped = compareConfig("T", "A", ["a", "b"], rows);
    expect(capped.data.labels).toHaveLength(CHART_LIMITS.rows);
    expect(capped.data.labels?.[0]).toBe("r0");
  });
});

describe("names from the data, as the charts show them", () => {
  it("are cut like the ranking's labels, never inside a surrogate pair", () => {
    const long = "A".repeat(40);
    expect(chartText(long)).toBe(`${"A".repeat(CHART_LIMITS.name - 1)}…`);
    expect(chartText("short")).toBe("short");
    // An emoji (two UTF-16 units) at the cut: kept whole or left out, never half.
    const emoji = `${"a".repeat(CHART_LIMITS.name - 2)}😀😀😀`;
    const cut = chartText(emoji);
    expect(cut).toBe(`${"a".repeat(CHART_LIMITS.name - 2)}😀…`);
    // Well-formed: UTF-8 has no lone surrogate, so the round trip would change one.
    expect(Buffer.from(cut, "utf8").toString("utf8")).toBe(cut);
  });

  it("lose their control characters: a bytes32 name's NUL padding would fail the whole chart", () => {
    expect(chartText("Apes\u0000\u0000\u0000")).toBe("Apes");
    expect(chartText("two\nlines")).toBe("two lines");
    const config = linesConfig("T\u0000", "A", ["Nov 1\u0000"], [{ name: "N\u0000", values: [1] }]);
    expect(config.data.labels).toEqual(["Nov 1"]);
    expect(config.data.datasets[0]?.label).toBe("N");
    expect(compareConfig("T", "A", ["x\u0007", "y"], []).data.datasets[0]?.label).toBe("x");
  });

  it("series names, row labels and group names are all cut", () => {
    const long = "B".repeat(100);
    const trend = linesConfig(long, long, [long], [{ name: long, values: [1] }]);
    expect(trend.data.labels?.[0]).toHaveLength(CHART_LIMITS.name);
    expect(trend.data.datasets[0]?.label).toHaveLength(CHART_LIMITS.name);
    const pairs = compareConfig(long, long, [long, long], [{ label: long, values: [1, 2] }]);
    expect(pairs.data.labels?.[0]).toHaveLength(CHART_LIMITS.name);
    expect(pairs.data.datasets.map((group) => group.label?.length)).toEqual([
      CHART_LIMITS.name,
      CHART_LIMITS.name,
    ]);
  });
});

describe("every line chart draws its days as they were", () => {
  // One configuration per kind of chart a reply may ask for: a new kind must be added here.
  const configs: Record<ChartSpec["kind"], () => ChartConfiguration> = {
    "owners-history": () =>
      ownersConfig(
        "Owners",
        [400, 380, 420, 900, 410].map((count, day) => ({
          timestamp: `2026-11-0${day + 1}T00:00:00Z`,
          count: String(count),
        })),
      ) as ChartConfiguration,
    lines: () =>
      linesConfig("Trend", "Count", days(4), [
        { name: "Members", values: [1, 9, 2, 8] },
      ]) as ChartConfiguration,
    ranking: () => rankingConfig("Top", "Volume", [{ label: "A", value: 1 }]) as ChartConfiguration,
    audience: () =>
      audienceConfig("Audience", [
        { label: "Whale", share: 5, change: "+1" },
      ]) as ChartConfiguration,
    compare: () =>
      compareConfig(
        "Compare",
        "%",
        ["a", "b"],
        [{ label: "x", values: [1, 2] }],
      ) as ChartConfiguration,
  };

  it("straight segments or a monotone curve: no line swings past the values it joins", () => {
    const lineKinds = Object.entries(configs).filter(([, config]) => config().type === "line");
    expect(lineKinds.map(([kind]) => kind).sort()).toEqual(["lines", "owners-history"]);
    for (const [kind, config] of lineKinds) {
      const { datasets } = config().data;
      expect(datasets.length, kind).toBeGreaterThan(0);
      for (const line of datasets as { tension?: number; cubicInterpolationMode?: string }[]) {
        const straight = (line.tension ?? 0) === 0;
        expect(straight || line.cubicInterpolationMode === "monotone", kind).toBe(true);
      }
    }
  });
});
