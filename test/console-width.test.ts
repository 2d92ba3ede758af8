/**
 * The console's tables are laid out by display width (issue "What a community sees", item 7): a
 * wide character (an emoji, a CJK ideograph) takes two columns of a terminal, a combining mark or
 * a zero-width joiner none, so a name holding them must be padded by what it takes on screen, or
 * every column after it is pushed out of line.
 */
import { describe, expect, it } from "vitest";
import { renderConsole } from "../src/render/console.ts";

/** Names, each with the columns it takes on a terminal, told piece by piece. */
const NAMES: { name: string; columns: number }[] = [
  // An emoji: two columns.
  { name: "🐸 Pepe Frens", columns: 2 + 11 },
  // CJK ideographs and kana: two columns each.
  { name: "日本のNFT", columns: 2 + 2 + 2 + 3 },
  // e and a combining acute accent: one column.
  { name: "Zoe\u0301 Club", columns: 3 + 5 },
  // Woman, ZWJ, woman, ZWJ, girl: one family emoji of two columns.
  { name: "👩\u200d👩\u200d👧 Family", columns: 2 + 7 },
  // Two regional indicators: one flag of two columns.
  { name: "🇫🇷 Paris", columns: 2 + 6 },
  // A heart with the emoji variation selector: two columns.
  { name: "\u2764\ufe0f Hearts", columns: 2 + 7 },
  { name: "Plain Apes", columns: 10 },
];

/** The line as a terminal shows it, its name replaced by as many x as it takes columns. */
function onScreen(line: string): string {
  const shown = NAMES.find((entry) => line.includes(entry.name));
  return shown ? line.replace(shown.name, "x".repeat(shown.columns)) : line;
}

describe("console tables by display width", () => {
  it("every row's columns start where the header's do, whatever the names hold", () => {
    const values = NAMES.map((_, i) => `${(i + 1) * 7}.5 ETH`);
    const { text } = renderConsole({
      table: {
        columns: ["#", "Collection", "Volume", "Sales"],
        rows: NAMES.map((entry, i) => [String(i + 1), entry.name, values[i] ?? "", String(i)]),
        align: ["right", "left", "left", "right"],
      },
    });
    const lines = text.split("\n").filter((line) => line.trim() !== "");
    const [header, rule, ...rows] = lines.map(onScreen);
    expect(rows).toHaveLength(NAMES.length);
    const volumeAt = header?.indexOf("Volume") ?? -1;
    expect(volumeAt).toBeGreaterThan(0);
    for (const [i, row] of rows.entries()) {
      // The third column starts at the header's column, and the last, right-aligned, ends with it.
      expect(row.indexOf(values[i] ?? "?"), lines[i + 2]).toBe(volumeAt);
      expect(row.length, lines[i + 2]).toBe(header?.length);
    }
    // The rule under the header spans each column's width, gaps where the header has them.
    expect(rule?.length).toBe(header?.length);
    expect(rule?.[volumeAt - 1]).toBe(" ");
    expect(rule?.[volumeAt]).toBe("-");
  });
});
