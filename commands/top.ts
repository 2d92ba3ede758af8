import type { Duration, TopCollection, TopMetric } from "../src/api/schemas.ts";
import { type CommandContext, defineCommand } from "../src/core/command.ts";
import { collectionName, formatCount, formatNative, short } from "../src/core/format.ts";
import { opt } from "../src/core/options.ts";
import { pageButtons, payloadPage } from "../src/core/paging.ts";
import type { Reply } from "../src/core/reply.ts";

export const METRICS = [
  { value: "volume", name: "Sales volume", api: "METRIC_SALES_VOLUME", aliases: ["vol"] },
  {
    value: "sales",
    name: "Number of sales",
    api: "METRIC_SALES_QUANTITY",
    aliases: ["count", "quantity"],
  },
  {
    value: "max_price",
    name: "Highest price",
    api: "METRIC_MAX_PRICE",
    aliases: ["max", "maxprice", "max-price", "price"],
  },
] as const satisfies readonly {
  value: string;
  name: string;
  api: TopMetric;
  aliases: readonly string[];
}[];

export const DURATION_CHOICES = [
  { value: "1d", name: "1 day", api: "DURATION_1_DAY", aliases: ["24h", "day"] },
  { value: "7d", name: "7 days", api: "DURATION_7_DAYS", aliases: ["1w", "week"] },
  { value: "30d", name: "30 days", api: "DURATION_30_DAYS", aliases: ["1m", "month"] },
  { value: "365d", name: "365 days", api: "DURATION_365_DAYS", aliases: ["1y", "year"] },
] as const satisfies readonly {
  value: string;
  name: string;
  api: Duration;
  aliases: readonly string[];
}[];

export type MetricChoice = (typeof METRICS)[number]["value"];
export type DurationChoice = (typeof DURATION_CHOICES)[number]["value"];

export function durationApi(choice: DurationChoice): Duration {
  return DURATION_CHOICES.find((d) => d.value === choice)!.api;
}

function metricValue(metric: MetricChoice, item: TopCollection): string {
  if (metric === "volume") return formatNative(item.salesVolume);
  if (metric === "sales") return formatCount(item.salesCount);
  return formatNative(item.maxPrice);
}

export function topReply(
  metric: MetricChoice,
  duration: DurationChoice,
  items: TopCollection[],
  page: number,
  limit: number,
): Reply {
  const metricInfo = METRICS.find((m) => m.value === metric)!;
  const durationInfo = DURATION_CHOICES.find((d) => d.value === duration)!;
  return {
    title: `Top collections by ${metricInfo.name.toLowerCase()}, last ${durationInfo.name}`,
    text:
      items.length === 0
        ? page === 0
          ? "No collections ranked for this period."
          : "No more collections."
        : undefined,
    table: {
      columns: ["#", "Collection", "Address", metricInfo.name],
      rows: items.map((item, i) => [
        String(page * limit + i + 1),
        collectionName(item.contractName),
        short(item.contractAddress),
        metricValue(metric, item),
      ]),
      align: ["right", "left", "left", "right"],
    },
    footer: `Page ${page + 1} · refreshed every 15 minutes`,
    replaceOriginal: page > 0,
    buttons: pageButtons(
      { command: "top", action: "page", payload: { metric, duration, limit } },
      page,
      items.length === limit,
    ),
  };
}

function collectionLabel(ctx: CommandContext, address: string, name: string): string {
  return name.trim() || ctx.collections.name(address)?.trim() || short(address);
}

async function fetchTop(
  ctx: CommandContext,
  metric: MetricChoice,
  duration: DurationChoice,
  limit: number,
  page: number,
): Promise<Reply> {
  const api = METRICS.find((m) => m.value === metric)!.api;
  const { collections } = await ctx.api.collections.top(
    api,
    durationApi(duration),
    { limit, offset: page * limit },
    { signal: ctx.signal },
  );
  ctx.collections.remember(
    collections.map((c) => ({ address: c.contractAddress, name: c.contractName })),
    "top",
  );
  const reply = topReply(metric, duration, collections, page, limit);
  const metricInfo = METRICS.find((m) => m.value === metric)!;
  // Bars are told apart by their labels: a collection without a name shows its address.
  const items = collections.map((item) => ({
    label: collectionLabel(ctx, item.contractAddress, item.contractName),
    value:
      metric === "volume" ? item.salesVolume : metric === "sales" ? item.salesCount : item.maxPrice,
  }));
  const axis = metric === "sales" ? "Sales" : `${metricInfo.name} (ETH)`;
  const title = reply.title ?? "Top collections";
  return {
    ...reply,
    chart: {
      kind: "ranking",
      subject: `top:${metric}:${duration}:${page}:${limit}`,
      title,
      axis,
      items,
    },
  };
}

const command = defineCommand({
  name: "top",
  description: "Top collections by sales volume, number of sales or highest price",
  help: "Ranks collections over the last 1, 7, 30 or 365 days. The data is refreshed every 15 minutes.",
  options: {
    metric: opt.choice("What to rank by", METRICS, {
      fallback: "volume",
      placeholder: "volume|sales|max_price",
    }),
    duration: opt.choice("Over which period", DURATION_CHOICES, {
      fallback: "1d",
      placeholder: "1d|7d|30d|365d",
    }),
    limit: opt.integer("How many per page (1-25)", {
      min: 1,
      max: 25,
      fallback: 10,
      placeholder: "limit",
    }),
  },
  examples: ["/top volume 1d", "/top sales 7d 20", "/top max_price 30d"],
  run: (ctx, { metric, duration, limit }) => fetchTop(ctx, metric, duration, limit, 0),
  actions: {
    page: {
      async run(ctx, payload) {
        const metric = METRICS.find((m) => m.value === payload.metric)?.value ?? "volume";
        const duration = DURATION_CHOICES.find((d) => d.value === payload.duration)?.value ?? "1d";
        const limit =
          typeof payload.limit === "number" ? Math.min(25, Math.max(1, payload.limit)) : 10;
        return fetchTop(ctx, metric, duration, limit, payloadPage(payload));
      },
    },
  },
});

export default command;
