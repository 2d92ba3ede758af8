/**
 * Wall-clock slots of scheduled digests (src/core/schedule.ts), pure, with the clock given: across
 * midnight, across both DST changes in a named zone, weekly, and the parsing of times, days and
 * zones.
 */
import { describe, expect, it } from "vitest";
import {
  checkTime,
  checkWeekday,
  checkZone,
  describeSchedule,
  latestSlot,
  nextSlot,
  type Schedule,
  slotDate,
} from "../src/core/schedule.ts";

const at = (iso: string) => Date.parse(iso);
const iso = (ms: number) => new Date(ms).toISOString();
const daily = (time: string, zone: string): Schedule => ({
  cadence: "daily",
  weekday: null,
  time,
  zone,
});

describe("slots", () => {
  it("daily 09:00 UTC: the latest slot is today's once it passed, else yesterday's", () => {
    const s = daily("09:00", "UTC");
    expect(iso(latestSlot(s, at("2026-11-23T08:59:59Z")))).toBe("2026-11-22T09:00:00.000Z");
    expect(iso(latestSlot(s, at("2026-11-23T09:00:00Z")))).toBe("2026-11-23T09:00:00.000Z");
    expect(iso(nextSlot(s, at("2026-11-23T09:00:00Z")))).toBe("2026-11-24T09:00:00.000Z");
  });

  it("across midnight: a local time whose UTC day differs (00:30 Tokyo, 23:30 New York)", () => {
    // 00:30 in Tokyo (UTC+9) is 15:30 UTC the day before.
    const tokyo = daily("00:30", "Asia/Tokyo");
    expect(iso(latestSlot(tokyo, at("2026-11-23T15:29:00Z")))).toBe("2026-11-22T15:30:00.000Z");
    expect(iso(latestSlot(tokyo, at("2026-11-23T15:30:00Z")))).toBe("2026-11-23T15:30:00.000Z");
    expect(slotDate(tokyo, at("2026-11-23T15:30:00Z"))).toBe("24 Nov 2026");
    // 23:30 in New York (UTC-5 in November) is 04:30 UTC the next day.
    const ny = daily("23:30", "America/New_York");
    expect(iso(nextSlot(ny, at("2026-11-23T12:00:00Z")))).toBe("2026-11-24T04:30:00.000Z");
    expect(slotDate(ny, at("2026-11-24T04:30:00Z"))).toBe("23 Nov 2026");
  });

  it("09:00 Europe/Berlin stays 09:00 local across both DST changes", () => {
    const s = daily("09:00", "Europe/Berlin");
    // Spring forward on 29 Mar 2026: 08:00 UTC before, 07:00 UTC from that day.
    expect(iso(nextSlot(s, at("2026-03-27T12:00:00Z")))).toBe("2026-03-28T08:00:00.000Z");
    expect(iso(nextSlot(s, at("2026-03-28T12:00:00Z")))).toBe("2026-03-29T07:00:00.000Z");
    // Fall back on 25 Oct 2026: 07:00 UTC before, 08:00 UTC from that day.
    expect(iso(nextSlot(s, at("2026-10-24T00:00:00Z")))).toBe("2026-10-24T07:00:00.000Z");
    expect(iso(nextSlot(s, at("2026-10-24T12:00:00Z")))).toBe("2026-10-25T08:00:00.000Z");
    // One slot a day across the change: the day after the change is 24 h after it, not 23 or 25.
    const slots: number[] = [];
    let t = at("2026-10-23T00:00:00Z");
    for (let i = 0; i < 4; i++) {
      t = nextSlot(s, t);
      slots.push(t);
    }
    expect(slots.map(iso)).toEqual([
      "2026-10-23T07:00:00.000Z",
      "2026-10-24T07:00:00.000Z",
      "2026-10-25T08:00:00.000Z",
      "2026-10-26T08:00:00.000Z",
    ]);
  });

  it("a skipped local time (02:30 on spring-forward night) moves forward by the gap, once", () => {
    const s = daily("02:30", "Europe/Berlin");
    // 02:00-03:00 does not exist on 29 Mar 2026: the slot is 03:30 CEST (01:30 UTC).
    const slot = nextSlot(s, at("2026-03-28T12:00:00Z"));
    expect(iso(slot)).toBe("2026-03-29T01:30:00.000Z");
    expect(iso(nextSlot(s, slot))).toBe("2026-03-30T00:30:00.000Z");
    expect(iso(latestSlot(s, at("2026-03-29T01:29:00Z")))).toBe("2026-03-28T01:30:00.000Z");
  });

  it("a repeated local time (02:30 on fall-back night) is one slot: the second, standard-time one", () => {
    const s = daily("02:30", "Europe/Berlin");
    // 02:30 happens at 00:30 UTC (CEST) and again at 01:30 UTC (CET) on 25 Oct 2026.
    expect(iso(nextSlot(s, at("2026-10-24T12:00:00Z")))).toBe("2026-10-25T01:30:00.000Z");
    // Between the two 02:30s, the latest slot is still the day before's: no slot at the first.
    expect(iso(latestSlot(s, at("2026-10-25T00:45:00Z")))).toBe("2026-10-24T00:30:00.000Z");
    expect(iso(nextSlot(s, at("2026-10-25T01:30:00Z")))).toBe("2026-10-26T01:30:00.000Z");
  });

  it("weekly on Monday: the latest Monday's slot, up to a week back", () => {
    const s: Schedule = { cadence: "weekly", weekday: 1, time: "09:00", zone: "Europe/Berlin" };
    // 23 Nov 2026 is a Monday; 09:00 Berlin is 08:00 UTC.
    expect(iso(latestSlot(s, at("2026-11-23T07:59:00Z")))).toBe("2026-11-16T08:00:00.000Z");
    expect(iso(latestSlot(s, at("2026-11-29T23:00:00Z")))).toBe("2026-11-23T08:00:00.000Z");
    expect(iso(nextSlot(s, at("2026-11-23T08:00:00Z")))).toBe("2026-11-30T08:00:00.000Z");
    expect(slotDate(s, at("2026-11-23T08:00:00Z"))).toBe("Mon 23 Nov 2026");
    expect(describeSchedule(s)).toBe("weekly on Monday at 09:00 Europe/Berlin");
  });
});

describe("parsing", () => {
  it("times of day", () => {
    expect(checkTime("09:00")).toEqual({ ok: true, value: "09:00" });
    expect(checkTime("9:05")).toEqual({ ok: true, value: "09:05" });
    expect(checkTime("2130")).toEqual({ ok: true, value: "21:30" });
    expect(checkTime("7")).toEqual({ ok: true, value: "07:00" });
    for (const bad of ["24:00", "09:60", "9am", "noon", ""])
      expect(checkTime(bad)).toMatchObject({
        ok: false,
        message: expect.stringContaining("HH:MM"),
      });
  });

  it("days and zones", () => {
    expect(checkWeekday("Mon")).toEqual({ ok: true, value: 1 });
    expect(checkWeekday("sunday")).toEqual({ ok: true, value: 7 });
    expect(checkWeekday("funday")).toMatchObject({ ok: false });
    expect(checkZone("europe/berlin")).toEqual({ ok: true, value: "Europe/Berlin" });
    expect(checkZone("utc")).toEqual({ ok: true, value: "UTC" });
    expect(checkZone("America/New_York")).toEqual({ ok: true, value: "America/New_York" });
    for (const bad of ["Mars/Base", "+02:00", "CEST-ish", "Europe/Berlin; DROP"])
      expect(checkZone(bad)).toMatchObject({
        ok: false,
        message: expect.stringContaining("IANA"),
      });
  });
});
