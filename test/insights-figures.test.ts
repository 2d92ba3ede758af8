/** The insights' arithmetic on literal inputs: quartiles, the 5-person floor, per-person counts. */

import { describe, expect, it } from "vitest";
import { walletsThisRound } from "../src/insights/background.ts";
import {
  behaviorShares,
  type Person,
  type PersonFigures,
  peopleShares,
  personFigures,
  quartiles,
  topHeld,
} from "../src/insights/figures.ts";
import type { WalletRead } from "../src/insights/store.ts";

const read = (address: string, over: Partial<WalletRead>): WalletRead => ({
  address,
  readAt: 0,
  behavior: undefined,
  volume: undefined,
  purchases: undefined,
  collections: undefined,
  held: [],
  ...over,
});
const person = (userId: string): Person => ({
  userId,
  name: undefined,
  since: 0,
  wallets: [],
  private: false,
});
const withBehaviors = (behaviors: string[]): PersonFigures => ({
  read: 1,
  behaviors,
  volume: undefined,
  purchases: undefined,
  avgPrice: undefined,
  collections: undefined,
  held: new Set(),
});

describe("insights' figures", () => {
  it("quartiles interpolate between ranks, as spreadsheets' QUARTILE.INC", () => {
    expect(quartiles([1, 2, 3, 4, 5])).toEqual([2, 3, 4]);
    expect(quartiles([4, 1, 3, 2])).toEqual([1.75, 2.5, 3.25]);
    expect(quartiles([])).toBeUndefined();
  });

  it("a person's figures add their wallets up; collections are the union held", () => {
    const reads = new Map([
      [
        "0xa",
        read("0xa", {
          volume: 2,
          purchases: 4,
          collections: 2,
          held: [
            ["0xc1", "A"],
            ["0xc2", "B"],
          ],
          behavior: "BEHAVIOR_WHALE",
        }),
      ],
      [
        "0xb",
        read("0xb", {
          volume: 1,
          purchases: 2,
          collections: 2,
          held: [
            ["0xc2", "B"],
            ["0xc3", "C"],
          ],
          behavior: "BEHAVIOR_NEWBIE",
        }),
      ],
    ]);
    const figures = personFigures(["0xA", "0xB", "0xunread"], reads);
    expect(figures).toMatchObject({
      read: 2,
      volume: 3,
      purchases: 6,
      avgPrice: 0.5,
      collections: 3,
    });
    expect(figures.behaviors.sort()).toEqual(["BEHAVIOR_NEWBIE", "BEHAVIOR_WHALE"]);
  });

  it("held collections count each person once and leave out those held by fewer than 5", () => {
    const people = [
      ...Array.from({ length: 5 }, () => new Set(["0xc1", "0xc2"])),
      new Set(["0xc2"]),
      new Set(["0xc3"]),
    ];
    expect(topHeld(people, (a) => a.toUpperCase())).toEqual([
      { address: "0xc2", name: "0XC2", people: 6 },
      { address: "0xc1", name: "0XC1", people: 5 },
    ]);
  });

  it("behavior shares: 'unspecified' is no behavior, a category under 5 wallets is withheld", () => {
    const shares = behaviorShares({
      behaviors: { BEHAVIOR_WHALE: 6, BEHAVIOR_NEWBIE: 4, BEHAVIOR_UNSPECIFIED: 90 },
      collection: { shares: { BEHAVIOR_WHALE: 7 } },
    });
    expect(shares).toEqual([
      { behavior: "BEHAVIOR_WHALE", wallets: 6, share: 60, collectionShare: 7 },
      {
        behavior: "BEHAVIOR_NEWBIE",
        wallets: undefined,
        share: undefined,
        collectionShare: undefined,
      },
    ]);
  });

  it("behaviors among a group beside everyone, per person, from 5 people up", () => {
    const everyone = Array.from({ length: 20 }, (_, i) => person(`p${i}`));
    const figures = new Map(
      everyone.map((p, i) => [
        p.userId,
        withBehaviors(i < 6 ? ["BEHAVIOR_WHALE"] : ["BEHAVIOR_NEWBIE"]),
      ]),
    );
    const group = everyone.slice(0, 10);
    expect(peopleShares(group, everyone, figures)).toEqual([
      { behavior: "BEHAVIOR_WHALE", share: 60, overall: 30 },
    ]);
  });
});

describe("the background's pace", () => {
  it("a round reads its part of the minute's calls, and at least one wallet while the budget has it", () => {
    // 240 a minute, rounds of 10 s: 40 calls, 13 wallets of 3 calls.
    expect(walletsThisRound(240, 240, 10_000)).toBe(13);
    // The minute's budget spent: nothing.
    expect(walletsThisRound(240, 2, 10_000)).toBe(0);
    // A small setting (6 a minute is 1 call a round): a wallet's 3 calls, not none ever.
    expect(walletsThisRound(6, 6, 10_000)).toBe(1);
    expect(walletsThisRound(3, 3, 10_000)).toBe(1);
  });
});
