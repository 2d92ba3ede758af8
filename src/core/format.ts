import { toChecksumAddress } from "../api/validate.ts";

/**
 * Formatting for people. Amounts arrive as decimal strings (18-decimal native amounts, int64
 * counts) and are formatted on the string, never through Number, so nothing is rounded away.
 */

function groupThousands(digits: string): string {
  return digits.replace(/\B(?=(\d{3})+(?!\d))/g, ",");
}

interface Decimal {
  negative: boolean;
  int: string;
  frac: string;
}

function splitDecimal(value: string): Decimal | undefined {
  const match = /^(-?)(\d+)(?:\.(\d+))?$/.exec(value.trim());
  if (!match) return undefined;
  return {
    negative: match[1] === "-",
    int: match[2]!.replace(/^0+(?=\d)/, ""),
    frac: match[3] ?? "",
  };
}

/** Rounds half up to `places` fraction digits, on the digits themselves. */
function roundDecimal(d: Decimal, places: number): Decimal {
  if (d.frac.length <= places) return d;
  const kept = d.int + d.frac.slice(0, places);
  const roundUp = d.frac.charCodeAt(places) - 48 >= 5;
  let digits = roundUp ? (BigInt(kept) + 1n).toString() : kept.replace(/^0+(?=\d)/, "");
  digits = digits.padStart(places + 1, "0");
  return {
    negative: d.negative,
    int: digits.slice(0, digits.length - places) || "0",
    frac: digits.slice(digits.length - places),
  };
}

/**
 * A decimal string for display: thousands separators, at most `places` fraction digits (trailing
 * zeros dropped), and for tiny non-zero values enough digits to show 3 significant ones.
 */
export function formatDecimal(value: string, places = 4): string {
  const d = splitDecimal(value);
  if (!d) return value;
  let digits = places;
  if (d.int === "0" && /[1-9]/.test(d.frac)) {
    const leadingZeros = /^0*/.exec(d.frac)?.[0].length ?? 0;
    if (leadingZeros >= places) digits = Math.min(leadingZeros + 3, 18);
  }
  const r = roundDecimal(d, digits);
  const frac = r.frac.replace(/0+$/, "");
  const isZero = /^0*$/.test(r.int) && frac.length === 0;
  const sign = r.negative && !isZero ? "-" : "";
  return `${sign}${groupThousands(r.int)}${frac ? `.${frac}` : ""}`;
}

export function formatNative(value: string | undefined, symbol = "ETH"): string {
  return value === undefined ? "n/a" : `${formatDecimal(value, 4)} ${symbol}`;
}

export function formatUsd(value: string | undefined): string {
  if (value === undefined) return "n/a";
  const d = splitDecimal(value);
  if (!d) return value;
  const r = roundDecimal(d, 2);
  const frac = r.frac.padEnd(2, "0");
  const isZero = /^0*$/.test(r.int) && /^0*$/.test(frac);
  return `${r.negative && !isZero ? "-" : ""}$${groupThousands(r.int)}.${frac}`;
}

/** An int64 string with thousands separators. */
export function formatCount(value: string | undefined): string {
  if (value === undefined) return "n/a";
  const d = splitDecimal(value);
  return d ? `${d.negative && d.int !== "0" ? "-" : ""}${groupThousands(d.int)}` : value;
}

/** A signed change: "+1,234", "-12", "0". */
export function formatChange(value: string | undefined): string {
  if (value === undefined) return "n/a";
  const d = splitDecimal(value);
  if (!d) return value;
  if (/^0+$/.test(d.int)) return "0";
  return `${d.negative ? "-" : "+"}${groupThousands(d.int)}`;
}

export function formatPercent(value: number, places = 1): string {
  return `${value.toFixed(places)}%`;
}

/** Numbers the spec types as JSON numbers (averages): a few significant decimals. */
export function formatNumber(value: number, places = 2): string {
  if (!Number.isFinite(value)) return "n/a";
  return value.toLocaleString("en-US", { maximumFractionDigits: places, minimumFractionDigits: 0 });
}

export function relativeTime(then: Date, now: Date): string {
  const seconds = Math.round((now.getTime() - then.getTime()) / 1000);
  const future = seconds < 0;
  const s = Math.abs(seconds);
  const units: [number, string][] = [
    [365 * 86400, "year"],
    [30 * 86400, "month"],
    [7 * 86400, "week"],
    [86400, "day"],
    [3600, "hour"],
    [60, "minute"],
  ];
  for (const [size, unit] of units) {
    if (s >= size) {
      const n = Math.floor(s / size);
      const text = `${n} ${unit}${n === 1 ? "" : "s"}`;
      return future ? `in ${text}` : `${text} ago`;
    }
  }
  return "just now";
}

/** "2026-11-19 14:02 UTC (3 days ago)". */
export function formatTimestamp(iso: string | undefined | null, now: Date): string {
  if (!iso) return "n/a";
  const date = new Date(iso);
  if (Number.isNaN(date.getTime())) return iso;
  const text = `${date.toISOString().slice(0, 16).replace("T", " ")} UTC`;
  return `${text} (${relativeTime(date, now)})`;
}

