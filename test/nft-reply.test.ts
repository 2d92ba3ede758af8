import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { metadataTraits, nftReply } from "../commands/nft.ts";
import type { NftDetails } from "../src/api/schemas.ts";
import { type Chain, parseChains } from "../src/chains.ts";
import type { RenderableReply, Reply } from "../src/core/reply.ts";
import { renderConsole } from "../src/render/console.ts";
import { DISCORD_LIMITS, renderDiscord } from "../src/render/discord.ts";
import { renderTelegram, TELEGRAM_TEXT_MAX, visibleText } from "../src/render/telegram.ts";
import { type RuntimeSetup, startRuntime } from "./helpers.ts";

/** /nft reads right: its title once, no placeholder text, the traits as bounded fields. */

const now = new Date("2026-11-22T12:00:00Z");
const ETHEREUM = parseChains(undefined, undefined)[0] as Chain;
const CONTRACT = "0xbc4ca0eda7647a8ab7c2061c2e118a18a936f13d";
/** What indexers write where a value is missing: none of it may reach a person. */
const PLACEHOLDER = /\b(None|null|undefined|NaN)\b|\[object Object\]/;

function details(
  metadata: { name: string; description: string },
  collection = "Bored Ape Yacht Club",
): NftDetails {
  return {
    nft: {
      contractAddress: CONTRACT,
      tokenId: "1",
      type: "TYPE_ERC721",
      metadata: { ...metadata, image: { uri: "https://img.example/1.png" } },
      collection: { name: collection },
    },
    metrics: { quantity: "1", ownerCount: "1" },
    lastSale: null,
  };
}

const rendered = (reply: Reply): RenderableReply => ({
  ...reply,
  buttons: reply.buttons?.map((button, i) => ({ label: button.label, id: `id${i}` })),
});

/** Every text a person sees, on each platform. */
function everyRendering(reply: Reply): { console: string; discord: string; telegram: string } {
  const renderable = rendered(reply);
  const discord = renderDiscord(renderable);
  const embed = discord.embeds?.[0];
  return {
    console: renderConsole(renderable).text,
    discord: [
      embed?.title ?? "",
      embed?.description ?? "",
      ...(embed?.fields ?? []).flatMap((f) => [f.name, f.value]),
      embed?.footer?.text ?? "",
    ].join("\n"),
    telegram: renderTelegram(renderable)
      .map((message) => visibleText(("text" in message ? message.text : message.caption) ?? ""))
      .join("\n"),
  };
}

