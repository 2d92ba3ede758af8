import { existsSync } from "node:fs";
import { join } from "node:path";
import { createCanvas, loadImage } from "@napi-rs/canvas";
import { afterEach, describe, expect, it } from "vitest";
import { ownersReply } from "../commands/owners.ts";
import { ConsoleAdapter } from "../src/adapters/console/index.ts";
import type { ChartDrawer } from "../src/core/charts.ts";
import { defineCommand } from "../src/core/command.ts";
import { formatCount } from "../src/core/format.ts";
import { publicImageUrl } from "../src/core/images.ts";
import type { ChartSpec } from "../src/core/reply.ts";
import { silentLogger } from "../src/log.ts";
import { CachedChartDrawer } from "../src/render/chart-drawer.ts";
import {
  audienceChart,
  CHART_HEIGHT,
  CHART_WIDTH,
  ChartCache,
  compareChart,
  linesChart,
  ownersHistoryChart,
  rankingChart,
} from "../src/render/charts.ts";
import {
  type RuntimeSetup,
  runtimeWith,
  startClient,
  startRuntime,
  testInvocation,
} from "./helpers.ts";

const PNG_SIGNATURE = [0x89, 0x50, 0x4e, 0x47, 0x0d, 0x0a, 0x1a, 0x0a];

function pngSize(png: Uint8Array): { width: number; height: number } {
  const view = new DataView(png.buffer, png.byteOffset, png.byteLength);
  return { width: view.getUint32(16), height: view.getUint32(20) };
}

/** Variance of the luminance of every pixel: a blank picture has 0. */
async function luminanceVariance(png: Uint8Array): Promise<number> {
  const image = await loadImage(Buffer.from(png));
  const canvas = createCanvas(image.width, image.height);
  const ctx = canvas.getContext("2d");
  ctx.drawImage(image, 0, 0);
  const { data } = ctx.getImageData(0, 0, image.width, image.height);
  let sum = 0;
  let sumSq = 0;
  const n = data.length / 4;
  for (let i = 0; i < data.length; i += 4) {
    const l = 0.2126 * (data[i] ?? 0) + 0.7152 * (data[i + 1] ?? 0) + 0.0722 * (data[i + 2] ?? 0);
    sum += l;
    sumSq += l * l;
  }
  return sumSq / n - (sum / n) ** 2;
}

async function expectChart(drawn: Uint8Array | Promise<Uint8Array> | undefined): Promise<void> {
  const png = await drawn;
  expect(png).toBeDefined();
  const bytes = png as Uint8Array;
  expect([...bytes.subarray(0, 8)]).toEqual(PNG_SIGNATURE);
  expect(pngSize(bytes)).toEqual({ width: CHART_WIDTH, height: CHART_HEIGHT });
  expect(await luminanceVariance(bytes)).toBeGreaterThan(50);
}

const points = Array.from({ length: 30 }, (_, i) => ({
  timestamp: new Date(Date.UTC(2026, 9, 24 + i)).toISOString(),
  count: String(400 + i * (i % 3)),
}));

const trendDays = points.map((point) =>
  new Date(point.timestamp).toLocaleDateString("en-US", {
    month: "short",
    day: "numeric",
    timeZone: "UTC",
  }),
);
const trendSeries = [
  { name: "Members", values: trendDays.map((_, i) => 100 + i * 2) },
  { name: "Proved wallets", values: trendDays.map((_, i) => (i % 7 === 3 ? null : 40 + i)) },
  { name: "Whales", values: trendDays.map((_, i) => 10 + (i % 4)) },
];
const compareRows: { label: string; values: [number | undefined, number | undefined] }[] = [
  { label: "Whale", values: [12, 4] },
  { label: "Trader", values: [30, 41] },
  { label: "Newbie", values: [undefined, 9] },
];

