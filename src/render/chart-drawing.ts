import type { SKRSContext2D } from "@napi-rs/canvas";
import type { ChartConfiguration, Plugin } from "chart.js";
import { CHART_LIMITS } from "../core/charts.ts";
import { chartFont, FONT_FAMILY, registerChartFonts } from "./chart-fonts.ts";
import { type TickFormatter, withoutIntl } from "./chart-numbers.ts";

/**
 * The drawing itself: Chart.js on @napi-rs/canvas (Skia, prebuilt inside the npm package), with
 * fonts shipped in npm packages (chart-fonts.ts: text, and emoji in colour) so text renders on
 * machines that have no fonts. Charts have their
 * own opaque background, so they read the same on dark and light chat themes. This module runs in
 * the chart painter's child process (see charts.ts), which loads both libraries on its first chart.
 */

export const CHART_WIDTH = 800;
export const CHART_HEIGHT = 400;
const COLORS = {
  background: "#ffffff",
  text: "#1f2328",
  muted: "#57606a",
  grid: "#d0d7de",
  line: "#0969da",
  fill: "rgba(9, 105, 218, 0.15)",
  bar: "#0969da",
  up: "#1a7f37",
  down: "#cf222e",
};
/**
 * One colour per line or group, in order: apart in hue and in lightness, so neighbours stay apart
 * for most colour-blind readers too (blue then orange, never red beside green), and none pale
 * enough to vanish on the white background.
 */
const SERIES_COLORS = [
  "#0969da",
  "#bc4c00",
  "#1a7f37",
  "#8250df",
  "#cf222e",
  "#1b7c83",
  "#bf3989",
  "#57606a",
] as const;

interface Drawing {
  /**
   * The one canvas every chart is drawn on, one chart at a time (a draw is synchronous once the
   * libraries are loaded). A canvas's pixels live outside the JavaScript heap, where the garbage
   * collector does not see them: a canvas per chart grew the process by about 1.7 MB per chart
   * drawn (350 MB after 200 charts) until a collection happened to run.
   */
  canvas: import("@napi-rs/canvas").Canvas;
  Chart: typeof import("chart.js").Chart;
}

let drawing: Promise<Drawing> | undefined;

/** Loads the canvas and Chart.js, and registers Chart.js's parts and the shipped font, once. */
function setUp(): Promise<Drawing> {
  drawing ??= (async () => {
    const [{ createCanvas }, { Chart, registerables }] = await Promise.all([
      import("@napi-rs/canvas"),
      import("chart.js"),
      registerChartFonts(),
    ]);
    Chart.register(...registerables);
    // Linear axes' numbers without Intl, which would load ICU's number data (chart-numbers.ts);
    // Chart.js's own formatter still writes what that one leaves to it.
    const ticks = Chart.defaults.scales.linear?.ticks as unknown as
      | { callback: TickFormatter }
      | undefined;
    if (ticks) ticks.callback = withoutIntl(ticks.callback);
    Chart.defaults.font.family = FONT_FAMILY;
    Chart.defaults.color = COLORS.text;
    return { canvas: createCanvas(CHART_WIDTH, CHART_HEIGHT), Chart };
  })().catch((error: unknown) => {
    // The next chart tries again rather than failing for ever.
    drawing = undefined;
    throw error;
  });
  return drawing;
}

const background: Plugin = {
  id: "background",
  beforeDraw(chart) {
    const { ctx, width, height } = chart;
    ctx.save();
    ctx.fillStyle = COLORS.background;
    ctx.fillRect(0, 0, width, height);
    ctx.restore();
  },
};

/** A picture that says there is nothing to draw, instead of an empty or failed chart. */
async function noDataPicture(title: string, message: string): Promise<Buffer> {
  const { canvas } = await setUp();
  const ctx = canvas.getContext("2d");
  ctx.reset();
  ctx.fillStyle = COLORS.background;
  ctx.fillRect(0, 0, CHART_WIDTH, CHART_HEIGHT);
  ctx.fillStyle = COLORS.text;
  ctx.textAlign = "center";
  ctx.font = chartFont(20, "bold");
  ctx.fillText(title, CHART_WIDTH / 2, 48, CHART_WIDTH - 40);
  ctx.fillStyle = COLORS.muted;
  ctx.font = chartFont(18);
  ctx.fillText(message, CHART_WIDTH / 2, CHART_HEIGHT / 2, CHART_WIDTH - 40);
  return canvas.toBuffer("image/png");
}

