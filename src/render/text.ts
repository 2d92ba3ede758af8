import stringWidth from "string-width";
import type { ReplyTable } from "../core/reply.ts";
import { cutText } from "../strings.ts";

/** The mark every renderer shows where it had to cut text to fit a platform limit. */
export const TRUNCATION_MARK = "…";

/**
 * Cuts `text` to at most `max` UTF-16 code units (the unit Discord and Telegram count in),
 * ending with the truncation mark, and never splitting a grapheme.
 */
export function truncate(text: string, max: number, mark = TRUNCATION_MARK): string {
  return cutText(text, max, { unit: "utf16", mark });
}

/**
 * Splits text into chunks of at most `max` code units, preferring line boundaries, then spaces,
 * and cutting hard only when a single line is longer than `max`.
 */
export function splitAtLines(text: string, max: number): string[] {
  const chunks: string[] = [];
  let rest = text;
  while (rest.length > max) {
    let cut = rest.lastIndexOf("\n", max);
    if (cut <= 0) cut = rest.lastIndexOf(" ", max);
    if (cut <= 0) {
      cut = max;
      const code = rest.charCodeAt(cut - 1);
      if (code >= 0xd800 && code <= 0xdbff) cut -= 1;
    }
    chunks.push(rest.slice(0, cut));
    rest = rest.slice(cut).replace(/^\n/, "");
  }
  if (rest.length > 0 || chunks.length === 0) chunks.push(rest);
  return chunks;
}

/** Control characters (other than newline and tab) never reach a chat: they can break layouts. */
export function stripControl(text: string): string {
  return text.replace(
    /[\u0000-\u0008\u000b-\u001f\u007f-\u009f\u200e\u200f\u202a-\u202e\u2066-\u2069]/g,
    "",
  );
}

/**
 * The one gate for links a renderer shows: only http(s), control characters removed, in the
 * parsed form, percent-encoded as the platforms expect ("my ape.png" -> "my%20ape.png").
 */
export function httpUrl(raw: string | undefined): string | undefined {
  if (raw === undefined) return undefined;
  try {
    const parsed = new URL(stripControl(raw).trim());
    return parsed.protocol === "http:" || parsed.protocol === "https:" ? parsed.href : undefined;
  } catch {
    return undefined;
  }
}

const PRINTABLE_ASCII = /^[\x20-\x7e]*$/;
const PLAIN_CELL = /^(?:[\x21-\x7e]+(?: [\x21-\x7e]+)*)?$/;

/**
 * Display width of a cell: the columns a monospace terminal gives it (string-width), so an emoji
 * or a CJK character counts two, a combining mark or a zero-width joiner none, and a family
 * emoji of five code points two. Counting code points pushed every column after such a name out
 * of line.
 */
function cellWidth(cell: string): number {
  return PRINTABLE_ASCII.test(cell) ? cell.length : stringWidth(cell);
}

/**
 * Lays a table out as monospace text: header, a rule, rows, each column padded to its widest
 * cell's display width. Cells are cut to `maxCell` code points and single-line. The result is
 * plain text: the caller escapes it for its platform.
 */
export function formatTable(table: ReplyTable, maxCell = 24): string {
  const clean = (cell: string) =>
    cutText(
      // Most cells are printable ASCII words with single spaces: nothing to strip or collapse.
      PLAIN_CELL.test(cell) ? cell : stripControl(cell).replace(/\s+/g, " ").trim(),
      maxCell,
    );
  const header = table.columns.map(clean);
  const rows = table.rows.map((row) => header.map((_, i) => clean(row[i] ?? "")));
  // Nothing to show: no text at all, so no renderer sends an empty block (Telegram refuses one).
  if (header.every((cell) => cell === "") && rows.every((row) => row.every((cell) => cell === "")))
    return "";
  // Each cell's width once: the widest of each column, and each cell's padding.
  const widthsOf = (cells: string[]) => cells.map(cellWidth);
  const headerWidths = widthsOf(header);
  const rowWidths = rows.map(widthsOf);
  const widths = headerWidths.map((w, i) => {
    let widest = w;
    for (const row of rowWidths) widest = Math.max(widest, row[i] ?? 0);
    return widest;
  });
  const line = (cells: string[], cellWidths: number[]) =>
    cells
      .map((cell, i) => {
        const pad = " ".repeat(Math.max(0, (widths[i] ?? 0) - (cellWidths[i] ?? 0)));
        return table.align?.[i] === "right" ? pad + cell : cell + pad;
      })
      .join("  ")
      .trimEnd();
  const rule = widths.map((w) => "-".repeat(w)).join("  ");
  return [
    line(header, headerWidths),
    rule,
    ...rows.map((row, i) => line(row, rowWidths[i] ?? [])),
  ].join("\n");
}