describe("charts", () => {
  it("owner-count history, rankings and audience shares are 800x400 PNGs with something drawn", async () => {
    await expectChart(ownersHistoryChart("Owners", points));
    await expectChart(
      rankingChart("Top", "Sales volume (ETH)", [
        { label: "A", value: 3 },
        { label: "B", value: 1 },
      ]),
    );
    await expectChart(
      audienceChart("Audience", [
        { label: "Whale", share: 20, change: "+3" },
        { label: "Newbie", share: 80, change: "-1" },
      ]),
    );
  });

  it("trends (lines) and comparisons (bar pairs) are 800x400 PNGs with something drawn", async () => {
    await expectChart(linesChart("Members, 30 days", "Wallets", trendDays, trendSeries));
    await expectChart(
      compareChart("Your members vs Azuki", "Share (%)", ["Your members", "Azuki"], compareRows),
    );
    // A gap is drawn as a gap: the same series with that day at zero is another picture.
    const zeroed = trendSeries.map((line) => ({
      ...line,
      values: line.values.map((value) => value ?? 0),
    }));
    expect(
      Buffer.compare(
        await linesChart("T", "W", trendDays, trendSeries),
        await linesChart("T", "W", trendDays, zeroed),
      ),
    ).not.toBe(0);
  });

  it("trends and comparisons draw names with control characters and of any length", async () => {
    // The ranking fails on a NUL ("CString"); these kinds take their names from anywhere.
    const long = `Apes ${"🐒".repeat(60)}`;
    await expectChart(
      linesChart(`Trend\u0000 ${long}`, long, trendDays, [
        { name: `Apes\u0000\u0000`, values: trendSeries[0]?.values ?? [] },
        { name: long, values: trendSeries[1]?.values ?? [] },
      ]),
    );
    await expectChart(
      compareChart(
        `Vs\u0000 ${long}`,
        long,
        [long, "b\u0000"],
        [
          { label: long, values: [1, 2] },
          { label: "x\u0007", values: [3, 4] },
        ],
      ),
    );
  });

  it("an empty series gives a 'no data' picture instead of failing", async () => {
    for (const png of [
      ownersHistoryChart("Owners", []),
      rankingChart("Top", "x", []),
      audienceChart("Audience", []),
      linesChart("Trend", "W", trendDays, [{ name: "M", values: [] }]),
      linesChart("Trend", "W", [], []),
      compareChart("Vs", "%", ["a", "b"], []),
      compareChart("Vs", "%", ["a", "b"], [{ label: "x", values: [undefined, undefined] }]),
    ]) {
      await expectChart(png);
    }
    expect(
      Buffer.compare(
        await ownersHistoryChart("Owners", []),
        await ownersHistoryChart("Owners", points),
      ),
    ).not.toBe(0);
  });

  it("charts share one canvas: a chart that fails half-way leaves it clean for the next", async () => {
    // @napi-rs/canvas refuses a NUL in text ("Convert String to CString failed").
    await expect(rankingChart("Top\u0000", "x", [{ label: "A", value: 1 }])).rejects.toThrow();
    const [first, second] = [
      await rankingChart("Top", "x", [{ label: "A", value: 1 }]),
      await rankingChart("Top", "x", [{ label: "A", value: 1 }]),
    ];
    await expectChart(first);
    expect(Buffer.compare(first, second)).toBe(0);
    await expectChart(audienceChart("Audience", []));
    expect(Buffer.compare(await rankingChart("Top", "x", [{ label: "A", value: 1 }]), first)).toBe(
      0,
    );
  });

  it("the cache keys on the data: the same data is one render, new data a new picture", async () => {
    const cache = new ChartCache();
    let renders = 0;
    const render = () => {
      renders++;
      return ownersHistoryChart("Owners", points);
    };
    const first = await cache.get("owners:x:30d", points, render);
    expect(await cache.get("owners:x:30d", points, render)).toBe(first);
    await cache.get(
      "owners:x:30d",
      [...points, { timestamp: "2026-11-23T00:00:00Z", count: "1" }],
      render,
    );
    expect(renders).toBe(2);
    expect(cache.hits).toBe(1);
  });

  it("the cache is bounded in PNG bytes: the oldest pictures go first, the newest always stays", async () => {
    const cache = new ChartCache(60_000, 200, 100_000);
    const picture = (size: number) => async () => Buffer.alloc(size, 1);
    for (let i = 0; i < 10; i++) await cache.get(`k${i}`, i, picture(30_000));
    expect(cache.bytes).toBeLessThanOrEqual(100_000);
    expect(cache.bytes).toBe(90_000);
    let renders = 0;
    const counted = async () => {
      renders++;
      return Buffer.alloc(30_000);
    };
    await cache.get("k9", 9, counted); // newest: still there
    await cache.get("k0", 0, counted); // oldest: evicted, drawn again
    expect(renders).toBe(1);
    // One picture above the bound is kept alone rather than never cached.
    await cache.get("big", "big", picture(150_000));
    expect(cache.bytes).toBe(150_000);
    await cache.get("big", "big", counted);
    expect(renders).toBe(1);
  });
});

