import { z } from "zod";
import type { TopCollection } from "../src/api/schemas.ts";
import type { Chain } from "../src/chains.ts";
import { defineAction, payloadField } from "../src/core/button-actions.ts";
import { chartable } from "../src/core/charts.ts";
import { type CommandContext, defineCommand } from "../src/core/command.ts";
import { collectionName, formatCount, formatNative, short } from "../src/core/format.ts";
import { opt } from "../src/core/options.ts";
import { pageButtons } from "../src/core/paging.ts";
import type { ChartSpec, Reply } from "../src/core/reply.ts";
import {
  DURATION_CHOICES,
  type DurationChoice,
  durationApi,
  durationName,
  METRIC_FIELD,
  METRICS,
  type MetricChoice,
  TOP_OPTIONS,
} from "./shared/choices.ts";

/** Another page of the same list (a digest's too: the chain's top in its post). */
const topPage = defineAction({
  command: "top",
  name: "page",
  schema: z.object({
    metric: payloadField.choice(METRICS),
    duration: payloadField.choice(DURATION_CHOICES),
    limit: z.number().int().min(1).max(25),
    page: payloadField.page,
  }),
});

function metricValue(metric: MetricChoice, item: TopCollection, symbol: string): string {
  const value = item[METRIC_FIELD[metric]];
  return metric === "sales" ? formatCount(value) : formatNative(value, symbol);
}

export function topReply(
  metric: MetricChoice,
  duration: DurationChoice,
  items: TopCollection[],
  page: number,
  limit: number,
  /** The chain's currency, amounts are in. */
  symbol = "ETH",
): Reply {
  const metricInfo = METRICS.find((m) => m.value === metric)!;

  return {
    title: `Top collections by ${metricInfo.name.toLowerCase()}, last ${durationName(duration)}`,
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
        metricValue(metric, item, symbol),
      ]),
      align: ["right", "left", "left", "right"],
    },
    footer: `Page ${page + 1} · refreshed every 15 minutes`,
    replaceOriginal: page > 0,
    buttons: pageButtons(
      (page) => topPage.action({ metric, duration, limit, page }),
      page,
      items.length === limit,
    ),
  };
}

/** What a top list needs: a chain's client, and the collection index when it is that chain's. */
export interface TopSource {
  /** The chain listed: its id (the chart's key) and the symbol amounts are in. */
  chain: Pick<Chain, "id" | "symbol">;
  api: Pick<CommandContext["api"], "collections">;
  collections?: Pick<CommandContext["collections"], "name" | "remember"> | undefined;
  signal?: AbortSignal | undefined;
  /** Scheduled work (a digest): first in line for the upstream budget, never refused. */
  background?: boolean;
}

function collectionLabel(source: TopSource, address: string, name: string): string {
  return name.trim() || source.collections?.name(address)?.trim() || short(address);
}

/** The /top answer with its chart: the command's, and a scheduled digest's. */
export async function topAnswer(
  source: TopSource,
  metric: MetricChoice,
  duration: DurationChoice,
  limit: number,
  page: number,
): Promise<Reply> {
  const api = METRICS.find((m) => m.value === metric)!.api;
  const { collections } = await source.api.collections.top(
    api,
    durationApi(duration),
    { limit, offset: page * limit },
    {
      ...(source.signal ? { signal: source.signal } : {}),
      ...(source.background ? { background: true } : {}),
    },
  );
  source.collections?.remember(
    collections.map((c) => ({ address: c.contractAddress, name: c.contractName })),
    "top",
  );
  const reply = topReply(metric, duration, collections, page, limit, source.chain.symbol);
  const metricInfo = METRICS.find((m) => m.value === metric)!;
  // Bars are told apart by their labels: a collection without a name shows its address. Each
  // carries its rank in the whole list, as the table does: page 2's bars are 11 to 20.
  const first = page * limit + 1;
  const items = collections.map((item, i) => ({
    label: collectionLabel(source, item.contractAddress, item.contractName),
    value: item[METRIC_FIELD[metric]],
    rank: first + i,
  }));
  const axis = metric === "sales" ? "Sales" : `${metricInfo.name} (${source.chain.symbol})`;
  // The picture travels alone (forwarded, saved): its title says which ranks it shows.
  const ranks = `(${first}–${first + Math.max(0, items.length - 1)})`;
  const title = `${reply.title ?? "Top collections"} ${ranks}`;
  const chart: ChartSpec = {
    kind: "ranking",
    subject: `top:${source.chain.id}:${metric}:${duration}:${page}:${limit}`,
    title,
    axis,
    items,
  };
  if (chartable(chart)) return { ...reply, chart };
  // No collections: topReply already says so. One bar would be the table's row drawn again.
  if (items.length === 0) return reply;
  const why =
    items.length === 1
      ? limit === 1
        ? `One collection on this page: a chart needs two; ask for more, like /top ${metric} ${duration} 10.`
        : "Only one collection on this page: a chart needs two."
      : `Fewer than two of these collections have a ${metricInfo.name.toLowerCase()} to plot, so there is no chart.`;
  return { ...reply, text: reply.text ? `${reply.text}\n${why}` : why };
}

const command = defineCommand({
  name: "top",
  description: "Top collections by sales volume, number of sales or highest price",
  help: "Ranks collections over the last 1, 7, 30 or 365 days. The data is refreshed every 15 minutes.",
  options: {
    ...TOP_OPTIONS,
    limit: opt.integer("How many per page (1-25)", {
      min: 1,
      max: 25,
      fallback: 10,
      placeholder: "limit",
    }),
  },
  examples: [
    "/top volume 1d",
    "/top sales 7d 20",
    "/top max_price 30d",
    "/top volume 1d chain:base",
  ],
  run: (ctx, { metric, duration, limit }) => topAnswer(ctx, metric, duration, limit, 0),
  actions: {
    page: topPage.handle({
      run: (ctx, { metric, duration, limit, page }) =>
        topAnswer(ctx, metric, duration, limit, page),
    }),
  },
});

export default command;
