import type {
  APIEmbed,
  InteractionEditReplyOptions,
  InteractionReplyOptions,
  InteractionUpdateOptions,
  MessageCreateOptions,
} from "discord.js";
import { escapeMarkdown } from "discord.js";
import { describe, expect, it, vi } from "vitest";
import type { RenderableReply, RenderedButton } from "../src/core/reply.ts";
import {
  DISCORD_LIMITS,
  type DiscordMessage,
  renderDiscord,
  withoutFlags,
} from "../src/render/discord.ts";
import { escapeDiscord } from "../src/render/discord-escape.ts";
import { stripControl, TRUNCATION_MARK } from "../src/render/text.ts";
import { embedSize, invalidFormBody, validateMessage } from "./fakes/discord/validate.ts";

/** Every text the renderer hands to the escapers, by escaper (see the long-text test). */
const escaped = vi.hoisted(() => ({ markdown: [] as string[], mentions: [] as string[] }));
vi.mock("../src/render/discord-escape.ts", async (importOriginal) => {
  const real = await importOriginal<typeof import("../src/render/discord-escape.ts")>();
  return {
    ...real,
    escapeDiscord: (text: string, maskedLink?: boolean) => {
      escaped.markdown.push(text);
      return real.escapeDiscord(text, maskedLink);
    },
    neutraliseMentions: (text: string) => {
      escaped.mentions.push(text);
      return real.neutraliseMentions(text);
    },
  };
});

const HOSTILE = "@everyone <b>x</b> **bold** [link](https://evil.example) <@123>";

/** Every Discord limit, checked by the same rules the fake Discord answers 50035 with. */
function expectWithinLimits(message: DiscordMessage): void {
  const body = { embeds: message.embeds, components: message.components };
  const errors = validateMessage(body, message.files.length);
  expect(errors, JSON.stringify(invalidFormBody(errors))).toEqual([]);
  expect(message.allowedMentions).toEqual({ parse: [] });
}

function onlyEmbed(message: DiscordMessage): APIEmbed {
  expect(message.embeds).toHaveLength(1);
  const [embed] = message.embeds;
  if (!embed) throw new Error("no embed");
  return embed;
}

const buttons = (n: number): RenderedButton[] =>
  Array.from({ length: n }, (_, i) => ({ label: `Button ${i + 1}`, id: `b${i + 1}` }));