async function draw(config: ChartConfiguration): Promise<Buffer> {
  const { canvas, Chart } = await setUp();
  const ctx = canvas.getContext("2d") as SKRSContext2D;
  ctx.reset();
  // Skia's context implements the canvas API Chart.js draws with; only the DOM type differs.
  const item = ctx as unknown as ConstructorParameters<typeof Chart>[0];
  // A draw that failed half-way leaves its chart holding the shared canvas.
  Chart.getChart(item)?.destroy();
  const chart = new Chart(item, {
    ...config,
    options: {
      ...config.options,
      responsive: false,
      animation: false,
      devicePixelRatio: 1,
      // The bot writes every figure in en-US; without it, tick labels followed the host's LANG.
      locale: "en-US",
      layout: { padding: 12 },
    },
    plugins: [...(config.plugins ?? []), background],
  });
  try {
    return canvas.toBuffer("image/png");
  } finally {
    chart.destroy();
  }
}

const titleOptions = (text: string) => ({
  display: true,
  text,
  font: { size: 18, weight: "bold" as const },
  color: COLORS.text,
  padding: { bottom: 12 },
});

const axisTitle = (text: string) => ({
  display: true,
  text,
  color: COLORS.muted,
  font: { size: 13 },
});

/** Chart.js needs numbers; amounts arrive as decimal strings and are plotted approximately. */
export function plotValue(decimal: string | undefined): number {
  const value = Number(decimal ?? "0");
  return Number.isFinite(value) ? value : 0;
}

/** The owners chart's configuration, kept apart from the drawing so it can be checked. */
export function ownersConfig(
  title: string,
  points: { timestamp: string; count: string }[],
): ChartConfiguration<"line", number[], string> {
  return {
    type: "line",
    data: {
      labels: points.map((point) => point.timestamp.slice(0, 10)),
      datasets: [
        {
          label: "Owners",
          data: points.map((point) => plotValue(point.count)),
          borderColor: COLORS.line,
          backgroundColor: COLORS.fill,
          fill: true,
          pointRadius: points.length > 60 ? 0 : 2,
          borderWidth: 2,
          // Straight segments between the days, as the lines chart: a smoothed curve showed
          // counts between two days that no day had, and swung past the real highs and lows.
          tension: 0,
        },
      ],
    },
    options: {
      plugins: { title: titleOptions(title), legend: { display: false } },
      scales: {
        x: {
          title: axisTitle("Date (UTC)"),
          ticks: { maxTicksLimit: 10, color: COLORS.muted },
          grid: { color: COLORS.grid },
        },
        y: {
          title: axisTitle("Owners"),
          ticks: { color: COLORS.muted },
          grid: { color: COLORS.grid },
        },
      },
    },
  };
}

/** Owner count over time: a line, dates on the x axis. */
export async function ownersHistoryChart(
  ...args: Parameters<typeof ownersConfig>
): Promise<Buffer> {
  const [title, points] = args;
  if (points.length === 0) return noDataPicture(title, "No owner-count data for this period.");
  return draw(ownersConfig(...args));
}

/**
 * The ranking chart's configuration: one bar per collection, highest on top, each labelled with
 * its rank in the whole list when it has one ("11. Azuki" on a second page), the label cut
 * between characters, never inside an emoji.
 */
export function rankingConfig(
  title: string,
  axis: string,
  items: { label: string; value: number; rank?: number | undefined }[],
): ChartConfiguration<"bar", number[], string> {
  return {
    type: "bar",
    data: {
      labels: items.map((item) =>
        chartText(item.rank === undefined ? item.label : `${item.rank}. ${item.label}`),
      ),
      datasets: [
        { label: axis, data: items.map((item) => item.value), backgroundColor: COLORS.bar },
      ],
    },
    options: {
      indexAxis: "y",
      plugins: { title: titleOptions(title), legend: { display: false } },
      scales: {
        x: { title: axisTitle(axis), ticks: { color: COLORS.muted }, grid: { color: COLORS.grid } },
        y: { ticks: { color: COLORS.text, autoSkip: false }, grid: { display: false } },
      },
    },
  };
}

