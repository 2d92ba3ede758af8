import { defineCommand } from "../src/core/command.ts";
import {
  collectionName,
  explorer,
  formatCount,
  formatDate,
  formatDecimal,
  formatNative,
  formatNumber,
  fullAddress,
} from "../src/core/format.ts";
import { opt } from "../src/core/options.ts";
import type { Reply, ReplyField } from "../src/core/reply.ts";
import { cutText } from "../src/strings.ts";

/** Bounds: the shape is unknown, so nothing it contains may make the answer unreadable. */
const MAX_FIELDS = 20;
const MAX_VALUE = 200;
const MAX_NAME = 100;
const MAX_DEPTH = 4;
const ARRAY_PREVIEW = 3;
/** Lines of a list of objects (spend buckets): one per item. */
const LIST_LINES = 6;

function isPlainObject(value: unknown): value is Record<string, unknown> {
  return typeof value === "object" && value !== null && !Array.isArray(value);
}

/** What a figure counts in, told by the words of its name (and its parents' names). */
type Unit = "native" | "days" | "count" | "percent" | "date" | "plain";

/** "fifoHoldingSpanDaysAvg" -> ["fifo", "holding", "span", "days", "avg"]; snake_case too. */
function words(key: string): string[] {
  return key
    .replace(/([a-z0-9])([A-Z])/g, "$1 $2")
    .replace(/([A-Z]+)([A-Z][a-z])/g, "$1 $2")
    .split(/[\s_\-.]+/)
    .map((word) => word.toLowerCase())
    .filter((word) => word !== "");
}

const MONEY_WORDS = new Set(["volume", "price", "spend", "spent", "cost", "paid", "value"]);

function unitOf(path: readonly string[]): Unit {
  const all = path.flatMap(words);
  const last = words(path.at(-1) ?? "");
  if (last.some((word) => ["timestamp", "date", "at"].includes(word))) return "date";
  if (all.some((word) => ["percentage", "percent", "share", "pct"].includes(word)))
    return "percent";
  if (all.some((word) => ["native", "eth", "wei"].includes(word))) return "native";
  if (all.includes("days")) return "days";
  if (all.includes("count")) return "count";
  if (all.some((word) => MONEY_WORDS.has(word))) return "native";
  return "plain";
}

/** Words of a name that its unit already says, or that read better otherwise. */
const DROPPED = new Set(["native", "eth", "count", "days", "percentage", "timestamp"]);
const SPELLED: Record<string, string> = {
  avg: "average",
  min: "lowest",
  max: "highest",
  nfts: "NFTs",
  nft: "NFT",
  fifo: "(first in, first out)",
  usd: "USD",
};

/** A key as words a person reads: "collectionsOwnedCountAvg" -> "Collections owned average". */
function label(key: string): string {
  const kept = words(key).filter((word) => !DROPPED.has(word));
  const text = (kept.length > 0 ? kept : words(key)).map((word) => SPELLED[word] ?? word).join(" ");
  return text.charAt(0).toUpperCase() + text.slice(1);
}

/**
 * Labels of the figures the bot knows, by their path: the same words /stats uses. Any other field
 * gets a label made of its name's words.
 */
const KNOWN_LABELS: Record<string, string> = {
  walletsCount: "Wallets",
  totalSpendNative: "Total spent",
  spendDistribution: "Spend per wallet",
  "purchases.countAvg": "Avg purchases",
  "purchases.volumeAvg": "Avg purchase volume",
  "purchases.priceAvg": "Avg purchase price",
  "holdings.collectionsOwnedCountAvg": "Avg collections owned",
  "holdings.nftsOwnedInCollectionAvg": "Avg NFTs of this collection",
  "holdings.fifoHoldingSpanDaysAvg": "Avg holding time",
  walletAgeDays: "Wallet age",
};

function fieldName(path: readonly string[]): string {
  return KNOWN_LABELS[path.join(".")] ?? path.map(label).join(" › ");
}

