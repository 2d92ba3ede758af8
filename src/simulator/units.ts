/** Number and time formatting shared by the data generator and the response builders. */

export const SECONDS_PER_DAY = 86_400;

/** `1234500000000000000n, 18` -> "1.2345"; trailing zeros dropped, never exponent notation. */
export function formatUnits(value: bigint, decimals: number): string {
  const negative = value < 0n;
  const abs = negative ? -value : value;
  const base = 10n ** BigInt(decimals);
  const whole = abs / base;
  const fraction = (abs % base).toString().padStart(decimals, "0").replace(/0+$/, "");
  const text = fraction === "" ? whole.toString() : `${whole}.${fraction}`;
  return negative ? `-${text}` : text;
}

/** "1.5", 18 -> 1500000000000000000n; undefined when not a non-negative decimal that fits. */
export function parseUnits(text: string, decimals: number): bigint | undefined {
  const match = /^(\d{1,60})(?:\.(\d+))?$/.exec(text);
  if (!match) return undefined;
  const whole = match[1] ?? "0";
  const fraction = match[2] ?? "";
  if (fraction.length > decimals) return undefined;
  return BigInt(whole) * 10n ** BigInt(decimals) + BigInt(fraction.padEnd(decimals, "0") || "0");
}

/** A wei amount as a JS number of ether, for the fields the spec types as numbers. */
export function weiToNumber(wei: bigint): number {
  return Number(wei / 1_000_000_000n) / 1e9;
}

/** Block-time style timestamp: whole seconds, UTC, e.g. "2025-01-02T03:04:05Z". */
export function isoSeconds(sec: number): string {
  return new Date(sec * 1000).toISOString().replace(/\.\d{3}Z$/, "Z");
}

/** Code-unit order, for deterministic sorting of addresses and names. */
export function compareText(a: string, b: string): number {
  return a < b ? -1 : a > b ? 1 : 0;
}

export function roundTo(value: number, digits: number): number {
  const factor = 10 ** digits;
  return Math.round(value * factor) / factor;
}

const TIMESTAMP = /^(\d{4}-\d{2}-\d{2}T\d{2}:\d{2}:\d{2})(\.\d+)?(Z|[+-]\d{2}:\d{2})$/;

/** Parses an RFC 3339 timestamp to epoch milliseconds (sub-millisecond digits dropped). */
export function parseTimestamp(text: string): number | undefined {
  const match = TIMESTAMP.exec(text);
  if (!match) return undefined;
  const fraction = (match[2] ?? "").slice(0, 4);
  const ms = Date.parse(`${match[1]}${fraction}${match[3]}`);
  return Number.isNaN(ms) ? undefined : ms;
}

/**
 * Shares of `counts` in percent with two decimals that sum to exactly 100 (largest remainder),
 * or all zeros when the total is zero.
 */
export function percentages(counts: readonly number[]): number[] {
  const total = counts.reduce((sum, count) => sum + count, 0);
  if (total === 0) return counts.map(() => 0);
  const raw = counts.map((count) => (count * 10_000) / total);
  const hundredths = raw.map(Math.floor);
  let rest = 10_000 - hundredths.reduce((sum, value) => sum + value, 0);
  const order = raw
    .map((value, index) => ({ index, remainder: value - Math.floor(value) }))
    .sort((a, b) => b.remainder - a.remainder || a.index - b.index);
  for (const { index } of order) {
    if (rest <= 0) break;
    hundredths[index] = (hundredths[index] ?? 0) + 1;
    rest--;
  }
  return hundredths.map((value) => value / 100);
}

/**
 * Splits a signed integer `total` over `weights` in proportion, in whole units that sum to
 * `total` exactly (largest remainder on the absolute value).
 */
export function apportion(total: number, weights: readonly number[]): number[] {
  const weightSum = weights.reduce((sum, weight) => sum + weight, 0);
  if (weightSum === 0 || total === 0) return weights.map(() => 0);
  const sign = total < 0 ? -1 : 1;
  const abs = Math.abs(total);
  const raw = weights.map((weight) => (weight * abs) / weightSum);
  const parts = raw.map(Math.floor);
  let rest = abs - parts.reduce((sum, value) => sum + value, 0);
  const order = raw
    .map((value, index) => ({ index, remainder: value - Math.floor(value) }))
    .sort((a, b) => b.remainder - a.remainder || a.index - b.index);
  for (const { index } of order) {
    if (rest <= 0) break;
    parts[index] = (parts[index] ?? 0) + 1;
    rest--;
  }
  return parts.map((value) => value * sign);
}
