import type { Duration, TopCollection, TopMetric } from "../../src/api/schemas.ts";
import { opt } from "../../src/core/options.ts";

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

/** "7d" -> "7 days", for titles. */
export function durationName(choice: DurationChoice): string {
  return DURATION_CHOICES.find((d) => d.value === choice)!.name;
}

/** The figure of a ranked collection each metric ranks by: one map for the table and the chart. */
export const METRIC_FIELD = {
  volume: "salesVolume",
  sales: "salesCount",
  max_price: "maxPrice",
} as const satisfies Record<MetricChoice, keyof TopCollection>;

/** /top's metric and period options: /digest parses its "top <metric> <period>" with them. */
export const TOP_OPTIONS = {
  metric: opt.choice("What to rank by", METRICS, {
    fallback: "volume",
    placeholder: "volume|sales|max_price",
  }),
  duration: opt.choice("Over which period", DURATION_CHOICES, {
    fallback: "1d",
    placeholder: "1d|7d|30d|365d",
  }),
};
