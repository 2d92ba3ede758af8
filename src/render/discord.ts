import {
  type APIActionRowComponent,
  type APIButtonComponentWithCustomId,
  type APIEmbed,
  type APIEmbedField,
  ButtonStyle,
  ComponentType,
  MessageFlags,
} from "discord-api-types/v10";
import {
  type RenderableReply,
  type RenderedButton,
  type ButtonStyle as ReplyButtonStyle,
  type ReplyField,
  type ReplyLink,
  shownLinks,
} from "../core/reply.ts";
import { sliceChars } from "../strings.ts";
import { escapeDiscord, neutraliseMentions, ZWSP } from "./discord-escape.ts";
import { formatTable, httpUrl, stripControl, TRUNCATION_MARK, truncate } from "./text.ts";

/** Discord's documented limits (https://discord.com/developers/docs/resources/message#embed-object-embed-limits). */
export const DISCORD_LIMITS = {
  title: 256,
  description: 4096,
  fields: 25,
  fieldName: 256,
  fieldValue: 1024,
  footer: 2048,
  embedTotal: 6000,
  customId: 100,
  buttonLabel: 80,
  buttonsPerRow: 5,
  rows: 5,
  attachments: 10,
  attachmentDescription: 1024,
} as const;

export interface DiscordFile {
  attachment: Buffer;
  name: string;
  /** Alt text of an image attachment. */
  description?: string;
}

export type DiscordActionRow = APIActionRowComponent<APIButtonComponentWithCustomId>;

/**
 * A message: its embeds and components are Discord API objects (discord-api-types), and the
 * envelope is as discord.js takes it for `interaction.reply`, `followUp` and `channel.send`, which
 * the Discord adapter alone calls.
 * For `editReply` and `update` pass it through {@link withoutFlags}: an edit cannot change whether
 * a message is ephemeral, and discord.js' edit options do not accept the flag.
 */
export interface DiscordMessage {
  embeds: APIEmbed[];
  components: DiscordActionRow[];
  files: DiscordFile[];
  allowedMentions: { parse: [] };
  flags?: MessageFlags.Ephemeral;
}

export type DiscordEdit = Omit<DiscordMessage, "flags">;

export function withoutFlags(message: DiscordMessage): DiscordEdit {
  const { flags: _flags, ...edit } = message;
  return edit;
}

const TONE_COLOURS = {
  info: 0x5865f2,
  success: 0x57f287,
  warning: 0xfee75c,
  error: 0xed4245,
} as const;

const BUTTON_STYLES: Record<ReplyButtonStyle, APIButtonComponentWithCustomId["style"]> = {
  primary: ButtonStyle.Primary,
  secondary: ButtonStyle.Secondary,
  success: ButtonStyle.Success,
  danger: ButtonStyle.Danger,
};

const PARAGRAPH = "\n\n";
const LINK_LABEL_MAX = 200;

/** Escapes at most what can be shown: the input is cut one past the limit, so the cut still shows. */
function escapeWithin(text: string, max: number, maskedLink = true): string {
  return truncate(escapeDiscord(stripControl(text).slice(0, max + 1), maskedLink), max);
}

function plain(text: string, max: number): string {
  // Trim before cutting, and cut by whole characters: a cut inside an emoji leaves half of it.
  return truncate(neutraliseMentions(sliceChars(stripControl(text).trim(), max + 1)), max);
}

/** Only http(s) URLs are linked; parentheses are encoded so a URL cannot end a masked link early. */
export function safeHttpUrl(raw: string): string | undefined {
  return httpUrl(raw)?.replace(/\(/g, "%28").replace(/\)/g, "%29");
}

function safeFileName(raw: string, extension?: string): string {
  let name = stripControl(raw)
    .replace(/[^A-Za-z0-9._-]+/g, "_")
    .replace(/^[._]+/, "")
    .slice(0, 80);
  if (name === "") name = "file";
  if (extension && !name.toLowerCase().endsWith(`.${extension}`)) name = `${name}.${extension}`;
  return name;
}

/** Characters of description kept, when the embed total is exceeded, before fields are dropped. */
const DESCRIPTION_FLOOR = 2000;

/** One part of the description that can shrink to a budget (an empty string drops it). */
interface Section {
  full: string;
  cut: (max: number) => string;
}

function textSection(text: string): Section {
  return { full: text, cut: (max) => (max <= 0 ? "" : truncate(text, max)) };
}

/** Cuts whole lines and ends with a line holding the mark, so the cut is visible. */
function cutLines(lines: string[], max: number, wrap: (body: string) => string): string {
  const overhead = wrap("").length;
  const markLine = TRUNCATION_MARK;
  const kept: string[] = [];
  let used = overhead;
  for (const line of lines) {
    const cost = (kept.length === 0 ? 0 : 1) + line.length;
    // Room must stay for the newline and the mark line that follow a cut.
    if (used + cost + 1 + markLine.length > max) break;
    kept.push(line);
    used += cost;
  }
  if (kept.length === lines.length) return wrap(lines.join("\n"));
  if (overhead + markLine.length > max) return "";
  return wrap([...kept, markLine].join("\n"));
}