describe("the title", () => {
  it("names the token once when its name already carries the id", () => {
    const reply = nftReply(
      details({ name: "Bored Ape Yacht Club #1", description: "" }),
      [],
      now,
      ETHEREUM,
    );
    expect(reply.title).toBe("Bored Ape Yacht Club #1");
    for (const text of Object.values(everyRendering(reply))) expect(text).not.toContain("#1 #1");
  });

  it("adds the id to a name without it, and to the collection where the name is missing", () => {
    const named = nftReply(details({ name: "Sleepy ape", description: "" }), [], now, ETHEREUM);
    expect(named.title).toBe("Sleepy ape #1");
    for (const name of [
      "",
      "None",
      "null",
      "undefined",
      "NaN",
      "[object Object]",
      " \u0000\u0000 ",
      "1",
      "#1",
    ]) {
      const reply = nftReply(details({ name, description: "" }), [], now, ETHEREUM);
      expect(reply.title, JSON.stringify(name)).toBe("Bored Ape Yacht Club #1");
    }
  });

  it("a NUL-padded name ending with its id is named once", () => {
    const reply = nftReply(
      details({ name: "Ape #1\u0000\u0000\u0000", description: "" }),
      [],
      now,
      ETHEREUM,
    );
    expect(everyRendering(reply).console.split("\n")[0]).toMatch(/^Ape #1 {2}</);
  });
});

describe("placeholders from indexers", () => {
  it("a description or collection name of None, null, undefined, NaN or [object Object] is left out", () => {
    for (const word of ["None", "null", "undefined", "NaN", "[object Object]", "none", "NULL"]) {
      const reply = nftReply(
        details({ name: word, description: word }, word),
        [],
        now,
        ETHEREUM,
        undefined,
        metadataTraits(
          JSON.stringify({
            attributes: [
              { trait_type: word, value: word },
              { trait_type: "Hat", value: word },
            ],
          }),
        ),
      );
      expect(reply.fields?.map((f) => f.name)).not.toContain("Description");
      for (const [platform, text] of Object.entries(everyRendering(reply)))
        expect(text, `${platform}: ${word}`).not.toMatch(PLACEHOLDER);
    }
  });
});

describe("traits", () => {
  it("reads OpenSea attributes, the traits variant and the object-map form", () => {
    expect(
      metadataTraits(
        JSON.stringify({
          attributes: [
            { trait_type: "Background", value: "Blue" },
            { trait_type: "Level", value: 5, display_type: "number", max_value: 10 },
            { trait_type: "Speed", value: 12, display_type: "boost_percentage" },
            { trait_type: "Birthday", value: 1_700_000_000, display_type: "date" },
            { value: "Rare" },
            { trait_type: "Hat", value: "None" },
            { trait_type: "Nested", value: { a: 1 } },
            "loose",
          ],
        }),
      ),
    ).toEqual([
      { type: "Background", value: "Blue" },
      { type: "Level", value: "5 of 10" },
      { type: "Speed", value: "+12%" },
      { type: "Birthday", value: "2023-11-14" },
      { type: "Trait", value: "Rare" },
      { type: "Trait", value: "loose" },
    ]);
    expect(
      metadataTraits(JSON.stringify({ traits: [{ trait_type: "Eyes", value: "Laser" }] })),
    ).toEqual([{ type: "Eyes", value: "Laser" }]);
    expect(
      metadataTraits(JSON.stringify({ attributes: { Fur: "Gold", Count: 3, Empty: null } })),
    ).toEqual([
      { type: "Fur", value: "Gold" },
      { type: "Count", value: "3" },
    ]);
    expect(metadataTraits("not json")).toEqual([]);
    expect(metadataTraits(JSON.stringify({ attributes: "nope" }))).toEqual([]);
    expect(metadataTraits("[1,2]")).toEqual([]);
  });

  it("shows each trait as a field, bounded, the rest summarised, on every platform", () => {
    const many = Array.from({ length: 40 }, (_, i) => ({
      trait_type: `Trait ${i} ${"t".repeat(300)}`,
      value: `@everyone **v${i}** <b>${"x".repeat(3000)}</b>`,
    }));
    const reply = nftReply(
      details({ name: "n".repeat(5000), description: "d".repeat(20_000) }),
      [],
      now,
      ETHEREUM,
      undefined,
      metadataTraits(JSON.stringify({ attributes: many })),
    );
    const traitFields = reply.fields?.filter((f) => f.inline && f.name.startsWith("Trait ")) ?? [];
    expect(traitFields.length).toBeGreaterThan(0);
    expect(traitFields.length).toBeLessThan(40);
    const more = reply.fields?.find((f) => f.name === "More traits");
    expect(more?.value).toBe(`and ${40 - traitFields.length} more (Raw metadata shows them all)`);
    expect(reply.fields?.length).toBeLessThanOrEqual(DISCORD_LIMITS.fields);
    const discord = renderDiscord(rendered(reply));
    const embed = discord.embeds?.[0];
    expect(embed?.fields?.length).toBeLessThanOrEqual(DISCORD_LIMITS.fields);
    // Every trait kept and the summary reach Discord: nothing of them is dropped by the renderer.
    expect(embed?.fields?.some((f) => f.name === "More traits")).toBe(true);
    for (const f of embed?.fields ?? [])
      expect(f.value.length).toBeLessThanOrEqual(DISCORD_LIMITS.fieldValue);
    const total =
      (embed?.title?.length ?? 0) +
      (embed?.description?.length ?? 0) +
      (embed?.footer?.text.length ?? 0) +
      (embed?.fields ?? []).reduce((sum, f) => sum + f.name.length + f.value.length, 0);
    expect(total).toBeLessThanOrEqual(DISCORD_LIMITS.embedTotal);
    expect(embed?.title).toMatch(/#1$/);
    const telegram = renderTelegram(rendered(reply));
    for (const message of telegram) {
      const text = "text" in message ? message.text : message.caption;
      expect(visibleText(text ?? "").length).toBeLessThanOrEqual(TELEGRAM_TEXT_MAX);
    }
    expect(everyRendering(reply).telegram).toContain("and ");
    expect(everyRendering(reply).console).toContain("More traits: and ");
  });
});

describe("against the simulator", () => {
  let t: RuntimeSetup;
  beforeAll(async () => {
    t = await startRuntime();
  });
  afterAll(async () => {
    await t.close();
  });

  it("a token named with its id, a None description and attributes reads right", async () => {
    const { contract, tokenId } = t.sim.fixtures.tokenWithNoneDescription;
    const { nft } = await t.api.foundational.nftDetails(contract, tokenId);
    const { metadata } = await t.api.foundational.rawMetadata(contract, tokenId);
    // What real indexers send: a name that already ends with the id, "None" for no description.
    expect(nft.metadata?.name).toMatch(new RegExp(`#${tokenId}$`));
    expect(JSON.parse(metadata.raw)).toMatchObject({ description: "None" });
    const traits = JSON.parse(metadata.raw).attributes as { trait_type: string; value: string }[];
    expect(traits.length).toBeGreaterThan(0);

    const reply = await t.say(`/nft ${contract} ${tokenId}`);
    expect(reply.title).toBe(nft.metadata?.name);
    expect(reply.fields?.map((f) => f.name)).not.toContain("Description");
    for (const trait of traits.filter((x) => typeof x.value === "string" && x.value !== "None"))
      expect(reply.fields).toContainEqual({
        name: trait.trait_type,
        value: trait.value,
        inline: true,
      });
    const console = renderConsole(reply).text;
    expect(console).not.toMatch(PLACEHOLDER);
    expect(console).not.toMatch(/#(\d+) #\1/);
  });

  it("no token of the main collection shows a placeholder or its id twice", async () => {
    const c = t.sim.fixtures.collection;
    for (let id = 1; id <= 12; id++) {
      const reply = await t.say(`/nft ${c} ${id}`);
      if (reply.tone === "warning") continue;
      const console = renderConsole(reply).text;
      expect(console, `token ${id}`).not.toMatch(PLACEHOLDER);
      expect(reply.title, `token ${id}`).not.toMatch(/#(\d+) #\1/);
    }
  });
});
