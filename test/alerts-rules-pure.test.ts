/** Channel rules as pure functions: names, word matches, quiet hours by an injected clock. */
import { describe, expect, it } from "vitest";
import {
  behaviorNamed,
  dueUnder,
  filteredBy,
  hasWord,
  inQuiet,
  parseQuiet,
  quietEnd,
  serializeRules,
} from "../src/alerts/rules.ts";

const utc = (iso: string) => Date.parse(iso);
const iso = (ms: number) => new Date(ms).toISOString();
const BERLIN_NIGHT = { from: "23:00", to: "07:00", zone: "Europe/Berlin" };

describe("minter behavior names", () => {
  it("takes the API's names in any case, without the prefix, and friendly aliases", () => {
    expect(behaviorNamed("BEHAVIOR_BADACTOR")).toBe("BEHAVIOR_BADACTOR");
    expect(behaviorNamed("badactor")).toBe("BEHAVIOR_BADACTOR");
    expect(behaviorNamed("Bad actor")).toBe("BEHAVIOR_BADACTOR");
    expect(behaviorNamed("spammer")).toBe("BEHAVIOR_BADACTOR");
    expect(behaviorNamed("programmed-flipper")).toBe("BEHAVIOR_PROGRAMMED_FLIPPER");
    expect(behaviorNamed("behavior_whale")).toBe("BEHAVIOR_WHALE");
    expect(behaviorNamed("clean")).toBe("NOT_BADACTOR");
    expect(behaviorNamed("unknown")).toBe("UNKNOWN");
    expect(behaviorNamed("wizard")).toBeUndefined();
  });
});

describe("name keywords", () => {
  it("match whole words in any case, phrases too", () => {
    expect(hasWord("Punk Club", "punk")).toBe(true);
    expect(hasWord("CryptoPunks", "punk")).toBe(false);
    expect(hasWord("Punks", "punk")).toBe(false);
    expect(hasWord("the-punk-dao", "PUNK")).toBe(true);
    expect(hasWord("Free  Mint Pass", "free mint")).toBe(true);
    expect(hasWord("Freemint", "free mint")).toBe(false);
    expect(hasWord("Ape Club", "")).toBe(false);
  });

  it("filters: include lists need a match, exclude lists none; minters and keywords together", () => {
    const contract = (name: string, minterBehavior?: string) => ({
      address: "0x1",
      name,
      types: ["TYPE_ERC721"],
      minter: undefined,
      txHash: undefined,
      mintedAt: undefined,
      minterBehavior,
    });
    const rules = {
      minters: { include: ["BEHAVIOR_WHALE", "UNKNOWN"] },
      keywords: { include: ["ape"], exclude: ["airdrop"] },
    };
    expect(filteredBy(rules, contract("Ape Club", "BEHAVIOR_WHALE"))).toBeUndefined();
    expect(filteredBy(rules, contract("Ape Club"))).toBeUndefined();
    expect(filteredBy(rules, contract("Ape Club", "BEHAVIOR_NEWBIE"))).toBe("minter");
    expect(filteredBy(rules, contract("Cat Club", "BEHAVIOR_WHALE"))).toBe("keyword");
    expect(filteredBy(rules, contract("Ape Airdrop", "BEHAVIOR_WHALE"))).toBe("keyword");
    expect(filteredBy({ minters: { exclude: ["UNKNOWN"] } }, contract("x"))).toBe("minter");
    expect(filteredBy({}, contract("anything"))).toBeUndefined();
  });

  it("empty lists are stored as no rules", () => {
    expect(serializeRules({ keywords: { include: [] }, minters: {} })).toBeNull();
    expect(serializeRules({ digestMinutes: 15 })).toBe('{"digestMinutes":15}');
  });
});