function tableSection(inner: string): Section {
  // Backslashes do not escape inside a code block; a zero-width space after each backtick keeps
  // any run of backticks in a cell from closing the fence.
  const safe = inner.replace(/`/g, `\`${ZWSP}`);
  const wrap = (body: string) => `\`\`\`\n${body}\n\`\`\``;
  const lines = safe.split("\n");
  return {
    full: wrap(safe),
    cut: (max) => cutLines(lines, max, wrap),
  };
}

function linkLine(link: ReplyLink): string | undefined {
  const url = safeHttpUrl(link.url);
  if (!url) return undefined;
  // Every bracket escaped: the label can neither close this link nor open another.
  const label = escapeWithin(link.label, LINK_LABEL_MAX, false).replace(/[[\]]/g, "\\$&").trim();
  return `[${label === "" ? escapeDiscord(new URL(url).hostname) : label}](${url})`;
}

function linksSection(lines: string[]): Section {
  return {
    full: lines.join("\n"),
    cut: (max) => cutLines(lines, max, (body) => body),
  };
}

/**
 * Joins the sections within `budget`, sharing the room fairly: a short section keeps all of
 * itself and what it does not need goes to the longer ones.
 */
function composeDescription(sections: Section[], budget: number): string {
  const parts = sections.filter((s) => s.full.length > 0);
  const joined = parts.map((s) => s.full).join(PARAGRAPH);
  if (joined.length <= budget) return joined;
  let room = budget - PARAGRAPH.length * (parts.length - 1);
  const share = new Map<Section, number>();
  let left = parts.length;
  for (const part of [...parts].sort((a, b) => a.full.length - b.full.length)) {
    const give = Math.max(0, Math.min(part.full.length, Math.floor(room / left)));
    share.set(part, give);
    room -= give;
    left -= 1;
  }
  const cut = parts.map((part) => part.cut(share.get(part) ?? 0)).filter((s) => s.length > 0);
  return truncate(cut.join(PARAGRAPH), budget);
}

function renderField(field: ReplyField): APIEmbedField {
  const name = escapeWithin(field.name, DISCORD_LIMITS.fieldName);
  const value = escapeWithin(field.value, DISCORD_LIMITS.fieldValue);
  return {
    // Discord rejects empty field names and values; a zero-width space renders as nothing.
    name: name.trim() === "" ? ZWSP : name,
    value: value.trim() === "" ? ZWSP : value,
    ...(field.inline === undefined ? {} : { inline: field.inline }),
  };
}

/** The first `keep` fields, plus a last field saying how many were left out when any were. */
function selectFields(rendered: APIEmbedField[], total: number, keep: number): APIEmbedField[] {
  const kept = rendered.slice(0, keep);
  const omitted = total - kept.length;
  if (omitted > 0) {
    kept.push({
      name: TRUNCATION_MARK,
      value: `${omitted} more field${omitted === 1 ? "" : "s"} omitted`,
    });
  }
  return kept;
}

function embedSize(embed: APIEmbed): number {
  return (
    (embed.title?.length ?? 0) +
    (embed.description?.length ?? 0) +
    (embed.footer?.text.length ?? 0) +
    (embed.author?.name.length ?? 0) +
    (embed.fields ?? []).reduce((sum, f) => sum + f.name.length + f.value.length, 0)
  );
}

function renderButtons(buttons: RenderedButton[]): DiscordActionRow[] {
  const max = DISCORD_LIMITS.buttonsPerRow * DISCORD_LIMITS.rows;
  const seen = new Set<string>();
  const rendered = buttons.slice(0, max).map((button): APIButtonComponentWithCustomId => {
    if (button.id.length < 1 || button.id.length > DISCORD_LIMITS.customId) {
      throw new Error(`button id must be 1-${DISCORD_LIMITS.customId} characters: "${button.id}"`);
    }
    if (seen.has(button.id)) throw new Error(`duplicate button id in one message: "${button.id}"`);
    seen.add(button.id);
    const label = plain(button.label, DISCORD_LIMITS.buttonLabel);
    return {
      type: ComponentType.Button,
      style: BUTTON_STYLES[button.style ?? "secondary"],
      label: label === "" ? TRUNCATION_MARK : label,
      custom_id: button.id,
    };
  });
  const rows: DiscordActionRow[] = [];
  for (let i = 0; i < rendered.length; i += DISCORD_LIMITS.buttonsPerRow) {
    rows.push({
      type: ComponentType.ActionRow,
      components: rendered.slice(i, i + DISCORD_LIMITS.buttonsPerRow),
    });
  }
  return rows;
}

