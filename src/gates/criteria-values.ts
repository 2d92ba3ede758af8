/**
 * The values inside a gate criterion's clause as a manager types them (src/gates/criteria.ts reads
 * the clauses): whole counts, amounts in a chain's currency, days, and behavior names. Each
 * refusal is a UserError that says what to type instead.
 */

import { BEHAVIORS } from "../api/schemas.ts";
import { quoteInput } from "../api/validate.ts";
import { serviceBehaviorNamed } from "../core/behaviors.ts";
import { UserError } from "../errors.ts";

/** Larger counts and amounts are typing mistakes, not gates. */
export const MAX_COUNT = 1_000_000;
/** Ten years: a longer "within" is no filter. */
export const MAX_DAYS = 3650;

/** The behaviors a gate can name, as people type them. */
export const GATE_BEHAVIOR_NAMES: readonly string[] = BEHAVIORS.filter(
  (b) => b !== "BEHAVIOR_UNSPECIFIED",
).map((b) => b.slice("BEHAVIOR_".length).toLowerCase().replace(/_/g, ""));

/** A whole count 1…MAX_COUNT, or a refusal that says what to type. */
export function countOf(raw: string | undefined, what: string, example: string): number {
  const text = (raw ?? "").trim();
  if (!/^\d+$/.test(text)) {
    throw new UserError(
      "invalid_number",
      text.startsWith("-")
        ? `${what} cannot be negative: write a whole number, e.g. \`${example}\`.`
        : `${what} must be a whole number, e.g. \`${example}\`${text ? `, not ${quoteInput(text, 30)}` : ""}.`,
    );
  }
  const digits = text.replace(/^0+(?=\d)/, "");
  if (digits.length > 7 || Number(digits) > MAX_COUNT)
    throw new UserError(
      "number_out_of_range",
      `${what} must be at most ${MAX_COUNT.toLocaleString("en-US")}: write a smaller number, e.g. \`${example}\`.`,
    );
  const value = Number(digits);
  if (value < 1)
    throw new UserError("number_out_of_range", `${what} must be at least 1, e.g. \`${example}\`.`);
  return value;
}

/** A positive decimal amount up to MAX_COUNT with at most 18 decimals, as a canonical string. */
export function amountOf(raw: string | undefined, what: string, example: string): string {
  const text = (raw ?? "").trim().replace(/\s*(?:eth|pol|matic)$/i, "");
  if (text.startsWith("-"))
    throw new UserError(
      "invalid_number",
      `${what} cannot be negative: write an amount such as \`${example}\`.`,
    );
  const match = /^(\d*)(?:\.(\d*))?$/.exec(text);
  if (!match || (!match[1] && !match[2]))
    throw new UserError(
      "invalid_number",
      `${what} must be an amount in the chain's currency, e.g. \`${example}\`${text ? `, not ${quoteInput(text, 30)}` : ""}.`,
    );
  const int = (match[1] ?? "").replace(/^0+/, "") || "0";
  const frac = (match[2] ?? "").replace(/0+$/, "");
  if (frac.length > 18)
    throw new UserError(
      "invalid_number",
      `${what} has more than 18 decimals: write e.g. \`${example}\`.`,
    );
  if (int.length > 7 || Number(int) > MAX_COUNT || (Number(int) === MAX_COUNT && frac))
    throw new UserError(
      "number_out_of_range",
      `${what} must be at most ${MAX_COUNT.toLocaleString("en-US")}: write a smaller amount, e.g. \`${example}\`.`,
    );
  if (int === "0" && !frac)
    throw new UserError("number_out_of_range", `${what} must be more than 0, e.g. \`${example}\`.`);
  return frac ? `${int}.${frac}` : int;
}

export function daysOf(raw: string | undefined): number {
  const text = (raw ?? "").trim();
  const match = /^(-?\d+)\s*(?:d|days?)?$/i.exec(text);
  const days = countOf(match?.[1] ?? text, "The days of lastpurchase", "lastpurchase 30d");
  if (days > MAX_DAYS)
    throw new UserError(
      "number_out_of_range",
      `lastpurchase takes at most ${MAX_DAYS} days: write e.g. \`lastpurchase 30d\`.`,
    );
  return days;
}

export function behaviorsOf(list: string, example: string): string[] {
  // "collector,whale", "collector, whale", "collector or whale", "collector and whale".
  const names = list
    .split(/\s*,\s*|\s+(?:and|or)\s+/i)
    .map((n) => n.trim())
    .filter((n) => n.length > 0);
  if (names.length === 0)
    throw new UserError(
      "missing_argument",
      `Name one or more behaviors, e.g. \`${example}\`: ${GATE_BEHAVIOR_NAMES.join(", ")}.`,
    );
  const out: string[] = [];
  for (const name of names) {
    const behavior = serviceBehaviorNamed(name);
    if (!behavior || !(BEHAVIORS as readonly string[]).includes(behavior))
      throw new UserError(
        "unknown_behavior",
        `${quoteInput(name, 30)} is not a behavior: use ${GATE_BEHAVIOR_NAMES.join(", ")}.`,
      );
    if (!out.includes(behavior)) out.push(behavior);
  }
  return out;
}
