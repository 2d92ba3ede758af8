import { describe, expect, it } from "vitest";
import type { RenderableReply } from "../src/core/reply.ts";
import {
  escapeHtml,
  renderTelegram,
  TELEGRAM_CAPTION_MAX,
  TELEGRAM_MAX_TEXT_MESSAGES,
  TELEGRAM_TEXT_MAX,
  type TelegramInlineKeyboard,
  type TelegramMessage,
  visibleLength,
  visibleText,
} from "../src/render/telegram.ts";
import { TRUNCATION_MARK } from "../src/render/text.ts";
import { parseTelegramHtml } from "./fakes/telegram/html.ts";

const PNG_1X1 = Buffer.from(
  "iVBORw0KGgoAAAANSUhEUgAAAAEAAAABCAYAAAAfFcSJAAAADUlEQVR42mNkYPhfDwAChwGA60e6kgAAAABJRU5ErkJggg==",
  "base64",
);

/** What a button does: its callback data, or the address it opens. */
function buttonTarget(button: TelegramInlineKeyboard["inline_keyboard"][number][number]): string {
  return "callback_data" in button ? button.callback_data : button.url;
}

function texts(messages: TelegramMessage[]): string[] {
  return messages.flatMap((m) => (m.kind === "text" ? [m.text] : []));
}

/** Every HTML string must be something Telegram accepts; its visible text is what Telegram counts. */
function accepted(html: string): string {
  return parseTelegramHtml(html).text;
}

function lines(count: number, width = 60): string {
  return Array.from(
    { length: count },
    (_, i) => `${String(i).padStart(4, "0")} ${"x".repeat(width)}`,
  ).join("\n");
}

describe("escapeHtml and visibleLength", () => {
  it("escapes the three reserved characters and double quotes", () => {
    expect(escapeHtml(`<b>x</b> & "q"`)).toBe("&lt;b&gt;x&lt;/b&gt; &amp; &quot;q&quot;");
  });

  it("counts the visible text, not the markup", () => {
    expect(visibleLength('<b>a &amp; b</b> <a href="https://x.test/?a=1&amp;b=2">link</a>')).toBe(
      "a & b link".length,
    );
    expect(visibleText("&lt;tag&gt; &#65;&#x42;")).toBe("<tag> AB");
  });
});

