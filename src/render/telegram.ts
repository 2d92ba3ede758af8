import type {
  ButtonStyle,
  RenderableReply,
  RenderedButton,
  ReplyImage,
  ReplyLink,
} from "../core/reply.ts";
import {
  formatTable,
  httpUrl,
  splitAtLines,
  stripControl,
  TRUNCATION_MARK,
  truncate,
} from "./text.ts";

/**
 * Reply -> Telegram messages in HTML parse mode. Limits are counted the way Telegram counts them:
 * in UTF-16 code units of the visible text, after entity parsing (tags and link targets are free).
 */

export const TELEGRAM_TEXT_MAX = 4096;
export const TELEGRAM_CAPTION_MAX = 1024;
export const TELEGRAM_CALLBACK_DATA_MAX_BYTES = 64;
/** Beyond this many text messages a reply is cut: a longer answer belongs in a file or a page. */
export const TELEGRAM_MAX_TEXT_MESSAGES = 5;
export const TELEGRAM_BUTTONS_PER_ROW = 3;
/** Telegram clips long button labels itself; cutting them here keeps the mark visible. */
export const TELEGRAM_BUTTON_LABEL_MAX = 40;
/** sendPhoto takes at most 10 MB, width + height at most 10000 and a side ratio of at most 20. */
const PHOTO_MAX_BYTES = 10 * 1024 * 1024;
const PHOTO_MAX_DIMENSIONS_SUM = 10_000;
const PHOTO_MAX_RATIO = 20;

export interface TelegramInputFile {
  data: Uint8Array;
  name: string;
}

export type TelegramPhotoSource = TelegramInputFile | { url: string };

/** Structurally an `InlineKeyboardButton.CallbackButton` of the Bot API. */
export interface TelegramCallbackButton {
  text: string;
  callback_data: string;
  style?: "primary" | "success" | "danger";
}

/** Structurally an `InlineKeyboardButton.UrlButton`: opens an address (t.me/<bot>?start=…). */
export interface TelegramUrlButton {
  text: string;
  url: string;
}

export interface TelegramInlineKeyboard {
  inline_keyboard: (TelegramCallbackButton | TelegramUrlButton)[][];
}

/** One message to send, in order. Every `text` and `caption` is HTML (parse_mode "HTML"). */
export type TelegramMessage =
  | { kind: "text"; text: string; replyMarkup?: TelegramInlineKeyboard }
  | {
      kind: "photo";
      photo: TelegramPhotoSource;
      caption?: string;
      replyMarkup?: TelegramInlineKeyboard;
    }
  | {
      kind: "document";
      document: TelegramInputFile;
      caption?: string;
      /** Set only when a reply has neither text nor photo to carry its buttons. */
      replyMarkup?: TelegramInlineKeyboard;
    };