describe("renderDiscord", () => {
  it("renders title, link, text, fields, footer and tone as one embed", () => {
    const message = renderDiscord({
      title: "Bored Apes",
      url: "https://opensea.io/collection/boredapes",
      text: "Top holders",
      fields: [
        { name: "Floor", value: "12.5 ETH", inline: true },
        { name: "Holders", value: "5,432" },
      ],
      footer: "Data: audience service",
      tone: "success",
    });
    expectWithinLimits(message);
    expect(onlyEmbed(message)).toEqual({
      title: "Bored Apes",
      url: "https://opensea.io/collection/boredapes",
      description: "Top holders",
      fields: [
        { name: "Floor", value: "12\\.5 ETH", inline: true },
        { name: "Holders", value: "5,432" },
      ],
      footer: { text: "Data: audience service" },
      color: 0x57f287,
    });
    expect(message.components).toEqual([]);
    expect(message.files).toEqual([]);
    expect("flags" in message).toBe(false);
  });

  it("cuts an over-long title, description and footer with a visible mark", () => {
    const message = renderDiscord({
      title: "T".repeat(300),
      text: "D".repeat(5000),
      footer: "F".repeat(3000),
    });
    expectWithinLimits(message);
    const embed = onlyEmbed(message);
    expect(embed.title).toHaveLength(256);
    expect(embed.title?.endsWith(TRUNCATION_MARK)).toBe(true);
    expect(embed.description?.length).toBeLessThanOrEqual(4096);
    expect(embed.description?.endsWith(TRUNCATION_MARK)).toBe(true);
    expect(embed.footer?.text).toHaveLength(2048);
    expect(embed.footer?.text.endsWith(TRUNCATION_MARK)).toBe(true);
    expect(embedSize(embed as Record<string, unknown>)).toBeLessThanOrEqual(6000);
  });

  it("keeps 24 of 30 fields and says how many were omitted; cuts long names and values", () => {
    const fields = Array.from({ length: 30 }, (_, i) => ({
      name: `N${i}`.padEnd(300, "n"),
      value: `V${i}`.padEnd(2000, "v"),
    }));
    const message = renderDiscord({ fields });
    expectWithinLimits(message);
    const embed = onlyEmbed(message);
    const rendered = embed.fields ?? [];
    expect(rendered.length).toBeLessThanOrEqual(25);
    const last = rendered.at(-1);
    expect(last?.name).toBe(TRUNCATION_MARK);
    expect(last?.value).toBe(`${30 - (rendered.length - 1)} more fields omitted`);
    for (const field of rendered.slice(0, -1)) {
      expect(field.name.length).toBeLessThanOrEqual(256);
      expect(field.name.endsWith(TRUNCATION_MARK)).toBe(true);
      expect(field.value.length).toBeLessThanOrEqual(1024);
      expect(field.value.endsWith(TRUNCATION_MARK)).toBe(true);
    }
    expect(embedSize(embed as Record<string, unknown>)).toBeLessThanOrEqual(6000);
  });

  it("shows 24 of 26 fields and a 25th saying 2 were omitted", () => {
    const fields = Array.from({ length: 26 }, (_, i) => ({ name: `n${i}`, value: `v${i}` }));
    const rendered = onlyEmbed(renderDiscord({ fields })).fields ?? [];
    expect(rendered).toHaveLength(25);
    expect(rendered[23]).toEqual({ name: "n23", value: "v23" });
    expect(rendered[24]).toEqual({ name: TRUNCATION_MARK, value: "2 more fields omitted" });
  });

  it("keeps the 6000 total: fields give way before the description's first 2000 characters", () => {
    const fields = Array.from({ length: 5 }, (_, i) => ({
      name: `Field ${i}`,
      value: "v".repeat(1000),
    }));
    const shrunk = renderDiscord({ title: "T", text: "d".repeat(4000), fields, footer: "f" });
    expectWithinLimits(shrunk);
    const embed = onlyEmbed(shrunk);
    expect(embed.description?.endsWith(TRUNCATION_MARK)).toBe(true);
    expect(embed.description?.length).toBeGreaterThanOrEqual(2000);
    expect(embed.fields?.length).toBeLessThan(5);
    expect(embed.fields?.at(-1)?.value).toMatch(/^\d+ more fields? omitted$/);
    expect(embedSize(embed as Record<string, unknown>)).toBeLessThanOrEqual(6000);

    const short = onlyEmbed(
      renderDiscord({ title: "T", text: "d".repeat(500), fields, footer: "f" }),
    );
    expect(short.description).toBe("d".repeat(500));
    expect(embedSize(short as Record<string, unknown>)).toBeLessThanOrEqual(6000);

    const many = Array.from({ length: 25 }, (_, i) => ({
      name: `Field ${i}`,
      value: "v".repeat(1000),
    }));
    const dropped = onlyEmbed(renderDiscord({ text: "d".repeat(4000), fields: many }));
    expect(embedSize(dropped as Record<string, unknown>)).toBeLessThanOrEqual(6000);
    expect(dropped.description?.length).toBeGreaterThanOrEqual(2000);
    const last = dropped.fields?.at(-1);
    expect(last?.name).toBe(TRUNCATION_MARK);
    expect(last?.value).toMatch(/^\d+ more fields omitted$/);
    expectWithinLimits(renderDiscord({ text: "d".repeat(4000), fields: many }));
  });

  it("puts the table in a code block that cell text cannot close, and cuts rows visibly", () => {
    const table = {
      columns: ["Name", "Holders"],
      rows: [
        ["```evil", "1"],
        ...Array.from({ length: 500 }, (_, i) => [`Collection ${i}`, `${i}`]),
      ],
      align: ["left", "right"] as ("left" | "right")[],
    };
    const message = renderDiscord({ text: "Top collections", table });
    expectWithinLimits(message);
    const description = onlyEmbed(message).description ?? "";
    expect(description.startsWith("Top collections\n\n```\nName")).toBe(true);
    expect(description.endsWith(`\n${TRUNCATION_MARK}\n\`\`\``)).toBe(true);
    // Exactly two fences: the opening and the closing one; the cell's backticks are broken up.
    expect(description.match(/```/g)).toHaveLength(2);
    expect(description).toContain("`\u200b`\u200b`\u200bevil");
  });

  it("shares the description between text, table and links when all are long", () => {
    const message = renderDiscord({
      text: "t".repeat(3000),
      table: { columns: ["a"], rows: Array.from({ length: 400 }, (_, i) => [`row ${i}`]) },
      links: Array.from({ length: 100 }, (_, i) => ({
        label: `L${i}`,
        url: `https://x.example/${i}`,
      })),
    });
    expectWithinLimits(message);
    const description = onlyEmbed(message).description ?? "";
    const [text, table, links] = description.split("\n\n");
    expect(text?.endsWith(TRUNCATION_MARK)).toBe(true);
    expect(table?.startsWith("```\na") && table.endsWith("```")).toBe(true);
    expect(links?.startsWith("[L0](https://x.example/0)")).toBe(true);
    expect(links?.endsWith(`\n${TRUNCATION_MARK}`)).toBe(true);
  });

  it("escapes hostile text everywhere so it cannot format, link or ping", () => {
    const message = renderDiscord({
      title: HOSTILE,
      text: HOSTILE,
      fields: [{ name: HOSTILE, value: HOSTILE }],
      links: [{ label: HOSTILE, url: "https://etherscan.io/address/0xabc" }],
      footer: HOSTILE,
      buttons: [{ label: HOSTILE, id: "b1" }],
    });
    expectWithinLimits(message);
    const embed = onlyEmbed(message);
    const escaped =
      "@\u200beveryone <b>x<\u200b/b> \\*\\*bold\\*\\* \\[link](https:\u200b//evil.example) <\u200b@123>";
    expect(embed.title).toBe(escaped);
    expect(embed.fields?.[0]).toEqual({ name: escaped, value: escaped });
    expect(embed.description?.split("\n\n")[0]).toBe(escaped);
    expect(embed.description?.split("\n\n")[1]).toBe(
      "[@\u200beveryone <b>x<\u200b/b> \\*\\*bold\\*\\* \\[link\\](https:\u200b//evil.example) <\u200b@123>]" +
        "(https://etherscan.io/address/0xabc)",
    );
    // Footers and button labels show no markdown, so only mentions are broken there.
    const plain =
      "@\u200beveryone <b>x<\u200b/b> **bold** [link](https://evil.example) <\u200b@123>";
    expect(embed.footer?.text).toBe(plain);
    expect(message.components[0]?.components[0]?.label).toBe(plain);
    for (const text of [
      embed.title,
      embed.description,
      embed.footer?.text,
      embed.fields?.[0]?.value,
    ]) {
      expect(text).not.toMatch(/@everyone|<@\d/);
    }
    for (const text of [embed.title, embed.description, embed.fields?.[0]?.value]) {
      expect(text).not.toMatch(/\*\*bold|]\(https:\/\/evil/);
    }
  });

  it("neutralises every mention form, quotes, headings, lists and control characters", () => {
    const escaped = escapeDiscord(
      "<#1> <@&2> <@!3> </cmd:4> <t:5:R> @here\n> quote\n# heading\n-# subtext\n- item\n1. one\u0007\u202e",
    );
    expect(escaped).toBe(
      "<\u200b#1> <\u200b@&2> <\u200b@!3> <\u200b/cmd:4> <\u200bt:5:R> @\u200bhere\n" +
        "\\> quote\n\\# heading\n\\-# subtext\n\\- item\n1\\. one",
    );
  });

  it("leaves no formatting character bare in any mix of markdown, links and mentions", () => {
    const alphabet = ["*", "_", "`", "~", "|", "a", " ", "\n", "#", ">", "-", "1.", "[", "](", ")"];
    alphabet.push("https://", "<", "@", ":", "\\", "é", "<a:x:1>", "_:1>", "@everyone", "<@1>");
    let seed = 7;
    const random = () => {
      seed = (seed * 1_103_515_245 + 12_345) % 2 ** 31;
      return seed / 2 ** 31;
    };
    for (let n = 0; n < 500; n++) {
      let input = "";
      while (input.length < random() * 400)
        input += alphabet[Math.floor(random() * alphabet.length)];
      // Escape pairs replaced by a placeholder: what is left must not format, link or ping.
      const bare = escapeDiscord(input).replace(/\\[\s\S]/g, "E");
      expect(bare, JSON.stringify(input)).not.toMatch(/[*_`~|]|https?:\/\/|@everyone|<@|<a:/);
      // Block syntax needs a space after the marker: "# h", "> q", "-# s", "- i", "1. o".
      expect(bare, JSON.stringify(input)).not.toMatch(/^\s*(?:#{1,3} |>|-# |[-*] |\d+\. )/m);
    }
  });

  it("escapes headings, lists, backslashes and masked links as discord.js' escapeMarkdown does", () => {
    // The escaper that discord.js' escapeMarkdown used to be part of, as the oracle.
    const reference = (text: string, maskedLink: boolean) =>
      stripControl(text)
        .replace(/@(?=everyone|here)/gi, "@\u200b")
        .replace(/<(?=[@#/:]|a:|t:|id:)/g, "<\u200b")
        .replace(/:\/\//g, ":\u200b//")
        .split("\n")
        .map((line) => {
          let out = "";
          for (let i = 0; i < line.length; i += 256) {
            out += escapeMarkdown(line.slice(i, i + 256), {
              codeBlock: false,
              inlineCode: false,
              bold: false,
              italic: false,
              underline: false,
              strikethrough: false,
              spoiler: false,
              heading: true,
              bulletedList: true,
              numberedList: true,
              maskedLink,
            });
          }
          return out;
        })
        .join("\n")
        .replace(/\\[\s\S]|[*_`~|]/g, (match) => (match.length === 2 ? match : `\\${match}`))
        .replace(/^(\s*)>/gm, "$1\\>")
        .replace(/^(\s*)-#/gm, "$1\\-#");
    const alphabet = ["#", "## ", "### ", "#### ", " ", "  ", "   ", "-", "* ", "- ", "1", "23."];
    alphabet.push("\n", "\\", "[", "]", "(", ")", "](", "a", "*", "_", "> ", "-# ", "https://");
    let seed = 11;
    const random = () => {
      seed = (seed * 1_103_515_245 + 12_345) % 2 ** 31;
      return seed / 2 ** 31;
    };
    for (let n = 0; n < 1000; n++) {
      let input = "";
      while (input.length < random() * 600)
        input += alphabet[Math.floor(random() * alphabet.length)];
      for (const maskedLink of [true, false]) {
        expect(escapeDiscord(input, maskedLink), JSON.stringify(input)).toBe(
          reference(input, maskedLink),
        );
      }
    }
  });

  it("links only http(s) URLs, with parentheses encoded", () => {
    const message = renderDiscord({
      links: [
        { label: "Explorer", url: "https://etherscan.io/tx/0x1(2)" },
        { label: "Script", url: "javascript:alert(1)" },
        { label: "Not a URL", url: "etherscan" },
      ],
    });
    expect(onlyEmbed(message).description).toBe("[Explorer](https://etherscan.io/tx/0x1%282%29)");
  });

  it("lays buttons out five to a row, at most five rows, with mapped styles and cut labels", () => {
    const many = buttons(27);
    many[0] = { label: "L".repeat(100), id: "first", style: "primary" };
    many[1] = { label: "Ok", id: "ok", style: "success" };
    many[2] = { label: "Stop", id: "stop", style: "danger" };
    const message = renderDiscord({ text: "x", buttons: many });
    expectWithinLimits(message);
    expect(message.components).toHaveLength(5);
    expect(message.components.map((row) => row.components.length)).toEqual([5, 5, 5, 5, 5]);
    const flat = message.components.flatMap((row) => row.components);
    expect(flat.map((b) => b.custom_id)).toEqual([
      "first",
      "ok",
      "stop",
      ...many.slice(3, 25).map((b) => b.id),
    ]);
    expect(flat.map((b) => b.style).slice(0, 4)).toEqual([1, 3, 4, 2]);
    expect(flat[0]?.label).toHaveLength(80);
    expect(flat[0]?.label?.endsWith(TRUNCATION_MARK)).toBe(true);
    expect(message.components[0]?.type).toBe(1);
    expect(flat[0]?.type).toBe(2);
  });

  it("refuses button ids Discord would refuse", () => {
    expect(() => renderDiscord({ buttons: [{ label: "x", id: "" }] })).toThrow(/1-100/);
    expect(() => renderDiscord({ buttons: [{ label: "x", id: "i".repeat(101) }] })).toThrow(
      /1-100/,
    );
    expect(() =>
      renderDiscord({
        buttons: [
          { label: "a", id: "same" },
          { label: "b", id: "same" },
        ],
      }),
    ).toThrow(/duplicate/);
  });

  it("attaches a PNG and shows it as the embed image; CSV files ride along", () => {
    const png = new Uint8Array([0x89, 0x50, 0x4e, 0x47]);
    const message = renderDiscord({
      title: "Chart",
      image: { kind: "png", data: png, name: "holders chart", alt: "Holders over time" },
      files: [
        { name: "holders.csv", contentType: "text/csv", data: new Uint8Array([97, 44, 98]) },
        { name: "holders.csv", contentType: "text/csv", data: new Uint8Array([99]) },
      ],
    });
    expectWithinLimits(message);
    expect(onlyEmbed(message).image).toEqual({ url: "attachment://holders_chart.png" });
    expect(message.files.map((f) => f.name)).toEqual([
      "holders_chart.png",
      "holders.csv",
      "holders-2.csv",
    ]);
    expect(message.files[0]?.description).toBe("Holders over time");
    expect([...(message.files[0]?.attachment ?? [])]).toEqual([...png]);
  });

  it("uses an image URL only when it is http(s)", () => {
    const ok = renderDiscord({ image: { kind: "url", url: "https://img.example/a.png", alt: "" } });
    expect(onlyEmbed(ok).image).toEqual({ url: "https://img.example/a.png" });
    const bad = renderDiscord({
      title: "t",
      image: { kind: "url", url: "file:///etc/passwd", alt: "" },
    });
    expect(onlyEmbed(bad).image).toBeUndefined();
  });

  it("makes a private reply ephemeral, and withoutFlags strips that for edits", () => {
    const message = renderDiscord({ text: "only you", private: true });
    expect(message.flags).toBe(64);
    expect("flags" in withoutFlags(message)).toBe(false);
    expect("flags" in renderDiscord({ text: "everyone" })).toBe(false);
  });

  it("makes a confidential reply (the spam reports) ephemeral: Discord hides it in place", () => {
    const message = renderDiscord({ text: "names", confidential: { what: "the spam reports" } });
    expect(message.flags).toBe(64);
  });

  it("escapes very long untrusted text only up to each limit (it is cut before escaping)", () => {
    escaped.markdown.length = 0;
    escaped.mentions.length = 0;
    const message = renderDiscord({
      title: "_".repeat(100_000),
      text: "*".repeat(200_000),
      fields: Array.from({ length: 25 }, () => ({
        name: "~".repeat(50_000),
        value: "|".repeat(50_000),
      })),
      footer: "f".repeat(100_000),
    });
    expectWithinLimits(message);
    // Once per text: the title, the text, 25 field names and 25 values; the footer once.
    expect(escaped.markdown).toHaveLength(52);
    expect(escaped.mentions).toHaveLength(1);
    // Each text one character past its limit at most (so the cut still shows), never all of it.
    const lengths = escaped.markdown.map((text) => text.length).sort((a, b) => b - a);
    expect(lengths[0]).toBe(DISCORD_LIMITS.description + 1);
    expect(lengths.slice(1, 26).every((n) => n === DISCORD_LIMITS.fieldValue + 1)).toBe(true);
    expect(lengths.slice(26).every((n) => n === DISCORD_LIMITS.fieldName + 1)).toBe(true);
    expect(escaped.mentions[0]).toHaveLength(DISCORD_LIMITS.footer + 1);
  });

  it("never sends an empty message", () => {
    const message = renderDiscord({} as RenderableReply);
    expectWithinLimits(message);
    expect(message.embeds).toEqual([{ color: 0x5865f2, description: "\u200b" }]);
    const onlyButtons = renderDiscord({ buttons: buttons(1) });
    expect(onlyButtons.embeds).toEqual([]);
    expect(onlyButtons.components).toHaveLength(1);
  });

  it("produces options discord.js accepts for reply, send and edits (type-level)", () => {
    const message = renderDiscord({ text: "x" });
    const reply: InteractionReplyOptions = message;
    const send: MessageCreateOptions = withoutFlags(message);
    const edit: InteractionEditReplyOptions = withoutFlags(message);
    const update: InteractionUpdateOptions = withoutFlags(message);
    expect([send.embeds, edit.embeds, update.embeds]).toEqual([
      reply.embeds,
      reply.embeds,
      reply.embeds,
    ]);
  });
});