/** Ranked collections: horizontal bars, highest on top. */
export async function rankingChart(...args: Parameters<typeof rankingConfig>): Promise<Buffer> {
  const [title, , items] = args;
  if (items.length === 0) return noDataPicture(title, "No collections ranked for this period.");
  return draw(rankingConfig(...args));
}

/** How a category's wallet count moved in 30 days, as its bar's colour and the legend say it. */
const AUDIENCE_MOVES = [
  { sign: "+", legend: "More wallets than 30 days ago", color: COLORS.up },
  { sign: "-", legend: "Fewer wallets than 30 days ago", color: COLORS.down },
  { sign: "0", legend: "No change in 30 days", color: COLORS.bar },
  { sign: "", legend: "30-day change not known", color: COLORS.muted },
] as const;

/** The move a change as shown ("+3", "-1", "0", "n/a") is. */
function audienceMove(change: string): (typeof AUDIENCE_MOVES)[number] {
  const sign = change.startsWith("+")
    ? "+"
    : change.startsWith("-")
      ? "-"
      : change === "0"
        ? "0"
        : "";
  return AUDIENCE_MOVES.find((move) => move.sign === sign) ?? AUDIENCE_MOVES[3];
}

/**
 * A category's 30-day change in words, for its bar's label: the service counts wallets
 * (walletsCountChange30d), so "+3" is three wallets more than 30 days ago, not points of share.
 */
export function changeWords(change: string): string {
  const count = change.replace(/^[+-]/, "");
  const wallets = count === "1" ? "wallet" : "wallets";
  switch (audienceMove(change).sign) {
    case "+":
      return `+${count} ${wallets} in 30 days`;
    case "-":
      return `\u2212${count} ${wallets} in 30 days`;
    case "0":
      return "no change in 30 days";
    default:
      return "30-day change not known";
  }
}

/**
 * The audience chart's configuration: one bar per category, its label saying its 30-day change
 * in words, its colour that change's direction, and a legend naming each colour shown. One
 * dataset per colour (the legend's entries), each holding only its own categories' bars, laid
 * over each other (not grouped) so every category keeps one full bar.
 */
export function audienceConfig(
  title: string,
  rows: { label: string; share: number; change: string }[],
): ChartConfiguration<"bar", (number | null)[], string> {
  const moves = rows.map((row) => audienceMove(row.change));
  return {
    type: "bar",
    data: {
      labels: rows.map((row) => `${chartText(row.label)} (${changeWords(row.change)})`),
      datasets: AUDIENCE_MOVES.filter((move) => moves.includes(move)).map((move) => ({
        label: move.legend,
        data: rows.map((row, i) => (moves[i] === move ? row.share : null)),
        backgroundColor: move.color,
        grouped: false,
      })),
    },
    options: {
      indexAxis: "y",
      plugins: { title: titleOptions(title), legend: legendOptions },
      scales: {
        x: {
          title: axisTitle("Share of owners (%)"),
          min: 0,
          ticks: { color: COLORS.muted },
          grid: { color: COLORS.grid },
        },
        y: { ticks: { color: COLORS.text, autoSkip: false }, grid: { display: false } },
      },
    },
  };
}

/** Behavior shares: one bar per category, labelled with its 30-day change, coloured by its sign. */
export async function audienceChart(...args: Parameters<typeof audienceConfig>): Promise<Buffer> {
  const [title, rows] = args;
  if (rows.length === 0) return noDataPicture(title, "No behavior data for this collection.");
  return draw(audienceConfig(...args));
}

/** A title drawn on one line: at 18 px bold, about this many characters fill the picture's width. */
const TITLE_CHARS = 80;

/**
 * Text from the data (a collection's name, a category, a day) as a chart shows it: control
 * characters out (the canvas refuses a NUL outright, and a bytes32 name ends in NUL padding; the
 * API's schemas strip them on the way in, but a spec's names may come from elsewhere), and at most
 * `max` characters, cut with "…" like the ranking's labels. Cut by code points, never inside a
 * surrogate pair, without Intl's grapheme segmenter (ICU data the painter does not otherwise load,
 * see chart-numbers.ts).
 */
export function chartText(text: string, max: number = CHART_LIMITS.name): string {
  const clean = text.replace(/[\u0000-\u001f\u007f-\u009f]+/g, " ").trim();
  if (clean.length <= max) return clean;
  const chars = Array.from(clean);
  return chars.length <= max ? clean : `${chars.slice(0, max - 1).join("")}…`;
}

