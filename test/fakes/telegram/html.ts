import type { MessageEntity } from "grammy/types";

/**
 * Telegram's HTML parse mode, as the Bot API documents it: the supported tags, the four named
 * entities plus numeric ones, properly nested tags. It is deliberately separate from the
 * renderer's helpers so that the fake checks the renderer instead of agreeing with it.
 */

export class EntityParseError extends Error {}

export interface ParsedHtml {
  /** The visible text: what Telegram stores and counts against the limits. */
  text: string;
  entities: MessageEntity[];
}

const NAMED: Record<string, string> = { lt: "<", gt: ">", amp: "&", quot: '"' };

const SIMPLE_TAGS: Record<string, MessageEntity["type"]> = {
  b: "bold",
  strong: "bold",
  i: "italic",
  em: "italic",
  u: "underline",
  ins: "underline",
  s: "strikethrough",
  strike: "strikethrough",
  del: "strikethrough",
  "tg-spoiler": "spoiler",
  code: "code",
  pre: "pre",
  blockquote: "blockquote",
};

const OTHER_TAGS = new Set(["a", "span", "tg-emoji", "tg-time"]);

interface OpenTag {
  name: string;
  attrs: Record<string, string>;
  offset: number;
}

function byteOffset(source: string, index: number): number {
  return Buffer.byteLength(source.slice(0, index), "utf8");
}

/** Decodes `&...;` at `index`; a `&` that starts no entity stays a literal `&`, as Telegram does. */
function decodeEntity(source: string, index: number): { text: string; next: number } {
  const match = /^&(#x[0-9a-fA-F]{1,6}|#[0-9]{1,7}|[a-zA-Z]+);/.exec(
    source.slice(index, index + 12),
  );
  if (!match) return { text: "&", next: index + 1 };
  const name = match[1]!;
  let text: string | undefined;
  if (name.startsWith("#x") || name.startsWith("#X")) {
    const code = Number.parseInt(name.slice(2), 16);
    text = code <= 0x10ffff ? String.fromCodePoint(code) : undefined;
  } else if (name.startsWith("#")) {
    const code = Number.parseInt(name.slice(1), 10);
    text = code <= 0x10ffff ? String.fromCodePoint(code) : undefined;
  } else {
    text = NAMED[name];
  }
  return text === undefined
    ? { text: "&", next: index + 1 }
    : { text, next: index + match[0].length };
}

function decodeAll(value: string): string {
  let out = "";
  let i = 0;
  while (i < value.length) {
    if (value[i] === "&") {
      const { text, next } = decodeEntity(value, i);
      out += text;
      i = next;
    } else {
      out += value[i];
      i += 1;
    }
  }
  return out;
}

function parseAttributes(source: string, raw: string, at: number): Record<string, string> {
  const attrs: Record<string, string> = {};
  const pattern = /\s*([a-zA-Z-]+)(?:\s*=\s*(?:"([^"]*)"|'([^']*)'|([^\s"'=<>`]+)))?/y;
  let pos = 0;
  while (pos < raw.length) {
    if (raw.slice(pos).trim() === "") break;
    pattern.lastIndex = pos;
    const match = pattern.exec(raw);
    if (!match) {
      throw new EntityParseError(
        `Expected an attribute name at byte offset ${byteOffset(source, at)}`,
      );
    }
    const name = match[1]!.toLowerCase();
    attrs[name] = decodeAll(match[2] ?? match[3] ?? match[4] ?? "");
    pos = pattern.lastIndex;
  }
  return attrs;
}

function entityFor(tag: OpenTag, length: number): MessageEntity | undefined {
  const { offset } = tag;
  const simple = SIMPLE_TAGS[tag.name];
  if (simple === "blockquote") {
    return "expandable" in tag.attrs
      ? { type: "expandable_blockquote", offset, length }
      : { type: "blockquote", offset, length };
  }
  if (simple === "pre") return { type: "pre", offset, length };
  if (simple !== undefined) return { type: simple, offset, length } as MessageEntity;
  if (tag.name === "span") return { type: "spoiler", offset, length };
  if (tag.name === "a") return { type: "text_link", offset, length, url: tag.attrs.href ?? "" };
  if (tag.name === "tg-emoji") {
    return { type: "custom_emoji", offset, length, custom_emoji_id: tag.attrs["emoji-id"] ?? "" };
  }
  return undefined;
}

/**
 * Parses Telegram HTML into visible text and entities, throwing EntityParseError on what Telegram
 * would refuse; its message is what Telegram puts after "Bad Request: can't parse entities: ".
 */
export function parseTelegramHtml(source: string): ParsedHtml {
  let text = "";
  const entities: MessageEntity[] = [];
  const stack: OpenTag[] = [];
  let i = 0;
  while (i < source.length) {
    const char = source[i]!;
    if (char === "&") {
      const decoded = decodeEntity(source, i);
      text += decoded.text;
      i = decoded.next;
      continue;
    }
    if (char !== "<") {
      text += char;
      i += 1;
      continue;
    }
    const close = source.indexOf(">", i);
    if (close === -1) {
      throw new EntityParseError(`Unclosed start tag at byte offset ${byteOffset(source, i)}`);
    }
    const inner = source.slice(i + 1, close);
    if (inner.startsWith("/")) {
      const name = inner.slice(1).trim().toLowerCase();
      const open = stack.pop();
      if (!open) {
        throw new EntityParseError(`Unexpected end tag at byte offset ${byteOffset(source, i)}`);
      }
      if (open.name !== name) {
        throw new EntityParseError(
          `Unmatched end tag at byte offset ${byteOffset(source, i)}, expected "</${open.name}>", found "</${name}>"`,
        );
      }
      const entity = entityFor(open, text.length - open.offset);
      if (entity && entity.length > 0) entities.push(entity);
    } else {
      const nameMatch = /^([a-zA-Z][a-zA-Z0-9-]*)/.exec(inner);
      if (!nameMatch) {
        throw new EntityParseError(
          `Unexpected end of name token at byte offset ${byteOffset(source, i)}`,
        );
      }
      const name = nameMatch[1]!.toLowerCase();
      if (SIMPLE_TAGS[name] === undefined && !OTHER_TAGS.has(name)) {
        throw new EntityParseError(
          `Unsupported start tag "${name}" at byte offset ${byteOffset(source, i)}`,
        );
      }
      const attrs = parseAttributes(source, inner.slice(name.length), i);
      if (name === "span" && attrs.class !== "tg-spoiler") {
        throw new EntityParseError(
          `Tag "span" must have class "tg-spoiler" at byte offset ${byteOffset(source, i)}`,
        );
      }
      stack.push({ name, attrs, offset: text.length });
    }
    i = close + 1;
  }
  const unclosed = stack.pop();
  if (unclosed) {
    throw new EntityParseError(`Can't find end tag corresponding to start tag "${unclosed.name}"`);
  }
  entities.sort((a, b) => a.offset - b.offset || b.length - a.length);
  return { text, entities };
}