describe("quiet hours", () => {
  it("refuses bad times, equal ends and unknown zones; spells the zone as IANA does", () => {
    expect(parseQuiet("25:00-07:00", "UTC")).toHaveProperty("error");
    expect(parseQuiet("23:00", "UTC")).toHaveProperty("error");
    expect(parseQuiet("7:00-7:00", "UTC")).toHaveProperty("error");
    expect(parseQuiet("23:00-07:00", "Mars/Olympus")).toHaveProperty("error");
    expect(parseQuiet("23:00-7:00", "europe/berlin")).toEqual({
      quiet: { from: "23:00", to: "07:00", zone: "Europe/Berlin" },
    });
  });

  it("across midnight: 23:00-07:00 Berlin (winter, UTC+1)", () => {
    expect(inQuiet(BERLIN_NIGHT, utc("2026-01-10T21:59:00Z"))).toBe(false); // 22:59
    expect(inQuiet(BERLIN_NIGHT, utc("2026-01-10T22:00:00Z"))).toBe(true); // 23:00
    expect(inQuiet(BERLIN_NIGHT, utc("2026-01-11T03:00:00Z"))).toBe(true); // 04:00
    expect(inQuiet(BERLIN_NIGHT, utc("2026-01-11T06:00:00Z"))).toBe(false); // 07:00
    // Held from before midnight and after it: both until 07:00 Berlin, 06:00 UTC.
    expect(iso(quietEnd(BERLIN_NIGHT, utc("2026-01-10T22:30:00Z")))).toBe(
      "2026-01-11T06:00:00.000Z",
    );
    expect(iso(quietEnd(BERLIN_NIGHT, utc("2026-01-11T01:30:00Z")))).toBe(
      "2026-01-11T06:00:00.000Z",
    );
  });

  it("across the spring DST change (29 March 2026, 02:00 -> 03:00): ends at 07:00 summer time", () => {
    const evening = utc("2026-03-28T22:30:00Z"); // 23:30 CET
    expect(inQuiet(BERLIN_NIGHT, evening)).toBe(true);
    expect(iso(quietEnd(BERLIN_NIGHT, evening))).toBe("2026-03-29T05:00:00.000Z"); // 07:00 CEST
    expect(inQuiet(BERLIN_NIGHT, utc("2026-03-29T04:59:00Z"))).toBe(true); // 06:59 CEST
    expect(inQuiet(BERLIN_NIGHT, utc("2026-03-29T05:00:00Z"))).toBe(false);
    // Quiet hours starting in the skipped hour: 02:30 does not exist; 03:30 CEST is in them.
    const skipped = { from: "02:30", to: "04:00", zone: "Europe/Berlin" };
    expect(inQuiet(skipped, utc("2026-03-29T01:30:00Z"))).toBe(true); // 03:30 CEST
    expect(iso(quietEnd(skipped, utc("2026-03-29T01:30:00Z")))).toBe("2026-03-29T02:00:00.000Z");
  });

  it("across the autumn DST change (25 October 2026, 03:00 -> 02:00): ends at 07:00 winter time", () => {
    const evening = utc("2026-10-24T21:30:00Z"); // 23:30 CEST
    expect(inQuiet(BERLIN_NIGHT, evening)).toBe(true);
    expect(iso(quietEnd(BERLIN_NIGHT, evening))).toBe("2026-10-25T06:00:00.000Z"); // 07:00 CET
    // The repeated hour (02:xx twice) is quiet both times.
    expect(inQuiet(BERLIN_NIGHT, utc("2026-10-25T00:30:00Z"))).toBe(true);
    expect(inQuiet(BERLIN_NIGHT, utc("2026-10-25T01:30:00Z"))).toBe(true);
  });

  it("a window within one day (12:00-13:00 New York) and outside it", () => {
    const lunch = { from: "12:00", to: "13:00", zone: "America/New_York" };
    expect(inQuiet(lunch, utc("2026-07-01T16:30:00Z"))).toBe(true); // 12:30 EDT
    expect(inQuiet(lunch, utc("2026-07-01T17:00:00Z"))).toBe(false);
    expect(inQuiet(lunch, utc("2026-07-01T03:00:00Z"))).toBe(false);
  });
});

describe("when an alert is due under the rules (injected clock)", () => {
  it("no rules: now, not held", () => {
    const now = utc("2026-01-10T10:03:00Z");
    expect(dueUnder({}, now)).toEqual({ dueAt: now, held: false });
  });

  it("digest every 30 minutes: the end of the period, every alert of it alike", () => {
    const a = dueUnder({ digestMinutes: 30 }, utc("2026-01-10T10:03:00Z"));
    const b = dueUnder({ digestMinutes: 30 }, utc("2026-01-10T10:29:59Z"));
    expect(iso(a.dueAt)).toBe("2026-01-10T10:30:00.000Z");
    expect(b).toEqual(a);
    expect(a.held).toBe(true);
    expect(iso(dueUnder({ digestMinutes: 30 }, utc("2026-01-10T10:30:00Z")).dueAt)).toBe(
      "2026-01-10T11:00:00.000Z",
    );
  });

  it("quiet hours: held until they end; outside them, now", () => {
    const night = utc("2026-01-10T23:10:00Z"); // 00:10 Berlin
    expect(dueUnder({ quiet: BERLIN_NIGHT }, night)).toEqual({
      dueAt: utc("2026-01-11T06:00:00Z"),
      held: true,
    });
    const day = utc("2026-01-10T12:00:00Z");
    expect(dueUnder({ quiet: BERLIN_NIGHT }, day)).toEqual({ dueAt: day, held: false });
  });

  it("digest and quiet hours: a period ending in the quiet hours waits for their end", () => {
    const rules = { digestMinutes: 60, quiet: BERLIN_NIGHT };
    // 21:40 UTC = 22:40 Berlin: the period ends 23:00 Berlin, in the quiet hours.
    expect(iso(dueUnder(rules, utc("2026-01-10T21:40:00Z")).dueAt)).toBe(
      "2026-01-11T06:00:00.000Z",
    );
    // 13:40 UTC: the period ends at 14:00 UTC, outside them.
    expect(iso(dueUnder(rules, utc("2026-01-10T13:40:00Z")).dueAt)).toBe(
      "2026-01-10T14:00:00.000Z",
    );
  });
});
