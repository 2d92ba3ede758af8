import { type RenderableReply, shownLinks } from "../core/reply.ts";
import { formatTable, stripControl } from "./text.ts";

export interface ConsoleRendering {
  text: string;
  /** The button ids in the order they are numbered (!first, !first+1, …). */
  buttons: string[];
}

/** Where the console saved a file of the reply, or why it could not (one line). */
export type SavedFile = { path: string } | { problem: string };

/** What the console adds to a reply: where its files went, and the numbers of its buttons. */
export interface ConsoleContext {
  /** The reply's PNG picture, saved. */
  picture?: SavedFile | undefined;
  /** The reply's files, saved, in the reply's order. */
  files?: readonly SavedFile[] | undefined;
  /** The number of the reply's first button: numbers go on from the replies before it. */
  firstButton?: number | undefined;
}

/**
 * A reply as plain terminal text. Control characters are removed so metadata cannot move the
 * cursor or recolour the terminal; nothing else needs escaping in plain text.
 */
export function renderConsole(
  reply: RenderableReply,
  context: ConsoleContext = {},
): ConsoleRendering {
  const clean = (text: string) => stripControl(text);
  const lines: string[] = [];
  const prefix = reply.tone === "error" ? "✖ " : reply.tone === "warning" ? "! " : "";
  if (reply.title)
    lines.push(`${prefix}${clean(reply.title)}${reply.url ? `  <${clean(reply.url)}>` : ""}`);
  if (reply.text) lines.push(reply.title ? clean(reply.text) : `${prefix}${clean(reply.text)}`);
  for (const field of reply.fields ?? []) {
    const value = clean(field.value);
    lines.push(
      value.includes("\n")
        ? `${clean(field.name)}:\n  ${value.replace(/\n/g, "\n  ")}`
        : `${clean(field.name)}: ${value}`,
    );
  }
  if (reply.table && reply.table.rows.length > 0) lines.push("", formatTable(reply.table, 32));
  const links = shownLinks(reply);
  if (links.length > 0) {
    // A link labelled with its own address (one to copy, /verify's) is printed once.
    const line = (link: { label: string; url: string }) =>
      clean(link.label) === clean(link.url)
        ? clean(link.url)
        : `${clean(link.label)}: ${clean(link.url)}`;
    lines.push(links.map(line).join("\n"));
  }
  if (reply.image?.kind === "url") lines.push(`Image: ${clean(reply.image.url)}`);
  if (context.picture)
    lines.push(
      "path" in context.picture
        ? `Picture: ${clean(context.picture.path)}`
        : `Picture not saved: ${clean(context.picture.problem)}`,
    );
  for (const [i, file] of (reply.files ?? []).entries()) {
    const where = context.files?.[i];
    if (where && "problem" in where)
      lines.push(`File ${clean(file.name)} not saved: ${clean(where.problem)}`);
    else lines.push(`File: ${clean(where?.path ?? file.name)} (${file.data.byteLength} bytes)`);
  }
  if (reply.footer) lines.push(`— ${clean(reply.footer)}`);
  const buttons = reply.buttons ?? [];
  if (buttons.length > 0) {
    const first = context.firstButton ?? 1;
    lines.push(buttons.map((button, i) => `[!${first + i} ${clean(button.label)}]`).join("  "));
  }
  return { text: lines.join("\n"), buttons: buttons.map((button) => button.id) };
}