describe("charts in replies", () => {
  let t: RuntimeSetup;
  afterEach(async () => {
    await t?.close();
  });

  it("/owners, /top and /audience attach their chart; a second /top is served from the chart cache", async () => {
    t = await startRuntime();
    const { fixtures: f } = t.sim;
    for (const line of [
      `/owners ${f.collection} 30d`,
      "/top volume 7d 5",
      `/audience ${f.collection}`,
    ]) {
      const reply = await t.say(line);
      expect(reply.image?.kind, line).toBe("png");
      if (reply.image?.kind === "png") await expectChart(reply.image.data);
    }
    const before = t.charts.hits;
    await t.say("/top volume 7d 5");
    expect(t.charts.hits).toBe(before + 1);
  });

  it("/owners over one day has one point: no chart, the value and its day in words, and why", async () => {
    t = await startRuntime();
    const { collection } = t.sim.fixtures;
    const reply = await t.say(`/owners ${collection} 1d`);
    const { dataPoints } = await t.api.collections.ownersCount(collection, "DURATION_1_DAY");
    expect(dataPoints).toHaveLength(1);
    const point = dataPoints[0]!;
    expect(reply.image).toBeUndefined();
    expect(reply.text).toContain(
      `One data point in the last 1 day: ${formatCount(point.count)} owners on ${point.timestamp.slice(0, 10)}.`,
    );
    expect(reply.text).toContain("A chart needs two; try 7d.");
    // One point is no change: no first/last/min/max fields repeating the same number.
    expect(reply.fields?.map((f) => f.name) ?? []).not.toContain("Change");
  });

  it("/owners with no points says so and draws nothing", async () => {
    t = await startRuntime();
    const reply = await t.say(`/owners ${t.sim.fixtures.collection} 7d`);
    expect(reply.image?.kind).toBe("png");
    const empty = ownersReply({
      collection: t.sim.fixtures.collection,
      name: "Things",
      duration: "365d",
      holders: [],
      points: [],
      explorerUrl: "https://etherscan.io",
    });
    expect(empty.chart).toBeUndefined();
    expect(empty.text).toContain("No owner-count data in the last 365 days, so there is no chart.");
  });

  it("/top with one collection on the page answers with its table and says why there is no chart", async () => {
    t = await startRuntime();
    const reply = await t.say("/top volume 7d 1");
    expect(reply.table?.rows).toHaveLength(1);
    expect(reply.image).toBeUndefined();
    expect(reply.text).toBe(
      "One collection on this page: a chart needs two; ask for more, like /top volume 7d 10.",
    );
  });

  it("/audience with one category answers with its row and says why there is no chart", async () => {
    t = await startRuntime();
    t.sim.script([
      {
        status: 200,
        body: JSON.stringify({
          aggregatedBehaviors: [
            {
              behavior: "BEHAVIOR_WHALE",
              walletsCount: "5",
              walletsPercentage: 100,
              walletsCountChange30d: "1",
            },
          ],
        }),
      },
    ]);
    const reply = await t.say(`/audience ${t.sim.fixtures.collection}`);
    expect(reply.table?.rows).toHaveLength(1);
    expect(reply.image).toBeUndefined();
    expect(reply.text).toBe("All owners fall in one category: a chart needs two.");
  });

  it("the console writes the PNG under its exports folder, prints its path, and keeps it when it stops", async () => {
    t = await startRuntime();
    let printed = "";
    const output = new (await import("node:stream")).Writable({
      write(chunk, _encoding, callback) {
        printed += String(chunk);
        callback();
      },
    });
    const adapter = new ConsoleAdapter({
      runtime: t.runtime,
      logger: silentLogger(),
      output,
      interactive: false,
      exportDir: join(t.dataDir, "exports"),
    });
    await adapter.handleLine(`/owners ${t.sim.fixtures.collection}`);
    const path = /Picture: (\S+\.png)/.exec(printed)?.[1];
    expect(path).toBeDefined();
    expect(existsSync(path ?? "")).toBe(true);
    await adapter.stop();
    expect(existsSync(path ?? "")).toBe(true);
  });
});