describe("renderTelegram", () => {
  it("arrives escaped: a collection named <b>x</b> & @everyone is shown as text, not markup", () => {
    const name = "<b>x</b> & @everyone";
    const [message, ...rest] = renderTelegram({
      title: name,
      text: `Collection ${name}`,
      fields: [{ name, value: name }],
      footer: name,
    });
    expect(rest).toEqual([]);
    expect(message?.kind).toBe("text");
    const html = message?.kind === "text" ? message.text : "";
    expect(html).not.toContain("<b>x</b>");
    expect(html).toContain("&lt;b&gt;x&lt;/b&gt; &amp; @everyone");
    const parsed = parseTelegramHtml(html);
    expect(parsed.text).toBe(
      [name, `Collection ${name}`, "", `${name}: ${name}`, "", name].join("\n"),
    );
    expect(parsed.entities.map((e) => e.type)).toEqual(["bold", "bold", "italic"]);
  });

  it("lays out title link, fields, links and footer in Telegram HTML", () => {
    const [message] = renderTelegram({
      title: "Azuki",
      url: "https://example.test/azuki?a=1&b=2",
      text: "Top holders",
      fields: [{ name: "Floor", value: "1.2 ETH" }],
      links: [
        { label: "Explorer", url: "https://etherscan.test/x" },
        { label: "bad", url: "javascript:alert(1)" },
        { label: "ftp", url: "ftp://files.test/x" },
      ],
      footer: "data: simulator",
      tone: "warning",
    });
    expect(message).toEqual({
      kind: "text",
      text:
        '⚠️ <b><a href="https://example.test/azuki?a=1&amp;b=2">Azuki</a></b>\nTop holders\n\n' +
        '<b>Floor</b>: 1.2 ETH\n\n<a href="https://etherscan.test/x">Explorer</a>\n\n<i>data: simulator</i>',
    });
  });

  it("does not link a title to a non-http url", () => {
    const [message] = renderTelegram({ title: "T", url: "javascript:alert(1)" });
    expect(message).toEqual({ kind: "text", text: "<b>T</b>" });
  });

  it("strips control characters from untrusted text", () => {
    const [message] = renderTelegram({ text: "a\u0000b\u202ec\u0007d\r\ne" });
    expect(message).toEqual({ kind: "text", text: "abcd\ne" });
  });

  it("puts the table in <pre>, escaped", () => {
    const [message] = renderTelegram({
      title: "Top",
      table: {
        columns: ["#", "name", "vol"],
        rows: [
          ["1", "<Punks> & co", "12.5"],
          ["2", "Azuki", "3"],
        ],
        align: ["right", "left", "right"],
      },
    });
    const html = message?.kind === "text" ? message.text : "";
    expect(html).toBe(
      "<b>Top</b>\n\n<pre>" +
        "#  name           vol\n" +
        "-  ------------  ----\n" +
        "1  &lt;Punks&gt; &amp; co  12.5\n" +
        "2  Azuki            3</pre>",
    );
    expect(parseTelegramHtml(html).entities.at(-1)?.type).toBe("pre");
  });

  it("splits a 5000+ character reply at line boundaries into chunks Telegram accepts", () => {
    const text = lines(120); // 120 lines of 65 characters: about 7900
    expect(text.length).toBeGreaterThan(5000);
    const messages = renderTelegram({ title: "Long", text: `<${text}>` });
    const chunks = texts(messages);
    expect(chunks.length).toBe(2);
    for (const chunk of chunks) {
      expect(visibleLength(chunk)).toBeLessThanOrEqual(TELEGRAM_TEXT_MAX);
      expect(accepted(chunk).length).toBe(visibleLength(chunk));
    }
    // Nothing lost but the newline the split happened at, and every chunk starts at a line start.
    expect(chunks.map(accepted).join("\n")).toBe(`Long\n<${text}>`);
    expect(accepted(chunks[1]!)).toMatch(/^\d{4} x+/);
  });

  it("splits a table longer than a message into several <pre> blocks", () => {
    const rows = Array.from({ length: 300 }, (_, i) => [String(i), "y".repeat(20)]);
    const messages = renderTelegram({ table: { columns: ["n", "name"], rows } });
    const chunks = texts(messages);
    expect(chunks.length).toBeGreaterThan(1);
    for (const chunk of chunks) {
      expect(chunk.startsWith("<pre>")).toBe(true);
      expect(chunk.endsWith("</pre>")).toBe(true);
      expect(visibleLength(chunk)).toBeLessThanOrEqual(TELEGRAM_TEXT_MAX);
      accepted(chunk);
    }
  });

  it("caps the number of messages and ends the last one with the truncation mark", () => {
    const text = lines(2000); // about 130 000 characters
    const messages = renderTelegram({ text, buttons: [{ label: "More", id: "btn1" }] });
    expect(messages).toHaveLength(TELEGRAM_MAX_TEXT_MESSAGES);
    const last = messages.at(-1);
    expect(last?.kind).toBe("text");
    const visible = accepted(last?.kind === "text" ? last.text : "");
    expect(visible.endsWith(TRUNCATION_MARK)).toBe(true);
    expect(visible.length).toBeLessThanOrEqual(TELEGRAM_TEXT_MAX);
    expect(last?.replyMarkup?.inline_keyboard.flat().map(buttonTarget)).toEqual(["btn1"]);
  });

  it("puts the buttons on the last text message only, three to a row", () => {
    const buttons = ["a", "b", "c", "d"].map((id) => ({ label: `Button ${id}`, id }));
    const messages = renderTelegram({ text: lines(100), buttons });
    expect(messages.length).toBe(2);
    expect(messages[0]?.replyMarkup).toBeUndefined();
    expect(messages[1]?.replyMarkup?.inline_keyboard.map((row) => row.map(buttonTarget))).toEqual([
      ["a", "b", "c"],
      ["d"],
    ]);
  });

  it("puts an open button (a group's way into the private chat) on a row of its own, first", () => {
    const messages = renderTelegram({
      text: "Open our private chat",
      openButton: { label: "Verify privately", url: "https://t.me/TestBot?start=verify_base" },
      buttons: [{ label: "Other", id: "x" }],
    });
    expect(messages[0]?.replyMarkup?.inline_keyboard).toEqual([
      [{ text: "Verify privately", url: "https://t.me/TestBot?start=verify_base" }],
      [{ text: "Other", callback_data: "x" }],
    ]);
    // An address that is no web address is never a button.
    const bad = renderTelegram({ text: "x", openButton: { label: "Bad", url: "javascript:1" } });
    expect(bad[0]?.replyMarkup).toBeUndefined();
  });

  it("keeps button labels plain, single-line and short, and maps styles Telegram knows", () => {
    const [message] = renderTelegram({
      text: "x",
      buttons: [
        { label: "<b>Spam</b>\nnow", id: "s1", style: "danger" },
        { label: "L".repeat(100), id: "s2", style: "secondary" },
      ],
    });
    expect(message?.replyMarkup?.inline_keyboard[0]).toEqual([
      { text: "<b>Spam</b> now", callback_data: "s1", style: "danger" },
      { text: `${"L".repeat(39)}${TRUNCATION_MARK}`, callback_data: "s2" },
    ]);
  });

  it("refuses a button id longer than 64 bytes of callback_data", () => {
    const reply: RenderableReply = { text: "x", buttons: [{ label: "b", id: "é".repeat(33) }] };
    expect(() => renderTelegram(reply)).toThrow(/callback_data/);
    expect(() =>
      renderTelegram({ text: "x", buttons: [{ label: "b", id: "é".repeat(32) }] }),
    ).not.toThrow();
  });

  it("sends a PNG as a photo with the whole reply as caption when it fits", () => {
    const messages = renderTelegram({
      title: "Chart",
      text: "Holders over time",
      image: { kind: "png", data: PNG_1X1, name: "chart.png", alt: "chart" },
      buttons: [{ label: "Refresh", id: "r" }],
    });
    expect(messages).toEqual([
      {
        kind: "photo",
        photo: { data: PNG_1X1, name: "chart.png" },
        caption: "<b>Chart</b>\nHolders over time",
        replyMarkup: { inline_keyboard: [[{ text: "Refresh", callback_data: "r" }]] },
      },
    ]);
  });

  it("keeps a photo caption within 1024: the title as caption, the rest as text messages", () => {
    const messages = renderTelegram({
      title: "T".repeat(2000),
      text: lines(30),
      image: { kind: "url", url: "https://img.test/a.png", alt: "a" },
      buttons: [{ label: "Next", id: "n" }],
    });
    const [photo, ...rest] = messages;
    expect(photo?.kind).toBe("photo");
    if (photo?.kind !== "photo") return;
    expect(photo.photo).toEqual({ url: "https://img.test/a.png" });
    expect(visibleLength(photo.caption ?? "")).toBe(TELEGRAM_CAPTION_MAX);
    expect(accepted(photo.caption ?? "").endsWith(TRUNCATION_MARK)).toBe(true);
    expect(photo.replyMarkup).toBeUndefined();
    expect(rest.map((m) => m.kind)).toEqual(["text"]);
    expect(accepted(texts(rest)[0]!)).toBe(lines(30));
    expect(rest[0]?.replyMarkup?.inline_keyboard[0]?.map(buttonTarget)[0]).toBe("n");
  });

  it("drops an image url that is not http(s) and sends files as documents", () => {
    const csv = new TextEncoder().encode("a,b\n1,2\n");
    const messages = renderTelegram({
      text: "Export",
      image: { kind: "url", url: "file:///etc/passwd", alt: "x" },
      files: [{ name: "holders.csv", contentType: "text/csv", data: csv }],
    });
    expect(messages).toEqual([
      { kind: "text", text: "Export" },
      { kind: "document", document: { data: csv, name: "holders.csv" } },
    ]);
  });

  it("sends a PNG Telegram would refuse as a photo (too narrow) as a document", () => {
    const png = Buffer.from(PNG_1X1);
    png.writeUInt32BE(5000, 16); // width 5000, height 1: ratio over 20
    const messages = renderTelegram({
      title: "Wide",
      image: { kind: "png", data: png, name: "w.png", alt: "w" },
    });
    expect(messages.map((m) => m.kind)).toEqual(["text", "document"]);
  });
});
