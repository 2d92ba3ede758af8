import fc from "fast-check";
import { afterEach, describe, expect, it } from "vitest";
import { flattenProfile } from "../commands/profile.ts";
import { reportsCsv } from "../commands/reports.ts";
import { segmentCsv } from "../commands/segment.ts";
import { slashCommands } from "../src/adapters/discord/commands.ts";
import { quoteInput } from "../src/api/validate.ts";
import { defineCommand } from "../src/core/command.ts";
import { KnownCollections } from "../src/core/known-collections.ts";
import { opt } from "../src/core/options.ts";
import { RecentWallets } from "../src/core/recent-wallets.ts";
import { NameResolver } from "../src/core/resolver.ts";
import { formatTable, truncate } from "../src/render/text.ts";
import type { SpamReport } from "../src/store/types.ts";
import { cutText, sliceChars } from "../src/strings.ts";
import { type RuntimeSetup, startRuntime } from "./helpers.ts";

/**
 * The helpers that replaced copies which disagreed: each former call site is driven through its
 * own path, so a copy that comes back shows here.
 */

/** A family: four people joined by zero-width joiners, 7 code points, 11 UTF-16 units. */
const FAMILY = "👨‍👩‍👧‍👦";
const FORMULAS = ["=1+1", "+1", "-1+2", "@SUM(A1)", '=HYPERLINK("http://x")'];

/** No lone surrogate, no trailing joiner: what is left of a grapheme after a bad cut. */
function expectWholeGraphemes(text: string): void {
  expect(text).not.toMatch(
    /[\ud800-\udbff](?![\udc00-\udfff])|(?<![\ud800-\udbff])[\udc00-\udfff]/,
  );
  expect(text).not.toMatch(/\u200d(?:…)?$/);
  expect(text).not.toMatch(/👨(?:…)?$/);
}