describe("the chart port", () => {
  const spec: ChartSpec = {
    kind: "audience",
    subject: "audience:0xabc",
    title: "Audience of X",
    rows: [
      { label: "Whale", share: 20, change: "+3" },
      { label: "Collector", share: 80, change: "-3" },
    ],
  };
  const charted = defineCommand({
    name: "charted",
    description: "d",
    options: {},
    examples: [],
    run: async () => ({ text: "with a chart", chart: spec }),
  });

  /** A drawer that records what it is asked for and answers a tiny stand-in picture. */
  function recordingDrawer(): { asked: ChartSpec[]; charts: ChartDrawer } {
    const asked: ChartSpec[] = [];
    const charts: ChartDrawer = {
      draw: async (chart) => {
        asked.push(chart);
        return { kind: "png", data: new Uint8Array([1, 2, 3]), name: "a.png", alt: chart.title };
      },
    };
    return { asked, charts };
  }

  it("a reply's chart spec reaches the drawer, and the reply carries its picture, not the spec", async () => {
    const setup = await startClient();
    const { asked, charts } = recordingDrawer();
    const reply = await runtimeWith(setup, [charted], { charts }).run(
      testInvocation(),
      "charted",
      {},
    );
    expect(asked).toEqual([spec]);
    expect(reply.image).toEqual({
      kind: "png",
      data: new Uint8Array([1, 2, 3]),
      name: "a.png",
      alt: "Audience of X",
    });
    expect("chart" in reply).toBe(false);
    await setup.close();
  });

  it("a chart of fewer than two points never reaches the drawer: no empty plot goes out", async () => {
    const setup = await startClient();
    const { asked, charts } = recordingDrawer();
    const lonely = (chart: ChartSpec) =>
      defineCommand({
        name: "lonely",
        description: "d",
        options: {},
        examples: [],
        run: async () => ({ text: "one point", chart }),
      });
    for (const chart of [
      { ...spec, rows: spec.rows.slice(0, 1) },
      { kind: "owners-history", subject: "o", title: "O", points: [] },
      {
        kind: "ranking",
        subject: "r",
        title: "R",
        axis: "Sales",
        items: [
          { label: "A", value: "3" },
          { label: "B", value: undefined },
        ],
      },
    ] satisfies ChartSpec[]) {
      const reply = await runtimeWith(setup, [lonely(chart)], { charts }).run(
        testInvocation(),
        "lonely",
        {},
      );
      expect(reply.text).toBe("one point");
      expect(reply.image).toBeUndefined();
    }
    expect(asked).toEqual([]);
    await setup.close();
  });

  it("the drawer draws a lines and a compare spec, each under its own file name", async () => {
    const drawer = new CachedChartDrawer();
    const trend = await drawer.draw(
      {
        kind: "lines",
        subject: "trend:x",
        title: "Trend of X",
        axis: "Wallets",
        labels: trendDays,
        series: trendSeries,
      },
      silentLogger(),
    );
    const versus = await drawer.draw(
      {
        kind: "compare",
        subject: "compare:x",
        title: "X vs Azuki",
        axis: "Share (%)",
        groups: ["X", "Azuki"],
        rows: compareRows,
      },
      silentLogger(),
    );
    expect(trend).toMatchObject({ kind: "png", name: "trend.png", alt: "Trend of X" });
    expect(versus).toMatchObject({ kind: "png", name: "compare.png", alt: "X vs Azuki" });
    if (trend?.kind === "png") await expectChart(trend.data);
    if (versus?.kind === "png") await expectChart(versus.data);
  });

  it("a chart the drawer cannot draw leaves the reply without a picture", async () => {
    const setup = await startClient();
    const charts: ChartDrawer = { draw: async () => undefined };
    const reply = await runtimeWith(setup, [charted], { charts }).run(
      testInvocation(),
      "charted",
      {},
    );
    expect(reply.text).toBe("with a chart");
    expect(reply.image).toBeUndefined();
    await setup.close();
  });

  it("the chart is drawn within the command's deadline", async () => {
    const setup = await startClient();
    const charts: ChartDrawer = { draw: () => new Promise(() => {}) };
    const reply = await runtimeWith(setup, [charted], { charts, deadlineMs: 200 }).run(
      testInvocation(),
      "charted",
      {},
    );
    expect(reply.text).toMatch(/took longer than/);
    await setup.close();
  });
});

describe("NFT images", () => {
  it("prefers http(s), rewrites ipfs:// through the configured gateway, and refuses the rest", () => {
    const gateway = "https://gw.example/ipfs/";
    expect(publicImageUrl("https://img.example/1.png", gateway)).toBe("https://img.example/1.png");
    expect(publicImageUrl("ipfs://QmHash/1.png", gateway)).toBe(
      "https://gw.example/ipfs/QmHash/1.png",
    );
    expect(publicImageUrl("ipfs://ipfs/QmHash", gateway)).toBe("https://gw.example/ipfs/QmHash");
    expect(publicImageUrl("ipfs:////evil.example/x", gateway)).toMatch(/^https:\/\/gw\.example\//);
    expect(publicImageUrl("data:image/svg+xml;base64,AAAA", gateway)).toBeUndefined();
    expect(publicImageUrl("javascript:alert(1)", gateway)).toBeUndefined();
    expect(publicImageUrl("http://metadata/computeMetadata/v1/", gateway)).toBeUndefined();
    expect(publicImageUrl(undefined, gateway)).toBeUndefined();
  });
});
