import { DateTime, IANAZone } from "luxon";
import { type Checked, invalid, valid } from "../api/validate.ts";

/**
 * Wall-clock schedules in a named time zone (scheduled digests): "daily at 09:00 Europe/Berlin",
 * "weekly on Monday at 09:00 UTC". A slot is the instant a schedule fires; it stays at the same
 * local time across daylight-saving changes (09:00 Berlin is 08:00 UTC in winter, 07:00 in summer).
 *
 * Local times that a DST change skips or repeats, one documented behaviour:
 * - skipped (02:30 on the spring-forward night in Berlin: clocks jump 02:00 -> 03:00): the slot is
 *   moved forward by the gap, to 03:30 local; the day still gets its one slot.
 * - repeated (02:30 on the fall-back night happens twice): the slot is the second 02:30 (standard
 *   time, after the clocks went back), once; the first 02:30 is not a slot.
 */

export type Cadence = "daily" | "weekly";

export interface Schedule {
  cadence: Cadence;
  /** ISO weekday, 1 = Monday ... 7 = Sunday; weekly schedules only. */
  weekday: number | null;
  /** "HH:MM", 24-hour, local to `zone`. */
  time: string;
  /** An IANA zone name ("Europe/Berlin", "UTC"). */
  zone: string;
}

export const WEEKDAYS = [
  { value: 1, names: ["mon", "monday"] },
  { value: 2, names: ["tue", "tues", "tuesday"] },
  { value: 3, names: ["wed", "wednesday"] },
  { value: 4, names: ["thu", "thur", "thurs", "thursday"] },
  { value: 5, names: ["fri", "friday"] },
  { value: 6, names: ["sat", "saturday"] },
  { value: 7, names: ["sun", "sunday"] },
] as const;

/** 1 -> "Monday". */
export function weekdayName(weekday: number): string {
  const name = WEEKDAYS.find((d) => d.value === weekday)?.names[1] ?? "monday";
  return name.charAt(0).toUpperCase() + name.slice(1);
}

/** "09:00", "9:00", "0900" or "9" into "09:00"; hours 0-23, minutes 0-59. */
export function checkTime(raw: string): Checked<string> {
  const match = /^(\d{1,2})(?::?(\d{2}))?$/.exec(raw.trim());
  const hour = Number(match?.[1]);
  const minute = Number(match?.[2] ?? "0");
  if (!match || hour > 23 || minute > 59)
    return invalid(
      "invalid_schedule",
      `"${raw}" is not a time of day: use HH:MM on a 24-hour clock, e.g. 09:00.`,
    );
  return valid(`${String(hour).padStart(2, "0")}:${String(minute).padStart(2, "0")}`);
}

/** "mon" / "Monday" into 1 (ISO weekday). */
export function checkWeekday(raw: string): Checked<number> {
  const wanted = raw.trim().toLowerCase();
  const day = WEEKDAYS.find((d) => (d.names as readonly string[]).includes(wanted));
  if (!day)
    return invalid(
      "invalid_schedule",
      `"${raw}" is not a day of the week: use mon, tue, wed, thu, fri, sat or sun.`,
    );
  return valid(day.value);
}

/** An IANA zone name as the zone database spells it ("europe/berlin" -> "Europe/Berlin"). */
export function checkZone(raw: string): Checked<string> {
  const name = raw.trim();
  if (/^(utc|gmt|z)$/i.test(name)) return valid("UTC");
  if (!/^[A-Za-z_]+(?:\/[A-Za-z0-9_+-]+){0,2}$/.test(name) || !IANAZone.isValidZone(name))
    return invalid(
      "invalid_schedule",
      `"${raw}" is not a time zone I know: use an IANA name such as Europe/Berlin, America/New_York or UTC.`,
    );
  // Intl answers the zone database's own spelling of the name.
  const canonical = new Intl.DateTimeFormat("en-US", { timeZone: name }).resolvedOptions().timeZone;
  return valid(canonical === "Etc/UTC" ? "UTC" : canonical);
}

/** Whether a word looks like a time of day (so a parser can tell it from a zone or a day). */
export const looksLikeTime = (word: string) => /^\d{1,2}(:?\d{2})?$/.test(word.trim());

/** The slot of `schedule` on the local calendar day `day` (any time of that day, in its zone). */
function slotOn(schedule: Schedule, day: DateTime): DateTime {
  const [hour, minute] = schedule.time.split(":").map(Number) as [number, number];
  // Luxon moves a local time inside a spring-forward gap forward by the gap, and takes the
  // standard-time offset for a repeated one: the behaviour documented above.
  return DateTime.fromObject(
    { year: day.year, month: day.month, day: day.day, hour, minute },
    { zone: schedule.zone },
  );
}

const firesOn = (schedule: Schedule, day: DateTime) =>
  schedule.cadence === "daily" || day.weekday === schedule.weekday;

/** The most recent slot at or before `now` (epoch ms), in epoch ms. */
export function latestSlot(schedule: Schedule, now: number): number {
  const today = DateTime.fromMillis(now, { zone: schedule.zone }).startOf("day");
  for (let back = 0; back <= 8; back++) {
    const day = today.minus({ days: back });
    if (!firesOn(schedule, day)) continue;
    const slot = slotOn(schedule, day);
    if (slot.toMillis() <= now) return slot.toMillis();
  }
  throw new Error(`no slot of ${describeSchedule(schedule)} in the last 8 days`);
}

/** The first slot after `now` (epoch ms), in epoch ms. */
export function nextSlot(schedule: Schedule, now: number): number {
  const today = DateTime.fromMillis(now, { zone: schedule.zone }).startOf("day");
  for (let ahead = 0; ahead <= 8; ahead++) {
    const day = today.plus({ days: ahead });
    if (!firesOn(schedule, day)) continue;
    const slot = slotOn(schedule, day);
    if (slot.toMillis() > now) return slot.toMillis();
  }
  throw new Error(`no slot of ${describeSchedule(schedule)} in the next 8 days`);
}

/** "daily at 09:00 Europe/Berlin", "weekly on Monday at 09:00 UTC". */
export function describeSchedule(schedule: Schedule): string {
  const on = schedule.cadence === "weekly" ? ` on ${weekdayName(schedule.weekday ?? 1)}` : "";
  return `${schedule.cadence}${on} at ${schedule.time} ${schedule.zone}`;
}

/** A slot's local date as a title shows it: "23 Nov 2026" (weekly: "Mon 23 Nov 2026"). */
export function slotDate(schedule: Schedule, slot: number): string {
  const local = DateTime.fromMillis(slot, { zone: schedule.zone }).setLocale("en");
  return local.toFormat(schedule.cadence === "weekly" ? "ccc d LLL yyyy" : "d LLL yyyy");
}

/** A slot's local time of day, "09:00". */
export function slotTime(schedule: Schedule, slot: number): string {
  return DateTime.fromMillis(slot, { zone: schedule.zone }).toFormat("HH:mm");
}
