import { defineCommand } from "../src/core/command.ts";
import {
  collectionName,
  explorer,
  formatCount,
  formatDecimal,
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

function isPlainObject(value: unknown): value is Record<string, unknown> {
  return typeof value === "object" && value !== null && !Array.isArray(value);
}

/** One value for people: numbers formatted, addresses checksummed, decimal strings grouped. */
function scalar(value: unknown): string {
  if (value === null || value === undefined) return "none";
  if (typeof value === "number") return formatNumber(value, 4);
  if (typeof value === "boolean") return value ? "yes" : "no";
  if (typeof value === "string") {
    if (/^0x[0-9a-fA-F]{40}$/.test(value)) return fullAddress(value);
    if (/^-?\d+(\.\d+)?$/.test(value)) return formatDecimal(value);
    return value;
  }
  return String(value);
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
      .map(([key, item]) => `${cutText(key, 40)}: ${inline(item, depth + 1)}`)
      .join(", ")}${entries.length > 8 ? ", …" : ""}}`;
  }
  return scalar(value);
}

/** Arrays become one field: their length and a preview of the first items. */
function summarizeArray(items: unknown[]): string {
  if (items.length === 0) return "empty list";
  const preview = items.slice(0, ARRAY_PREVIEW).map((item) => inline(item, 1));
  const separator = items.some((item) => typeof item === "object" && item !== null) ? "; " : ", ";
  const more = items.length > ARRAY_PREVIEW ? `${separator}…` : "";
  return `${formatCount(String(items.length))} ${items.length === 1 ? "item" : "items"}: ${preview.join(separator)}${more}`;
}

interface FlatProfile {
  fields: ReplyField[];
  /** Leaves found in all, shown or not. */
  total: number;
}

/**
 * Flattens any JSON object into "path: value" fields, at most MAX_FIELDS of them, each value cut
 * to MAX_VALUE characters. A root that only wraps one object ({ financialProfile: {…} }) is opened.
 */
export function flattenProfile(root: Record<string, unknown>): FlatProfile {
  const keys = Object.keys(root);
  const only = keys.length === 1 && keys[0] !== undefined ? root[keys[0]] : undefined;
  const start = isPlainObject(only) ? only : root;
  const fields: ReplyField[] = [];
  let total = 0;
  const add = (path: string, value: string) => {
    total++;
    if (fields.length < MAX_FIELDS) {
      fields.push({ name: cutText(path || "(value)", MAX_NAME), value: cutText(value, MAX_VALUE) });
    }
  };
  const walk = (value: unknown, path: string, depth: number) => {
    if (Array.isArray(value)) return add(path, summarizeArray(value));
    if (!isPlainObject(value)) return add(path, scalar(value));
    const entries = Object.entries(value);
    if (entries.length === 0) return add(path, "empty");
    if (depth >= MAX_DEPTH) return add(path, inline(value, MAX_DEPTH));
    for (const [key, child] of entries) walk(child, path ? `${path}.${key}` : key, depth + 1);
  };
  if (Object.keys(start).length > 0) walk(start, "", 0);
  return { fields, total };
}

function profileReply(
  collection: string,
  name: string | undefined,
  profile: Record<string, unknown>,
  explorerUrl: string,
): Reply {
  const flat = flattenProfile(profile);
  const hidden = flat.total - flat.fields.length;
  return {
    title: `Financial profile of ${name ? collectionName(name) : fullAddress(collection)}`,
    url: explorer.address(explorerUrl, collection),
    text:
      flat.fields.length === 0
        ? "The data service returned an empty financial profile for this collection."
        : "The spec does not define this answer's shape, so its fields are shown as they come.",
    fields: flat.fields,
    footer: [
      hidden > 0 ? `${formatCount(String(hidden))} more fields not shown` : undefined,
      fullAddress(collection),
    ]
      .filter((part) => part !== undefined)
      .join(" · "),
  };
}

export default defineCommand({
  name: "profile",
  description: "Financial profile of a collection's owners, as the data service gives it",
  help: "The data service's spec does not define the shape of a financial profile, so its fields are shown as they come: flattened into path: value lines (at most 20, long values cut, lists summarised).",
  options: {
    collection: opt.collection("Collection: name, symbol, address or link", { required: true }),
  },
  examples: ["/profile doodles", "/profile 0xBC4CA0EdA7647A8aB7C2061c2E118A18a936f13D"],
  async run(ctx, { collection }) {
    const profile = await ctx.api.audiences.financialProfileByCollection(collection, {
      signal: ctx.signal,
    });
    return profileReply(collection, ctx.collections.name(collection), profile, ctx.chain.explorer);
  },
});
