import { stripControl } from "./text.ts";

/**
 * Escaping untrusted text for Discord markdown, apart from the renderer that lays a message out
 * (discord.ts). No platform library: the block-level escapes below are those of discord.js'
 * `escapeMarkdown` with the options this renderer used (a test holds the two to the same output).
 */

/** A zero-width space: breaks a link, a mention or a code fence without showing. */
export const ZWSP = "\u200b";

/** The block-level escapes may take quadratic time on long lines; they run on pieces this long. */
const ESCAPE_PIECE = 256;

/**
 * Backslashes, headings, lists and (when asked) masked links: what discord.js' `escapeMarkdown`
 * does with `escape`, `heading`, `bulletedList`, `numberedList` and `maskedLink` on and its inline
 * escapes off. Those (bold, italic, code, …) skip text inside URLs and emoji and miss runs
 * (`****x****` comes out as `\*\*\**x\*\*\\*\*`), so {@link escapeInline} does them instead.
 */
function escapeBlocks(text: string, maskedLink: boolean): string {
  const escaped = text
    .replaceAll("\\", "\\\\")
    .replace(/^( {0,2})([*-] )?( *)(#{1,3} )/gm, "$1$2$3\\$4")
    .replace(/^( *)([*-])( +)/gm, "$1\\$2$3")
    .replace(/^( *\d+)\./gm, "$1\\.");
  return maskedLink ? escaped.replace(/\[.+]\(.+\)/gm, "\\$&") : escaped;
}

/**
 * Makes untrusted text inert in Discord markdown: no formatting, no masked or bare links, no
 * mentions (`@everyone`, `<@id>`, `<#id>`, `<@&id>`, `</cmd:id>`, `<t:…>`), no quotes or subtext.
 */
export function escapeDiscord(text: string, maskedLink = true): string {
  const inert = neutraliseMentions(stripControl(text).replace(/:\/\//g, `:${ZWSP}//`));
  const escaped = inert
    .split("\n")
    .map((line) => {
      let out = "";
      for (let i = 0; i < line.length; i += ESCAPE_PIECE) {
        out += escapeBlocks(line.slice(i, i + ESCAPE_PIECE), maskedLink);
      }
      return out;
    })
    .join("\n");
  return escapeInline(escaped)
    .replace(/^(\s*)>/gm, "$1\\>")
    .replace(/^(\s*)-#/gm, "$1\\-#");
}

/** Puts a backslash before every bare formatting character; escape pairs are kept as they are. */
function escapeInline(text: string): string {
  return text.replace(/\\[\s\S]|[*_`~|]/g, (match) => (match.length === 2 ? match : `\\${match}`));
}

/** For plain-text spots (footer, button labels) where markdown does not render but mentions might. */
export function neutraliseMentions(text: string): string {
  return text
    .replace(/@(?=everyone|here)/gi, `@${ZWSP}`)
    .replace(/<(?=[@#/:]|a:|t:|id:)/g, `<${ZWSP}`);
}
