const graphemes = new Intl.Segmenter(undefined, { granularity: "grapheme" });

const codePoints = (text: string): number => {
  let count = 0;
  for (const _ of text) count += 1;
  return count;
};
const codeUnits = (text: string): number => text.length;

export interface CutOptions {
  /**
   * What `max` counts: code points ("char", what a person sees as one character of plain text)
   * or UTF-16 code units ("utf16", what Discord and Telegram limits count).
   */
  unit?: "char" | "utf16";
  /** Ends a cut text, inside `max`. Default "…"; "" cuts without a mark. */
  mark?: string;
}

/**
 * The one way text is cut to a length: at most `max` units, ending with `mark` when cut, and never
 * splitting a grapheme (an emoji with its skin tone, a flag, a ZWJ family), which is kept whole or
 * dropped. Telegram refuses text with half a surrogate pair outright; half a ZWJ family shows as
 * a different emoji.
 */
export function cutText(text: string, max: number, options: CutOptions = {}): string {
  const utf16 = options.unit === "utf16";
  const size = utf16 ? codeUnits : codePoints;
  const mark = options.mark ?? "…";
  // A text of at most `max` UTF-16 units has at most `max` code points too.
  if (text.length <= max || size(text) <= max) return text;
  const budget = max - size(mark);
  if (budget < 0) return cutText(mark, Math.max(0, max), { ...options, mark: "" });
  // The first code unit beyond the budget, then the start of the grapheme holding it: the last
  // boundary within the budget. ICU finds it from the nearest safe point, so a cut costs the same
  // for a 40-character name and a 6,000-character page; walking every grapheme up to the budget
  // was half the renderers' time.
  const end = utf16 ? budget : codeUnitAfter(text, budget);
  const start = graphemes.segment(text).containing(end)?.index ?? end;
  return text.slice(0, start) + mark;
}

/** The code unit index just past the first `points` code points of `text`. */
function codeUnitAfter(text: string, points: number): number {
  let index = 0;
  for (let seen = 0; seen < points && index < text.length; seen++) {
    const code = text.charCodeAt(index);
    const pair =
      code >= 0xd800 && code <= 0xdbff && (text.charCodeAt(index + 1) & 0xfc00) === 0xdc00;
    index += pair ? 2 : 1;
  }
  return index;
}

/** At most `max` code points of `text`, cut without a mark and never inside a grapheme. */
export function sliceChars(text: string, max: number): string {
  return cutText(text, Math.max(0, max), { mark: "" });
}

/**
 * Control characters: C0 but tab, line feed and carriage return (free text such as descriptions
 * and raw metadata uses them; renderers fold them where a line must stay one line), DEL and C1.
 * NUL is the one that breaks things (bytes32 names end in NUL padding, and the chart library
 * cannot draw a string with a NUL); none of them means anything in a chat.
 */
const CONTROL_CHARACTERS = /[\u0000-\u0008\u000b\u000c\u000e-\u001f\u007f-\u009f]/g;

/** Removes control characters from text the data service sent, where it enters the bot. */
export function stripControlCharacters(value: string): string {
  return value.replace(CONTROL_CHARACTERS, "");
}

/**
 * What indexers write where a value is missing: a language's null printed as text ("None" from
 * Python, "null", "undefined", "NaN" from JavaScript, "[object Object]" from an object made text).
 * No name, description or trait means any of them, so they are shown as missing.
 */
const PLACEHOLDERS = new Set(["none", "null", "undefined", "nan", "[object object]"]);

export function isPlaceholderText(value: string): boolean {
  return PLACEHOLDERS.has(value.trim().toLowerCase());
}

/**
 * Text the data service sent for people to read (a name, a description, a trait), trimmed and
 * without control characters; undefined when it says nothing (empty, or a placeholder).
 */
export function presentText(value: unknown): string | undefined {
  if (typeof value === "number") return Number.isFinite(value) ? String(value) : undefined;
  if (typeof value !== "string") return undefined;
  const text = stripControlCharacters(value).trim();
  return text === "" || isPlaceholderText(text) ? undefined : text;
}
