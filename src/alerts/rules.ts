import { DateTime } from "luxon";
import { BEHAVIORS } from "../api/schemas.ts";
import { behaviorKey, serviceBehaviorNamed } from "../core/behaviors.ts";
import { checkZone } from "../core/schedule.ts";
import { minterWords } from "./message.ts";
import { NOT_BAD_ACTOR } from "./minters.ts";
import type { AlertRules } from "./rules-shape.ts";
import type { NewContract } from "./store/types.ts";

/**
 * A channel's rules for one subscription (channel + chain): which new collections it gets
 * besides its types and bad-actor rule, and when. Stored as JSON with the subscription (what the
 * outbox rows already hang off), so every rule goes where the subscription goes (a moved chat,
 * the SQLite-to-PostgreSQL copy) and is removed with it.
 */
export type { AlertRules } from "./rules-shape.ts";

/** A minter with no known label, as the include/exclude lists name it. */
export const UNKNOWN_MINTER = "UNKNOWN";

export const MAX_KEYWORDS = 20;
export const MAX_DIGEST_MINUTES = 24 * 60;

/** The stored JSON as rules; anything unreadable is no rules (the channel gets every mint). */
export function parseRules(json: string | null | undefined): AlertRules {
  if (!json) return {};
  try {
    const value = JSON.parse(json) as AlertRules;
    return value && typeof value === "object" ? value : {};
  } catch {
    return {};
  }
}

/** What is stored: null when there are no rules left. */
export function serializeRules(rules: AlertRules): string | null {
  const clean = cleanRules(rules);
  return Object.keys(clean).length === 0 ? null : JSON.stringify(clean);
}

function cleanRules(rules: AlertRules): AlertRules {
  const out: AlertRules = {};
  const lists = (l: { include?: string[]; exclude?: string[] } | undefined) => {
    if (!l) return undefined;
    const o: { include?: string[]; exclude?: string[] } = {};
    if (l.include?.length) o.include = l.include;
    if (l.exclude?.length) o.exclude = l.exclude;
    return Object.keys(o).length ? o : undefined;
  };
  const minters = lists(rules.minters);
  if (minters) out.minters = minters;
  const keywords = lists(rules.keywords);
  if (keywords) out.keywords = keywords;
  if (rules.quiet) out.quiet = rules.quiet;
  if (rules.digestMinutes) out.digestMinutes = rules.digestMinutes;
  return out;
}

export const hasRules = (rules: AlertRules) => serializeRules(rules) !== null;

// Minter behaviors -------------------------------------------------------------------------------

/** The minters' own words beside the data service's behaviors (core/behaviors.ts). */
const MINTER_WORDS: Record<string, string> = {
  clean: NOT_BAD_ACTOR,
  notbadactor: NOT_BAD_ACTOR,
  nospamhistory: NOT_BAD_ACTOR,
  unknown: UNKNOWN_MINTER,
};

/**
 * A minter's behavior as people type it: one of the data service's (BEHAVIOR_BADACTOR, badactor,
 * "bad actor", programmed-flipper, spammer...), or clean or unknown; undefined when it is none.
 */
export function behaviorNamed(raw: string): string | undefined {
  return MINTER_WORDS[behaviorKey(raw)] ?? serviceBehaviorNamed(raw);
}

/** The behaviors one can name, for error messages. */
export const BEHAVIOR_NAMES = [
  ...BEHAVIORS.map((b) => b.slice("BEHAVIOR_".length).toLowerCase().replace(/_/g, "")),
  "clean",
  "unknown",
];

/** A behavior in words, for /alerts show. */
export function behaviorWords(behavior: string): string {
  return minterWords(behavior === UNKNOWN_MINTER ? undefined : behavior, "short");
}

// Filters ----------------------------------------------------------------------------------------

const escapeRegExp = (s: string) => s.replace(/[.*+?^${}()|[\]\\]/g, "\\$&");

/** Whether `keyword` (one or more words) is in `name` as whole words, any case. */
export function hasWord(name: string, keyword: string): boolean {
  const words = keyword.trim().split(/\s+/).map(escapeRegExp).join("[^\\p{L}\\p{N}]+");
  if (!words) return false;
  return new RegExp(`(?:^|[^\\p{L}\\p{N}])${words}(?:$|[^\\p{L}\\p{N}])`, "iu").test(name);
}