/**
 * Renders a reply as one Discord embed with buttons and attachments, within every Discord limit;
 * wherever text had to be cut the truncation mark shows it. All reply text is treated as
 * untrusted: it cannot format, link or mention, and `allowedMentions` forbids pings as well.
 */
export function renderDiscord(reply: RenderableReply): DiscordMessage {
  const files: DiscordFile[] = [];
  const usedNames = new Set<string>();
  const addFile = (file: DiscordFile): string | undefined => {
    if (files.length >= DISCORD_LIMITS.attachments) return undefined;
    let name = file.name;
    for (let n = 2; usedNames.has(name.toLowerCase()); n += 1) {
      name = file.name.replace(/(\.[^.]*)?$/, (ext) => `-${n}${ext}`);
    }
    usedNames.add(name.toLowerCase());
    files.push({ ...file, name });
    return name;
  };

  const embed: APIEmbed = { color: TONE_COLOURS[reply.tone ?? "info"] };

  const title =
    reply.title === undefined ? "" : escapeWithin(reply.title.trim(), DISCORD_LIMITS.title);
  if (title !== "") embed.title = title;
  const url = reply.url === undefined ? undefined : safeHttpUrl(reply.url);
  if (url && embed.title) embed.url = url;

  if (reply.image?.kind === "png") {
    const alt = stripControl(reply.image.alt).trim();
    const name = addFile({
      attachment: toBuffer(reply.image.data),
      name: safeFileName(reply.image.name, "png"),
      ...(alt === "" ? {} : { description: truncate(alt, DISCORD_LIMITS.attachmentDescription) }),
    });
    if (name) embed.image = { url: `attachment://${name}` };
  } else if (reply.image?.kind === "url") {
    const imageUrl = safeHttpUrl(reply.image.url);
    if (imageUrl) embed.image = { url: imageUrl };
  }
  for (const file of reply.files ?? []) {
    addFile({ attachment: toBuffer(file.data), name: safeFileName(file.name) });
  }

  const footer = reply.footer === undefined ? "" : plain(reply.footer, DISCORD_LIMITS.footer);
  if (footer !== "") embed.footer = { text: footer };

  const sections: Section[] = [];
  if (reply.text !== undefined) {
    sections.push(textSection(escapeWithin(reply.text.trim(), DISCORD_LIMITS.description)));
  }
  const tableText = reply.table ? formatTable(reply.table) : "";
  if (tableText !== "") sections.push(tableSection(tableText));
  const linkLines = shownLinks(reply)
    .map(linkLine)
    .filter((l): l is string => l !== undefined);
  if (linkLines.length > 0) sections.push(linksSection(linkLines));

  const allFields = reply.fields ?? [];
  let keepFields = Math.min(
    allFields.length,
    allFields.length > DISCORD_LIMITS.fields ? DISCORD_LIMITS.fields - 1 : DISCORD_LIMITS.fields,
  );
  const renderedFields = allFields.slice(0, keepFields).map(renderField);
  const setFields = () => {
    const fields = selectFields(renderedFields, allFields.length, keepFields);
    if (fields.length > 0) embed.fields = fields;
    else delete embed.fields;
  };
  const setDescription = (budget: number) => {
    const description = composeDescription(sections, Math.max(0, budget));
    if (description !== "") embed.description = description;
    else delete embed.description;
  };
  setFields();
  setDescription(DISCORD_LIMITS.description);

  // The 6000-character total. The description is the answer itself, so it keeps up to
  // DESCRIPTION_FLOOR characters while fields give way from the end; only then does it shrink.
  const over = () => embedSize(embed) - DISCORD_LIMITS.embedTotal;
  const floor = Math.min(embed.description?.length ?? 0, DESCRIPTION_FLOOR);
  if (over() > 0) setDescription(Math.max(floor, (embed.description?.length ?? 0) - over()));
  while (over() > 0 && keepFields > 0) {
    keepFields -= 1;
    setFields();
  }
  if (over() > 0) setDescription((embed.description?.length ?? 0) - over());

  const components = renderButtons(reply.buttons ?? []);
  const hasEmbed =
    embed.title !== undefined ||
    embed.description !== undefined ||
    embed.fields !== undefined ||
    embed.image !== undefined ||
    embed.footer !== undefined;
  // Discord refuses a message with nothing in it; a blank description keeps it valid.
  if (!hasEmbed && components.length === 0 && files.length === 0) embed.description = ZWSP;

  return {
    embeds: hasEmbed || embed.description !== undefined ? [embed] : [],
    components,
    files,
    allowedMentions: { parse: [] },
    ...(reply.private || reply.confidential ? { flags: MessageFlags.Ephemeral } : {}),
  };
}

function toBuffer(data: Uint8Array): Buffer {
  return Buffer.from(data.buffer, data.byteOffset, data.byteLength);
}
