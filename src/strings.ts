/**
 * At most `max` characters of `text`, counted in code points, so an emoji (a surrogate pair in
 * UTF-16) is never cut in half. Telegram refuses text with half a surrogate pair outright.
 */
export function sliceChars(text: string, max: number): string {
  const chars = Array.from(text);
  return chars.length <= max ? text : chars.slice(0, Math.max(0, max)).join("");
}