/** One value for people, in its unit: amounts in the chain's currency, counts grouped, days. */
function scalar(value: unknown, unit: Unit = "plain", symbol = "ETH"): string {
  if (value === null || value === undefined) return "none";
  if (typeof value === "boolean") return value ? "yes" : "no";
  const numeric =
    typeof value === "number"
      ? Number.isFinite(value)
        ? value.toFixed(18)
        : undefined
      : typeof value === "string" && /^-?\d+(\.\d+)?$/.test(value)
        ? value
        : undefined;
  if (numeric !== undefined) {
    // Amounts keep four decimals (formatNative); counts, days and ratios read well with two.
    const shown = formatDecimal(numeric, 2);
    switch (unit) {
      case "native":
        return formatNative(numeric, symbol);
      case "days":
        return `${shown} ${shown === "1" ? "day" : "days"}`;
      case "percent":
        return `${formatDecimal(numeric, 1)}%`;
      default:
        return shown;
    }
  }
  if (typeof value === "string") {
    if (/^0x[0-9a-fA-F]{40}$/.test(value)) return fullAddress(value);
    if (unit === "date" && !Number.isNaN(Date.parse(value))) return formatDate(value);
    return value;
  }
  if (typeof value === "number") return formatNumber(value, 4);
  return String(value);
}

/** "40 days", "3,198 days" -> "40 to 3,198 days": the unit once. */
function fromTo(low: string, high: string): string {
  const unit = /[^\d]*$/.exec(high)?.[0] ?? "";
  const bare = unit !== "" && low.endsWith(unit) ? low.slice(0, -unit.length) : low;
  return `${bare} to ${high}`;
}

/** { min, max, avg } (any of them) as one range: "12 to 3,400 days (average 800 days)". */
function range(value: Record<string, unknown>, unit: Unit, symbol: string): string | undefined {
  const keys = Object.keys(value);
  if (keys.length === 0 || !keys.every((key) => ["min", "max", "avg"].includes(key)))
    return undefined;
  const { min, max, avg } = value;
  const bounds =
    min !== undefined && max !== undefined
      ? fromTo(scalar(min, unit, symbol), scalar(max, unit, symbol))
      : min !== undefined
        ? `at least ${scalar(min, unit, symbol)}`
        : max !== undefined
          ? `at most ${scalar(max, unit, symbol)}`
          : undefined;
  const average = avg === undefined ? undefined : `average ${scalar(avg, unit, symbol)}`;
  return bounds && average ? `${bounds} (${average})` : (bounds ?? average);
}

/**
 * A spend bucket as a line: "1 to 10 ETH: 120 wallets (12.0%)". Items of other lists: their
 * fields, labelled, on one line.
 */
function listItem(item: unknown, symbol: string, depth: number): string {
  if (!isPlainObject(item)) return inline(item, depth);
  const { minNative, maxNative, walletsCount, walletsPercentage, bucket: _bucket, ...rest } = item;
  if (minNative !== undefined && walletsCount !== undefined) {
    const low = scalar(minNative, "plain");
    const high = maxNative === undefined ? undefined : scalar(maxNative, "plain");
    // Buckets are bounded in wei: one wei is "more than nothing", not an amount to show.
    const spend =
      high === undefined
        ? `${low} ${symbol} or more`
        : Number(minNative) < 1e-9
          ? `under ${high} ${symbol}`
          : `${low} to ${high} ${symbol}`;
    const share =
      walletsPercentage === undefined ? "" : ` (${scalar(walletsPercentage, "percent")})`;
    const count = scalar(walletsCount, "count");
    const restText = Object.keys(rest).length > 0 ? `; ${inline(rest, depth + 1)}` : "";
    // The lowest bucket ends at one wei: its wallets spent nothing.
    const nothing = maxNative !== undefined && Number(maxNative) > 0 && Number(maxNative) < 1e-9;
    return `${nothing ? "nothing" : spend}: ${count} ${count === "1" ? "wallet" : "wallets"}${share}${restText}`;
  }
  return Object.entries(item)
    .slice(0, 8)
    .map(
      ([key, child]) =>
        `${label(key)}: ${isPlainObject(child) || Array.isArray(child) ? inline(child, depth + 1) : scalar(child, unitOf([key]), symbol)}`,
    )
    .join(", ");
}

/** A nested value on one line, bounded in depth and length. */
function inline(value: unknown, depth: number): string {
  if (Array.isArray(value)) {
    if (depth >= MAX_DEPTH) return `[${value.length} items]`;
    return `[${value
      .slice(0, ARRAY_PREVIEW)
      .map((item) => inline(item, depth + 1))
      .join(", ")}${value.length > ARRAY_PREVIEW ? ", …" : ""}]`;
  }
  if (isPlainObject(value)) {
    if (depth >= MAX_DEPTH) return "{…}";
    const entries = Object.entries(value);
    return `{${entries
      .slice(0, 8)
      .map(([key, item]) => `${cutText(label(key), 40)}: ${inline(item, depth + 1)}`)
      .join(", ")}${entries.length > 8 ? ", …" : ""}}`;
  }
  return scalar(value);
}