/** Why a contract is left out by the rules' filters, or undefined when it passes. */
export function filteredBy(
  rules: AlertRules,
  contract: NewContract,
): "minter" | "keyword" | undefined {
  const behavior = contract.minterBehavior ?? UNKNOWN_MINTER;
  const { minters, keywords } = rules;
  if (minters?.include?.length && !minters.include.includes(behavior)) return "minter";
  if (minters?.exclude?.includes(behavior)) return "minter";
  const name = contract.name ?? "";
  if (keywords?.include?.length && !keywords.include.some((k) => hasWord(name, k)))
    return "keyword";
  if (keywords?.exclude?.some((k) => hasWord(name, k))) return "keyword";
  return undefined;
}

// Quiet hours and digests ------------------------------------------------------------------------

/** "7:00", "07:00", "23:5" is refused: HH:MM, 00:00 to 23:59; minutes of the day. */
export function parseClock(raw: string): number | undefined {
  const match = /^(\d{1,2}):(\d{2})$/.exec(raw.trim());
  if (!match) return undefined;
  const h = Number(match[1]);
  const m = Number(match[2]);
  return h < 24 && m < 60 ? h * 60 + m : undefined;
}

const clock = (minutes: number) =>
  `${String(Math.floor(minutes / 60)).padStart(2, "0")}:${String(minutes % 60).padStart(2, "0")}`;

/** The quiet hours as stored, from "23:00-07:00" and a zone; or the reason it is not one. */
export function parseQuiet(
  range: string,
  zone: string,
): { quiet: { from: string; to: string; zone: string } } | { error: string } {
  const [a, b, ...rest] = range.split("-");
  const from = a === undefined ? undefined : parseClock(a);
  const to = b === undefined ? undefined : parseClock(b);
  if (rest.length > 0 || from === undefined || to === undefined)
    return { error: "Quiet hours are two times, like 23:00-07:00." };
  if (from === to) return { error: "Quiet hours must start and end at different times." };
  // The digests' check: the zone database's spelling, and UTC for utc, gmt and z.
  const name = checkZone(zone);
  if (!name.ok)
    return { error: `${zone} is not a time zone: use a name like Europe/Berlin or UTC.` };
  return { quiet: { from: clock(from), to: clock(to), zone: name.value } };
}

/** The local "HH:MM" of `at` (ms) in `zone`. */
export const clockIn = (at: number, zone: string): string =>
  DateTime.fromMillis(at, { zone }).toFormat("HH:mm");

/** Whether `at` (ms) falls in the quiet hours, by the local clock of their zone. */
export function inQuiet(quiet: NonNullable<AlertRules["quiet"]>, at: number): boolean {
  const local = DateTime.fromMillis(at, { zone: quiet.zone });
  const m = local.hour * 60 + local.minute;
  const from = parseClock(quiet.from) ?? 0;
  const to = parseClock(quiet.to) ?? 0;
  return from < to ? m >= from && m < to : m >= from || m < to;
}

/**
 * The end of the quiet hours `at` is in: the next local `to` after it, in the zone (across
 * midnight; a `to` that a spring-forward skips is the first instant after the gap).
 */
export function quietEnd(quiet: NonNullable<AlertRules["quiet"]>, at: number): number {
  const local = DateTime.fromMillis(at, { zone: quiet.zone });
  const to = parseClock(quiet.to) ?? 0;
  let end = local.set({ hour: Math.floor(to / 60), minute: to % 60, second: 0, millisecond: 0 });
  if (end.toMillis() <= at)
    end = local
      .plus({ days: 1 })
      .set({ hour: Math.floor(to / 60), minute: to % 60, second: 0, millisecond: 0 });
  return end.toMillis();
}

/**
 * When an alert enqueued at `now` is due under the rules: now; or the end of the digest period
 * (periods of N minutes from the Unix epoch, so every alert of one period shares it); pushed on
 * to the end of the quiet hours when that falls inside them. `held` when later than now: such
 * alerts are sent together as one digest.
 */
export function dueUnder(rules: AlertRules, now: number): { dueAt: number; held: boolean } {
  let dueAt = now;
  if (rules.digestMinutes && rules.digestMinutes > 0) {
    const period = rules.digestMinutes * 60_000;
    dueAt = Math.floor(now / period) * period + period;
  }
  if (rules.quiet && inQuiet(rules.quiet, dueAt)) dueAt = quietEnd(rules.quiet, dueAt);
  return { dueAt, held: dueAt > now };
}