const HTML_ESCAPES: Record<string, string> = {
  "&": "&amp;",
  "<": "&lt;",
  ">": "&gt;",
  '"': "&quot;",
};
const HTML_SPECIAL = /[&<>"]/;

/**
 * Escapes plain text for Telegram HTML, in text and inside double-quoted attributes. One pass, and
 * none over text with nothing to escape (most of a reply's runs): it is on every answer's way out.
 */
export function escapeHtml(text: string): string {
  if (!HTML_SPECIAL.test(text)) return text;
  return text.replace(/[&<>"]/g, (char) => HTML_ESCAPES[char] ?? char);
}

const NAMED_ENTITIES: Record<string, string> = { lt: "<", gt: ">", amp: "&", quot: '"' };

/** The text Telegram shows for an HTML string this renderer produced: tags dropped, entities decoded. */
export function visibleText(html: string): string {
  return html
    .replace(/<[^>]*>/g, "")
    .replace(/&(#x[0-9a-f]+|#[0-9]+|lt|gt|amp|quot);/gi, (whole, name: string) => {
      const lower = name.toLowerCase();
      if (lower.startsWith("#x")) return String.fromCodePoint(Number.parseInt(lower.slice(2), 16));
      if (lower.startsWith("#")) return String.fromCodePoint(Number.parseInt(lower.slice(1), 10));
      return NAMED_ENTITIES[lower] ?? whole;
    });
}

/** Length as Telegram limits it: UTF-16 code units of the visible text. */
export function visibleLength(html: string): number {
  return visibleText(html).length;
}

/** A piece of plain text and how it is shown. Splitting works on runs, so tags are never cut. */
interface Run {
  text: string;
  bold?: boolean;
  italic?: boolean;
  pre?: boolean;
  href?: string;
}

const TONE_ICONS: Record<NonNullable<RenderableReply["tone"]>, string> = {
  info: "",
  success: "✅ ",
  warning: "⚠️ ",
  error: "❌ ",
};

function titleRuns(reply: RenderableReply, max = Number.POSITIVE_INFINITY): Run[] {
  const icon = reply.tone ? TONE_ICONS[reply.tone] : "";
  const title = stripControl(reply.title ?? "").trim();
  if (title === "") return [];
  const href = httpUrl(reply.url);
  const text = truncate(title, Math.max(1, max - icon.length));
  const run: Run = href === undefined ? { text, bold: true } : { text, bold: true, href };
  return icon === "" ? [run] : [{ text: icon }, run];
}

/** The body as runs, blocks separated by blank lines. The title is left out when it is a caption. */
function bodyRuns(reply: RenderableReply, withTitle: boolean): Run[] {
  const blocks: Run[][] = [];
  const title = withTitle ? titleRuns(reply) : [];
  const text = stripControl(reply.text ?? "").trim();
  if (title.length > 0 && text !== "") blocks.push([...title, { text: `\n${text}` }]);
  else if (title.length > 0) blocks.push(title);
  else if (text !== "") {
    // Without a title the tone icon leads the text; with one it sits on the title (here or in a caption).
    const hasTitle = stripControl(reply.title ?? "").trim() !== "";
    const icon = reply.tone && !hasTitle ? TONE_ICONS[reply.tone] : "";
    blocks.push([{ text: icon + text }]);
  }

  const fields = (reply.fields ?? []).flatMap((field, i): Run[] => [
    ...(i > 0 ? [{ text: "\n" }] : []),
    { text: stripControl(field.name).trim(), bold: true },
    { text: `: ${stripControl(field.value).trim()}` },
  ]);
  if (fields.length > 0) blocks.push(fields);

  if (reply.table && reply.table.columns.length > 0) {
    const table = formatTable(reply.table);
    if (table !== "") blocks.push([{ text: table, pre: true }]);
  }

  const links = (reply.links ?? []).flatMap((link): Run[] => {
    const href = httpUrl(link.url);
    if (href === undefined) return [];
    const label = stripControl(link.label).replace(/\s+/g, " ").trim();
    return [{ text: label === "" ? href : label, href }];
  });
  if (links.length > 0) {
    blocks.push(links.flatMap((run, i) => (i > 0 ? [{ text: " · " }, run] : [run])));
  }

  const footer = stripControl(reply.footer ?? "").trim();
  if (footer !== "") blocks.push([{ text: footer, italic: true }]);

  return blocks.flatMap((block, i) => (i > 0 ? [{ text: "\n\n" }, ...block] : block));
}

function runsText(runs: Run[]): string {
  return runs.map((run) => run.text).join("");
}

/** The runs covering visible offsets [start, end), cutting runs at the edges. */
function sliceRuns(runs: Run[], start: number, end: number): Run[] {
  const out: Run[] = [];
  let pos = 0;
  for (const run of runs) {
    const runEnd = pos + run.text.length;
    const from = Math.max(start, pos);
    const to = Math.min(end, runEnd);
    if (from < to) out.push({ ...run, text: run.text.slice(from - pos, to - pos) });
    pos = runEnd;
  }
  return out;
}

function renderRuns(runs: Run[]): string {
  return runs
    .map((run) => {
      let html = escapeHtml(run.text);
      if (run.pre) return `<pre>${html}</pre>`;
      if (run.href !== undefined) html = `<a href="${escapeHtml(run.href)}">${html}</a>`;
      if (run.italic) html = `<i>${html}</i>`;
      if (run.bold) html = `<b>${html}</b>`;
      return html;
    })
    .join("");
}

/**
 * Splits the visible text at line boundaries into at most `maxMessages` chunks of at most `max`
 * code units, then escapes and wraps each chunk on its own. The last chunk ends with the
 * truncation mark when the text did not fit.
 */
function chunkRuns(runs: Run[], max: number, maxMessages: number): string[] {
  const visible = runsText(runs);
  const ranges: [number, number][] = [];
  let pos = 0;
  for (const chunk of splitAtLines(visible, max)) {
    ranges.push([pos, pos + chunk.length]);
    pos += chunk.length;
    if (visible[pos] === "\n") pos += 1;
  }
  let truncatedAt: number | undefined;
  if (ranges.length > maxMessages) {
    const start = ranges[maxMessages - 1]![0];
    const last = splitAtLines(visible.slice(start), max - TRUNCATION_MARK.length)[0] ?? "";
    ranges.length = maxMessages - 1;
    ranges.push([start, start + last.length]);
    truncatedAt = start + last.length;
  }
  const html: string[] = [];
  for (const [from, to] of ranges) {
    let start = from;
    let end = to;
    while (start < end && visible[start] === "\n") start += 1;
    while (end > start && visible[end - 1] === "\n") end -= 1;
    const chunk = sliceRuns(runs, start, end);
    if (to === truncatedAt) chunk.push({ text: TRUNCATION_MARK });
    if (chunk.length > 0) html.push(renderRuns(chunk));
  }
  return html;
}

function assertCallbackData(id: string): void {
  const bytes = new TextEncoder().encode(id).length;
  if (bytes < 1 || bytes > TELEGRAM_CALLBACK_DATA_MAX_BYTES) {
    throw new Error(
      `Telegram callback_data must be 1-${TELEGRAM_CALLBACK_DATA_MAX_BYTES} bytes, button id has ${bytes}`,
    );
  }
}

const BUTTON_STYLES: Record<ButtonStyle, TelegramCallbackButton["style"]> = {
  primary: "primary",
  success: "success",
  danger: "danger",
  secondary: undefined,
};

function keyboard(
  buttons: RenderedButton[] | undefined,
  open: ReplyLink | undefined,
): TelegramInlineKeyboard | undefined {
  const url = httpUrl(open?.url);
  const rows: TelegramInlineKeyboard["inline_keyboard"] = [];
  // The way to go on (open the private chat) comes first, on a row of its own.
  if (open && url !== undefined) rows.push([{ text: buttonLabel(open.label), url }]);
  if ((!buttons || buttons.length === 0) && rows.length === 0) return undefined;
  for (const [i, button] of (buttons ?? []).entries()) {
    assertCallbackData(button.id);
    const rendered: TelegramCallbackButton = {
      text: buttonLabel(button.label),
      callback_data: button.id,
    };
    const style = button.style ? BUTTON_STYLES[button.style] : undefined;
    if (style !== undefined) rendered.style = style;
    if (i % TELEGRAM_BUTTONS_PER_ROW === 0) rows.push([]);
    rows[rows.length - 1]!.push(rendered);
  }
  return { inline_keyboard: rows };
}

function buttonLabel(text: string): string {
  const label = stripControl(text).replace(/\s+/g, " ").trim();
  return truncate(label === "" ? "·" : label, TELEGRAM_BUTTON_LABEL_MAX);
}

/** Width and height from a PNG's IHDR chunk, when the bytes look like a PNG. */
function pngSize(data: Uint8Array): { width: number; height: number } | undefined {
  const signature = [0x89, 0x50, 0x4e, 0x47, 0x0d, 0x0a, 0x1a, 0x0a];
  if (data.length < 24 || signature.some((byte, i) => data[i] !== byte)) return undefined;
  const view = new DataView(data.buffer, data.byteOffset, data.byteLength);
  return { width: view.getUint32(16), height: view.getUint32(20) };
}

/** A PNG Telegram would refuse as a photo goes as a document instead. */
function photoFits(data: Uint8Array): boolean {
  if (data.length > PHOTO_MAX_BYTES) return false;
  const size = pngSize(data);
  if (!size) return true;
  const { width, height } = size;
  if (width === 0 || height === 0) return false;
  return (
    width + height <= PHOTO_MAX_DIMENSIONS_SUM &&
    Math.max(width, height) / Math.min(width, height) <= PHOTO_MAX_RATIO
  );
}

function imageSource(
  image: ReplyImage | undefined,
): { photo: TelegramPhotoSource } | { document: TelegramInputFile } | undefined {
  if (!image) return undefined;
  if (image.kind === "url") {
    const url = httpUrl(image.url);
    return url === undefined ? undefined : { photo: { url } };
  }
  const file = { data: image.data, name: image.name };
  return photoFits(image.data) ? { photo: file } : { document: file };
}

/**
 * Renders a reply as the ordered messages to send: a photo first (its caption the whole reply
 * when that fits in 1024 characters, else the title), then the text split over at most
 * TELEGRAM_MAX_TEXT_MESSAGES messages, then files as documents. The buttons ride on the last
 * text message, or on the photo when there is no text message.
 */
export function renderTelegram(reply: RenderableReply): TelegramMessage[] {
  const markup = keyboard(reply.buttons, reply.openButton);
  const image = imageSource(reply.image);
  const messages: TelegramMessage[] = [];

  let texts: string[];
  if (image && "photo" in image) {
    const whole = bodyRuns(reply, true);
    const photo: TelegramMessage = { kind: "photo", photo: image.photo };
    if (runsText(whole).length <= TELEGRAM_CAPTION_MAX) {
      if (whole.length > 0) photo.caption = renderRuns(whole);
      texts = [];
    } else {
      const title = titleRuns(reply, TELEGRAM_CAPTION_MAX);
      if (title.length > 0) photo.caption = renderRuns(title);
      texts = chunkRuns(bodyRuns(reply, false), TELEGRAM_TEXT_MAX, TELEGRAM_MAX_TEXT_MESSAGES);
    }
    messages.push(photo);
  } else {
    texts = chunkRuns(bodyRuns(reply, true), TELEGRAM_TEXT_MAX, TELEGRAM_MAX_TEXT_MESSAGES);
  }
  for (const text of texts) messages.push({ kind: "text", text });

  if (image && "document" in image) messages.push({ kind: "document", document: image.document });
  for (const file of reply.files ?? []) {
    messages.push({ kind: "document", document: { data: file.data, name: file.name } });
  }
  if (messages.length === 0) messages.push({ kind: "text", text: "(no content)" });

  if (markup) {
    const carrier =
      messages.findLast((message) => message.kind === "text") ??
      messages.find((message) => message.kind === "photo") ??
      messages[messages.length - 1];
    if (carrier) carrier.replyMarkup = markup;
  }
  return messages;
}