/** A list becomes one field: a line per item (the first few), and how many there are. */
function summarizeArray(items: unknown[], symbol: string): string {
  if (items.length === 0) return "none";
  const objects = items.some((item) => typeof item === "object" && item !== null);
  const shown = objects ? LIST_LINES : ARRAY_PREVIEW;
  const preview = items.slice(0, shown).map((item) => listItem(item, symbol, 1));
  const more = items.length > shown ? `and ${formatCount(String(items.length - shown))} more` : "";
  if (objects) return [...preview, ...(more ? [more] : [])].join("\n");
  return `${preview.join(", ")}${more ? `, ${more}` : ""}`;
}

interface FlatProfile {
  fields: ReplyField[];
  /** Leaves found in all, shown or not. */
  total: number;
}

/**
 * Any JSON object as labelled fields with units, at most MAX_FIELDS of them, each value cut to
 * MAX_VALUE characters. A root that only wraps one object ({ financialProfile: {…} }) is opened;
 * the collection's own address is left out (the footer shows it).
 */
export function flattenProfile(
  root: Record<string, unknown>,
  symbol = "ETH",
  collection?: string,
): FlatProfile {
  const keys = Object.keys(root);
  const only = keys.length === 1 && keys[0] !== undefined ? root[keys[0]] : undefined;
  const start = isPlainObject(only) ? only : root;
  const fields: ReplyField[] = [];
  let total = 0;
  const add = (path: readonly string[], value: string) => {
    total++;
    if (fields.length < MAX_FIELDS) {
      fields.push({
        name: cutText(path.length > 0 ? fieldName(path) : "Value", MAX_NAME),
        value: cutText(value, MAX_VALUE),
      });
    }
  };
  const walk = (value: unknown, path: string[], depth: number) => {
    const unit = unitOf(path);
    if (Array.isArray(value)) return add(path, summarizeArray(value, symbol));
    if (!isPlainObject(value)) {
      const isCollection =
        typeof value === "string" &&
        collection !== undefined &&
        value.toLowerCase() === collection.toLowerCase();
      return isCollection ? undefined : add(path, scalar(value, unit, symbol));
    }
    const entries = Object.entries(value);
    if (entries.length === 0) return add(path, "none");
    const asRange = range(value, unit, symbol);
    if (asRange !== undefined) return add(path, asRange);
    if (depth >= MAX_DEPTH) return add(path, inline(value, MAX_DEPTH));
    for (const [key, child] of entries) walk(child, [...path, key], depth + 1);
  };
  if (Object.keys(start).length > 0) walk(start, [], 0);
  return { fields, total };
}

function profileReply(
  collection: string,
  name: string | undefined,
  profile: Record<string, unknown>,
  explorerUrl: string,
  symbol: string,
): Reply {
  const flat = flattenProfile(profile, symbol, collection);
  const hidden = flat.total - flat.fields.length;
  return {
    title: `Financial profile of ${name ? collectionName(name) : fullAddress(collection)}`,
    url: explorer.address(explorerUrl, collection),
    text:
      flat.fields.length === 0
        ? "The data service has no financial profile for this collection's owners yet."
        : `How this collection's owners spend and hold NFTs. Amounts are in ${symbol}; averages are per wallet.`,
    fields: flat.fields,
    footer: [
      hidden > 0 ? `${formatCount(String(hidden))} more figures not shown` : undefined,
      fullAddress(collection),
    ]
      .filter((part) => part !== undefined)
      .join(" · "),
  };
}

export default defineCommand({
  name: "profile",
  description: "How a collection's owners spend and hold NFTs",
  help: "Shows what the owners of a collection spent (in all, per wallet, per NFT, in the chain's currency), how many wallets spent how much, how long they hold, and how old their wallets are. Figures the bot has no name for are shown under their own (at most 20, long values cut, lists summarised).",
  options: {
    collection: opt.collection("Collection: name, symbol, address or link", { required: true }),
  },
  examples: ["/profile doodles", "/profile 0xBC4CA0EdA7647A8aB7C2061c2E118A18a936f13D"],
  async run(ctx, { collection }) {
    const profile = await ctx.api.audiences.financialProfileByCollection(collection, {
      signal: ctx.signal,
    });
    return profileReply(
      collection,
      ctx.collections.name(collection),
      profile,
      ctx.chain.explorer,
      ctx.chain.symbol,
    );
  },
});