/** Orders int64 decimal strings (counts, wei) by value: they pass 2^53, so never via Number. */
export function compareIntegerStrings(a: string, b: string): number {
  const left = BigInt(a);
  const right = BigInt(b);
  return left < right ? -1 : left > right ? 1 : 0;
}

export function formatDate(iso: string): string {
  const date = new Date(iso);
  return Number.isNaN(date.getTime()) ? iso : date.toISOString().slice(0, 10);
}

/** Whole addresses where they are the subject: checksummed. */
export function fullAddress(address: string): string {
  return /^0x[0-9a-fA-F]{40}$/.test(address) ? toChecksumAddress(address) : address;
}

/** Short addresses in tables and messages: 0x1234…abcd (checksummed); anything else as it is. */
export function short(address: string): string {
  const full = fullAddress(address);
  return full.length === 42 ? `${full.slice(0, 6)}…${full.slice(-4)}` : full;
}

/**
 * Ids of up to 78 digits fit no title or column: the ends identify them well enough. A table
 * column is narrow (6…6 past 16 digits); a title or sentence has room for more (10…8 past 24).
 */
export function shortTokenId(tokenId: string, room: "column" | "text" = "column"): string {
  const [limit, head, tail] = room === "column" ? [16, 6, 6] : [24, 10, 8];
  return tokenId.length > limit ? `${tokenId.slice(0, head)}…${tokenId.slice(-tail)}` : tokenId;
}

/**
 * An enum value for people, by its words: "BEHAVIOR_SOME_NEW_THING" -> "Some new thing",
 * "TYPE_ERC20" -> "ERC20" (a word with a digit is a standard's name and keeps its case). The
 * service may send values the spec does not list; a value that is not an enum name is shown as sent.
 */
function enumWords(value: string, prefix: string): string {
  const name = value.startsWith(prefix) ? value.slice(prefix.length) : value;
  if (!/^[A-Z0-9]+(?:_[A-Z0-9]+)*$/.test(name)) return value;
  const words = name.split("_").map((word) => (/\d/.test(word) ? word : word.toLowerCase()));
  const sentence = words.join(" ");
  return sentence.charAt(0).toUpperCase() + sentence.slice(1);
}

const BEHAVIOR_LABELS: Record<string, string> = {
  BEHAVIOR_BADACTOR: "Bad actor",
};

/** "BEHAVIOR_PROGRAMMED_FLIPPER" -> "Programmed flipper", "BEHAVIOR_OTHER" -> "Other". */
export function behaviorLabel(behavior: string): string {
  return BEHAVIOR_LABELS[behavior] ?? enumWords(behavior, "BEHAVIOR_");
}

const SCORE_LABELS: Record<string, { long: string; short: string }> = {
  SCORE_UNSPECIFIED: { long: "-", short: "-" },
  SCORE_VERY_LOW: { long: "very low", short: "VL" },
  SCORE_LOW: { long: "low", short: "L" },
  SCORE_MED: { long: "medium", short: "M" },
  SCORE_HIGH: { long: "high", short: "H" },
  SCORE_VERY_HIGH: { long: "very high", short: "VH" },
};

/** "SCORE_VERY_HIGH" -> "very high" (short: "VH", for narrow tables); others by their words. */
export function scoreLabel(score: string, form: "long" | "short" = "long"): string {
  return SCORE_LABELS[score]?.[form] ?? enumWords(score, "SCORE_");
}

const CONTRACT_TYPE_LABELS: Record<string, string> = {
  TYPE_ERC721: "ERC-721",
  TYPE_ERC1155: "ERC-1155",
  TYPE_ERC721_LEGACY: "ERC-721 (legacy)",
  TYPE_CRYPTOPUNKS: "CryptoPunks",
};

/** "TYPE_ERC1155" -> "ERC-1155"; a type the spec does not list by its name: "TYPE_ERC20" -> "ERC20". */
export function contractTypeLabel(type: string): string {
  return CONTRACT_TYPE_LABELS[type] ?? enumWords(type, "TYPE_");
}

/** A collection's name for display: empty names are common and must still read well. */
export function collectionName(name: string | undefined): string {
  const trimmed = (name ?? "").trim();
  return trimmed.length > 0 ? trimmed : "Unnamed collection";
}

export const explorer = {
  address: (base: string, address: string) => `${base}/address/${fullAddress(address)}`,
  token: (base: string, contract: string, tokenId: string) =>
    `${base}/nft/${fullAddress(contract)}/${tokenId}`,
  tx: (base: string, hash: string) => `${base}/tx/${hash}`,
};

/** A collection's (or with a token id, an item's) page on the chain's marketplace, if it has one. */
export function marketplaceUrl(
  chain: { marketplace?: string | undefined },
  contract: string,
  tokenId?: string,
): string | undefined {
  if (!chain.marketplace) return undefined;
  const base = `${chain.marketplace}/${fullAddress(contract)}`;
  return tokenId === undefined ? base : `${base}/${tokenId}`;
}

/** The "Marketplace" link of a collection or item, as a reply's links; none without one. */
export function marketplaceLinks(
  chain: { marketplace?: string | undefined },
  contract: string,
  tokenId?: string,
): { label: string; url: string }[] | undefined {
  const url = marketplaceUrl(chain, contract, tokenId);
  return url ? [{ label: "Marketplace", url }] : undefined;
}
