/**
 * Numbers on a chart's axes, written without Intl (issue 34, item 10). Chart.js writes a linear
 * axis's ticks with `Intl.NumberFormat`, and the first one a process makes loads ICU's number data
 * and caches (some 5 MB of the painter's memory, for a handful of labels such as "1,250" or
 * "0.5"). {@link formatFixed} writes what `Intl.NumberFormat("en-US", { minimumFractionDigits: d,
 * maximumFractionDigits: d })` writes, character for character (test/chart-numbers.test.ts checks it
 * against Intl over arbitrary numbers), so the pictures stay byte-identical; anything else (another
 * locale, a tick format, scientific notation) is left to Chart.js's own formatter.
 */

/**
 * `value` with exactly `digits` decimals (0 to 20), en-US: "-" for a minus, "," between groups of
 * three digits, "." before the decimals; halves rounded away from zero. Like ICU, it rounds the
 * shortest decimal that reads back as the same double (what `String(value)` shows: 1.005 is
 * "1.01" to two decimals), not the double's exact binary value.
 */
export function formatFixed(value: number, digits: number): string {
  if (!Number.isFinite(value)) return value > 0 ? "∞" : value < 0 ? "-∞" : "NaN";
  const negative = value < 0 || Object.is(value, -0);
  // The shortest round-trip digits and the exponent of the first: "1.2345e+3".
  const [mantissa = "0", exponent = "0"] = Math.abs(value).toExponential().split("e");
  let all = mantissa.replace(".", "");
  let point = Number(exponent) + 1; // digits before the decimal point
  if (point <= 0) {
    all = "0".repeat(1 - point) + all;
    point = 1;
  }
  if (all.length < point + digits) all += "0".repeat(point + digits - all.length);
  let kept = all.slice(0, point + digits);
  const next = all.charCodeAt(point + digits);
  if (next >= 53 /* "5" */) {
    // Half or more of the last kept digit: away from zero, carrying through nines.
    const up = [...kept];
    let i = up.length - 1;
    for (; i >= 0 && up[i] === "9"; i--) up[i] = "0";
    if (i >= 0) up[i] = String(Number(up[i]) + 1);
    else {
      up.unshift("1");
      point++;
    }
    kept = up.join("");
  }
  const whole = kept.slice(0, point).replace(/^0+(?=\d)/, "");
  const fraction = kept.slice(point);
  const grouped = whole.replace(/\B(?=(\d{3})+$)/g, ",");
  return `${negative ? "-" : ""}${grouped}${fraction ? `.${fraction}` : ""}`;
}

/** What Chart.js passes to a tick callback, as far as its number formatter reads it. */
interface TickScale {
  chart: { options: { locale?: string } };
  options: { ticks: { format?: unknown } };
}

/** A tick callback of a linear axis, as Chart.js calls it (the scale as `this`). */
export type TickFormatter = (
  this: TickScale,
  value: number,
  index: number,
  ticks: { value: number }[],
) => string;

/**
 * Chart.js's `Ticks.formatters.numeric` (chart.js 4, src/core/core.ticks.js), with the en-US plain
 * notation written by {@link formatFixed}: the same decimals for every tick, chosen from the step
 * between ticks. Outside that case (another locale, a tick format, scientific notation), Chart.js's
 * own `fallback` writes the tick, with Intl.
 */
export function withoutIntl(fallback: TickFormatter): TickFormatter {
  return function numericTick(tickValue, index, ticks) {
    if (tickValue === 0) return "0";
    if (this.chart.options.locale !== "en-US" || this.options.ticks.format !== undefined)
      return fallback.call(this, tickValue, index, ticks);
    let delta = tickValue;
    if (ticks.length > 1) {
      const first = ticks[0]?.value ?? 0;
      const last = ticks[ticks.length - 1]?.value ?? 0;
      const maxTick = Math.max(Math.abs(first), Math.abs(last));
      if (maxTick < 1e-4 || maxTick > 1e15) return fallback.call(this, tickValue, index, ticks);
      delta = stepOf(tickValue, ticks);
    }
    const logDelta = Math.log10(Math.abs(delta));
    const decimals = Number.isNaN(logDelta)
      ? 1
      : Math.max(Math.min(-1 * Math.floor(logDelta), 20), 0);
    return formatFixed(tickValue, decimals);
  };
}

/** Chart.js's calculateDelta: the step between ticks, or a non-whole tick's own fraction. */
function stepOf(tickValue: number, ticks: { value: number }[]): number {
  const at = (i: number) => ticks[i]?.value ?? 0;
  let delta = ticks.length > 3 ? at(2) - at(1) : at(1) - at(0);
  if (Math.abs(delta) >= 1 && tickValue !== Math.floor(tickValue))
    delta = tickValue - Math.floor(tickValue);
  return delta;
}
