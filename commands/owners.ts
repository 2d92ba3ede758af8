import { MIN_CHART_POINTS } from "../src/core/charts.ts";
import { defineCommand } from "../src/core/command.ts";
import {
  collectionName,
  compareIntegerStrings,
  explorer,
  formatChange,
  formatCount,
  formatDate,
  fullAddress,
  short,
} from "../src/core/format.ts";
import { opt } from "../src/core/options.ts";
import type { Reply, ReplyField } from "../src/core/reply.ts";
import {
  DURATION_CHOICES,
  type DurationChoice,
  durationApi,
  durationName,
} from "./shared/choices.ts";

const TOP_HOLDERS = 10;

interface OwnerCountPoint {
  timestamp: string;
  count: string;
}

interface OwnerCountSummary {
  first: OwnerCountPoint;
  last: OwnerCountPoint;
  min: OwnerCountPoint;
  max: OwnerCountPoint;
  /** last - first, as an int64 decimal string (signed). */
  change: string;
}

/** First, last, change, min and max of the series, on BigInt (counts are int64 strings). */
export function summarizeOwnerCounts(
  points: readonly OwnerCountPoint[],
): OwnerCountSummary | undefined {
  const first = points[0];
  const last = points.at(-1);
  if (!first || !last) return undefined;
  let min = first;
  let max = first;
  for (const point of points) {
    if (compareIntegerStrings(point.count, min.count) < 0) min = point;
    if (compareIntegerStrings(point.count, max.count) > 0) max = point;
  }
  return { first, last, min, max, change: (BigInt(last.count) - BigInt(first.count)).toString() };
}

/** "+2.3%" of the change against `from`, rounded half up on BigInt; undefined when from is 0. */
export function percentChange(from: string, to: string): string | undefined {
  const base = BigInt(from);
  if (base <= 0n) return undefined;
  const diff = BigInt(to) - base;
  const magnitude = diff < 0n ? -diff : diff;
  const tenths = (magnitude * 2000n + base) / (2n * base);
  if (tenths === 0n) return "0.0%";
  return `${diff < 0n ? "-" : "+"}${tenths / 10n}.${tenths % 10n}%`;
}

const at = (point: OwnerCountPoint) =>
  `${formatCount(point.count)} on ${formatDate(point.timestamp)}`;

/** The next longer period, suggested when this one has too few points for a chart. */
function longerDuration(duration: DurationChoice): DurationChoice | undefined {
  const index = DURATION_CHOICES.findIndex((choice) => choice.value === duration);
  return DURATION_CHOICES[index + 1]?.value;
}

/**
 * The owners answer, with its chart when the period has the two points a line needs; with fewer,
 * the point (if any) and why there is no chart, in words.
 */
export function ownersReply(input: {
  collection: string;
  name: string | undefined;
  duration: DurationChoice;
  holders: { address: string; ownedCount: string }[];
  points: OwnerCountPoint[];
  explorerUrl: string;
}): Reply {
  const period = durationName(input.duration);
  const summary = summarizeOwnerCounts(input.points);
  const charted = input.points.length >= MIN_CHART_POINTS;
  const longer = longerDuration(input.duration);
  const fields: ReplyField[] = [];
  if (summary && charted) {
    const percent = percentChange(summary.first.count, summary.last.count);
    fields.push(
      { name: "First", value: at(summary.first), inline: true },
      { name: "Last", value: at(summary.last), inline: true },
      {
        name: "Change",
        value: `${formatChange(summary.change)}${percent ? ` (${percent})` : ""}`,
        inline: true,
      },
      { name: "Min", value: at(summary.min), inline: true },
      { name: "Max", value: at(summary.max), inline: true },
    );
  }
  const noChart = longer ? `A chart needs two; try ${longer}.` : "A chart needs two.";
  const history = !summary
    ? `No owner-count data in the last ${period}, so there is no chart.${longer ? ` Try ${longer}.` : ""}`
    : charted
      ? `Owner count over the last ${period}, one point per day (UTC).`
      : `One data point in the last ${period}: ${formatCount(summary.last.count)} owners on ${formatDate(summary.last.timestamp)}. ${noChart}`;
  const text = [
    history,
    input.holders.length === 0 ? "No owners are listed for this collection." : undefined,
  ]
    .filter((line) => line !== undefined)
    .join("\n");
  const name = input.name ? collectionName(input.name) : undefined;
  return {
    title: `Owners of ${name ?? fullAddress(input.collection)}`,
    url: explorer.address(input.explorerUrl, input.collection),
    text,
    fields,
    table:
      input.holders.length > 0
        ? {
            columns: ["#", "Top holder", "NFTs owned"],
            rows: input.holders.map((holder, i) => [
              String(i + 1),
              short(holder.address),
              formatCount(holder.ownedCount),
            ]),
            align: ["right", "left", "right"],
          }
        : undefined,
    footer: `${formatCount(String(input.points.length))} daily ${input.points.length === 1 ? "point" : "points"} · ${fullAddress(input.collection)} · refreshed every 5 minutes`,
    chart: charted
      ? {
          kind: "owners-history",
          subject: `owners:${input.collection.toLowerCase()}:${input.duration}`,
          title: `Owners of ${name ?? short(input.collection)}, last ${period}`,
          points: input.points,
        }
      : undefined,
  };
}

export default defineCommand({
  name: "owners",
  description: "Top holders of a collection and how its owner count changed",
  help: "Shows the 10 largest holders and a summary of the daily owner count over the period: first, last, change, lowest and highest. The data is refreshed every 5 minutes.",
  options: {
    collection: opt.collection("Collection: name, symbol, address or link", { required: true }),
    duration: opt.choice("Over which period", DURATION_CHOICES, {
      fallback: "30d",
      placeholder: "1d|7d|30d|365d",
    }),
  },
  examples: [
    "/owners bored ape yacht club",
    "/owners 0xBC4CA0EdA7647A8aB7C2061c2E118A18a936f13D",
    "/owners 0xBC4CA0EdA7647A8aB7C2061c2E118A18a936f13D 365d",
  ],
  async run(ctx, { collection, duration }) {
    const options = { signal: ctx.signal };
    // Both settle before the answer, so a failed one leaves no request behind in flight.
    const [list, history] = await Promise.allSettled([
      ctx.api.collections.ownersList(
        collection,
        { sortDirection: "SORT_DIRECTION_DESC", limit: TOP_HOLDERS },
        options,
      ),
      ctx.api.collections.ownersCount(
        collection,
        durationApi(duration),
        "GROUP_BY_PERIOD_1_DAY",
        {},
        options,
      ),
    ]);
    if (list.status === "rejected") throw list.reason;
    if (history.status === "rejected") throw history.reason;
    const name = ctx.collections.name(collection);
    ctx.resolver.rememberWallets(list.value.owner.map((holder) => holder.address));
    return ownersReply({
      collection,
      name,
      duration,
      holders: list.value.owner,
      points: history.value.dataPoints,
      explorerUrl: ctx.chain.explorer,
    });
  },
});