describe("CSV: every export the bot writes neutralises formulas", () => {
  const cells = (csv: string) => csv.split("\r\n").flatMap((line) => line.split(","));

  it("/segment's export", () => {
    for (const formula of FORMULAS) {
      const csv = segmentCsv([{ walletAddress: formula, totalSpend: formula }]);
      const row = csv.split("\r\n")[1] ?? "";
      expect(row.startsWith(`'${formula.slice(0, 1)}`) || row.startsWith(`"'`)).toBe(true);
      for (const cell of cells(csv)) expect(cell).not.toMatch(/^"?[=+\-@]/);
    }
    // A plain negative number stays a number in a number column.
    expect(segmentCsv([{ walletAddress: "0x1", totalSpend: "-4001" }])).toContain(",-4001\r\n");
  });

  it("/reports' export", () => {
    for (const formula of FORMULAS) {
      const report: SpamReport = {
        id: 1,
        chain: "ethereum",
        platform: formula,
        chatId: formula,
        userId: formula,
        userName: formula,
        wallet: formula,
        contract: formula,
        tokenId: formula,
        kind: "spam",
        feedback: formula,
        // Refused: the service's own words are the answer shown.
        status: "failed",
        upstream: formula,
        attempts: 1,
        nextAttemptAt: null,
        createdAt: 0,
        updatedAt: 0,
      };
      const csv = reportsCsv([report]);
      const fields = cells(csv.split("\r\n")[1] ?? "");
      const guarded = fields.filter((cell) => /^"?'[=+\-@]/.test(cell));
      // platform, chatId, userId, userName, wallet, contract, tokenId, feedback, serviceAnswer.
      expect(guarded).toHaveLength(9);
      for (const cell of cells(csv)) expect(cell).not.toMatch(/^"?[=+\-@]/);
    }
  });
});

describe("text cutting never splits a grapheme", () => {
  it("cutText: the family is kept whole or dropped, in code points and in UTF-16 units", () => {
    const text = `abc${FAMILY}def`;
    expect(cutText(text, 6)).toBe("abc…");
    expect(cutText(text, 11)).toBe(`abc${FAMILY}…`);
    expect(cutText(text, 13, { unit: "utf16" })).toBe("abc…");
    expect(cutText(text, 15, { unit: "utf16" })).toBe(`abc${FAMILY}…`);
    expect(cutText(text, 20, { unit: "utf16", mark: "" })).toBe(`abc${FAMILY}def`);
    expect(cutText(text, 8, { mark: "" })).toBe("abc");
    expect(sliceChars(text, 5)).toBe("abc");
    expect(cutText("short", 5)).toBe("short");
  });

  it("cutText agrees with walking the graphemes one by one, for any text and limit", () => {
    const segmenter = new Intl.Segmenter(undefined, { granularity: "grapheme" });
    const walk = (text: string, max: number, unit: "char" | "utf16", mark: string): string => {
      const size = (s: string) => (unit === "utf16" ? s.length : [...s].length);
      if (size(text) <= max) return text;
      const budget = max - size(mark);
      if (budget < 0) return walk(mark, Math.max(0, max), unit, "");
      let kept = "";
      for (const { segment } of segmenter.segment(text)) {
        if (size(kept) + size(segment) > budget) break;
        kept += segment;
      }
      return kept + mark;
    };
    const pieces = fc.constantFrom(
      "a",
      "é",
      "e\u0301",
      FAMILY,
      "🇺🇦",
      "👍🏽",
      "\ud83d",
      "\ude00",
      "\u200d",
      "\r\n",
      " ",
    );
    fc.assert(
      fc.property(
        fc.array(pieces, { maxLength: 40 }).map((parts) => parts.join("")),
        fc.nat({ max: 60 }),
        fc.constantFrom<"char" | "utf16">("char", "utf16"),
        fc.constantFrom("…", "", "...", FAMILY),
        (text, max, unit, mark) => {
          expect(cutText(text, max, { unit, mark })).toBe(walk(text, max, unit, mark));
        },
      ),
      { numRuns: 3000, seed: 7 },
    );
  });

  it("renderers' truncate (Discord and Telegram limits, in UTF-16 units)", () => {
    const cut = truncate(`${"a".repeat(10)}${FAMILY}${"b".repeat(10)}`, 15);
    expect(cut).toBe(`${"a".repeat(10)}…`);
    expectWholeGraphemes(cut);
  });

  it("table cells", () => {
    const table = formatTable({ columns: ["name"], rows: [[`${"a".repeat(20)}${FAMILY}zzzz`]] });
    const cell = table.split("\n")[2] ?? "";
    expect(cell).toBe(`${"a".repeat(20)}…`);
    expectWholeGraphemes(cell);
  });

  it("/profile field names and values", () => {
    const long = `${"v".repeat(195)}${FAMILY}`;
    const { fields } = flattenProfile({ [`${"k".repeat(95)}${FAMILY}`]: long });
    // An unknown field is labelled from its name, capitalized.
    expect(fields[0]?.name).toBe(`K${"k".repeat(94)}…`);
    expect(fields[0]?.value).toBe(`${"v".repeat(195)}…`);
    for (const field of fields) {
      expectWholeGraphemes(field.name);
      expectWholeGraphemes(field.value);
    }
  });

  it("input quoted in an error message", () => {
    // quoteInput shows joiners as "?", so the grapheme here is a thumb with its skin tone.
    const quoted = quoteInput(`${"q".repeat(46)}👍🏽z`);
    expect(quoted).toBe(`"${"q".repeat(46)}…"`);
    expectWholeGraphemes(quoted.slice(1, -1));
  });

  it("Discord slash-command descriptions", () => {
    const command = defineCommand({
      name: "emoji",
      description: `${"d".repeat(95)}${FAMILY}`,
      options: { what: opt.string(`${"o".repeat(95)}${FAMILY}`) },
      examples: ["/emoji x"],
      run: async () => ({ text: "" }),
    });
    const [payload] = slashCommands([command]);
    expect(payload?.description).toBe(`${"d".repeat(95)}…`);
    expect(payload?.options?.[0]?.description).toBe(`${"o".repeat(95)}…`);
  });

  it("collection names offered as choices", async () => {
    const index = new KnownCollections();
    const address = (n: number) => `0x${n.toString(16).padStart(40, "0")}`;
    const name = (n: string) => `Ape ${"x".repeat(34)}${FAMILY} ${n}`;
    index.remember([
      { address: address(1), name: name("one") },
      { address: address(2), name: name("two") },
    ]);
    const resolver = new NameResolver({
      collections: index,
      refresher: undefined,
      wallets: new RecentWallets(),
      chat: "console:1",
    });
    const resolution = await resolver.collection("ape");
    if (resolution.kind !== "choose") throw new Error(`expected choices, got ${resolution.kind}`);
    expect(resolution.choices).toHaveLength(2);
    for (const choice of resolution.choices) {
      expect(choice.label.startsWith(`Ape ${"x".repeat(34)}… (0x`)).toBe(true);
      expectWholeGraphemes(choice.label);
    }
  });

  describe("autocomplete choice names", () => {
    let t: RuntimeSetup | undefined;
    afterEach(async () => {
      await t?.close();
      t = undefined;
    });

    it("are cut to Discord's 100 units without half an emoji", async () => {
      const index = new KnownCollections();
      index.remember([{ address: `0x${"1".repeat(40)}`, name: `${"A".repeat(95)}${FAMILY}` }]);
      t = await startRuntime({}, {}, [], { collections: index });
      const [choice] = await t.runtime.autocomplete("audience", "collection", "aaa");
      expect(choice?.name).toBe("A".repeat(95));
    });
  });
});
