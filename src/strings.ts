/**
 * At most `max` characters of `text`, counted in code points, so an emoji (a surrogate pair in
 * UTF-16) is never cut in half. Telegram refuses text with half a surrogate pair outright.
 */
export function sliceChars(text: string, max: number): string {
  const chars = Array.from(text);
  return chars.length <= max ? text : chars.slice(0, Math.max(0, max)).join("");
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