/** A value Chart.js can place, or null for no point (NaN would be plotted as nothing anyway). */
const plotted = (value: number | null | undefined): number | null =>
  typeof value === "number" && Number.isFinite(value) ? value : null;

const legendOptions = {
  display: true,
  position: "bottom" as const,
  labels: { color: COLORS.text, boxWidth: 14, font: { size: 12 } },
};

/** The color of the index-th line or group. */
const seriesColor = (index: number): string =>
  SERIES_COLORS[index % SERIES_COLORS.length] ?? COLORS.line;

/**
 * The "lines" chart's configuration, kept apart from the drawing so what it asks of Chart.js can
 * be checked without drawing. Straight segments (tension 0): a smoothed curve would show values
 * between two days that no day had, and overshoot past the real highs and lows. A null value is
 * a gap, not a zero; the latest {@link CHART_LIMITS}.labels days and the first series are kept.
 */
export function linesConfig(
  title: string,
  axis: string,
  labels: string[],
  series: { name: string; values: (number | null)[] }[],
): ChartConfiguration<"line", (number | null)[], string> {
  const start = Math.max(0, labels.length - CHART_LIMITS.labels);
  const days = labels.slice(start);
  return {
    type: "line",
    data: {
      labels: days.map((label) => chartText(label)),
      datasets: series.slice(0, CHART_LIMITS.series).map((line, index) => ({
        label: chartText(line.name),
        data: days.map((_, day) => plotted(line.values[start + day])),
        borderColor: seriesColor(index),
        backgroundColor: seriesColor(index),
        fill: false,
        spanGaps: false,
        tension: 0,
        pointRadius: 3,
        borderWidth: 2,
      })),
    },
    options: {
      plugins: { title: titleOptions(chartText(title, TITLE_CHARS)), legend: legendOptions },
      scales: {
        x: { ticks: { maxTicksLimit: 15, color: COLORS.muted }, grid: { color: COLORS.grid } },
        y: {
          title: axisTitle(chartText(axis, TITLE_CHARS)),
          ticks: { color: COLORS.muted },
          grid: { color: COLORS.grid },
        },
      },
    },
  };
}

/**
 * The "compare" chart's configuration: per category, one bar for each of the two groups, side by
 * side, the legend naming which colour is which group. Horizontal like the audience chart, so
 * category names read across rather than slanted; the first {@link CHART_LIMITS}.rows rows.
 */
export function compareConfig(
  title: string,
  axis: string,
  groups: [string, string],
  rows: { label: string; values: [number | undefined, number | undefined] }[],
): ChartConfiguration<"bar", (number | null)[], string> {
  const shown = rows.slice(0, CHART_LIMITS.rows);
  return {
    type: "bar",
    data: {
      labels: shown.map((row) => chartText(row.label)),
      datasets: groups.map((group, index) => ({
        label: chartText(group),
        data: shown.map((row) => plotted(row.values[index])),
        backgroundColor: seriesColor(index),
      })),
    },
    options: {
      indexAxis: "y",
      plugins: { title: titleOptions(chartText(title, TITLE_CHARS)), legend: legendOptions },
      scales: {
        x: {
          title: axisTitle(chartText(axis, TITLE_CHARS)),
          ticks: { color: COLORS.muted },
          grid: { color: COLORS.grid },
        },
        y: { ticks: { color: COLORS.text, autoSkip: false }, grid: { display: false } },
      },
    },
  };
}

/** Several series over the same days: a straight line each, with its points and a legend. */
export async function linesChart(...args: Parameters<typeof linesConfig>): Promise<Buffer> {
  const config = linesConfig(...args);
  const drawn = config.data.datasets.some((line) => line.data.some((value) => value !== null));
  if (!drawn) return noDataPicture(chartText(args[0], TITLE_CHARS), "No data for this period.");
  return draw(config);
}

/** Two groups side by side per category: horizontal bar pairs, a legend for the two colours. */
export async function compareChart(...args: Parameters<typeof compareConfig>): Promise<Buffer> {
  const config = compareConfig(...args);
  const drawn = config.data.datasets.some((group) => group.data.some((value) => value !== null));
  if (!drawn) return noDataPicture(chartText(args[0], TITLE_CHARS), "No data to compare.");
  return draw(config);
}
