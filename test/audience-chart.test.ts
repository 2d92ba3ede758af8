/**
 * /audience as a new member reads it (issue "What a community sees", item 7): each category's
 * 30-day change says what it counts and over what time, the bars' colours are named in a
 * legend, and a collection asked for by an explorer link is titled with its name when the bot can
 * know it, not with its raw address.
 */
import { afterEach, describe, expect, it } from "vitest";
import { audienceConfig } from "../src/render/chart-drawing.ts";
import { type RuntimeSetup, startRuntime } from "./helpers.ts";

const ROWS = [
  { label: "Collector", share: 60, change: "+1,000" },
  { label: "Whale", share: 30, change: "-3" },
  { label: "Other", share: 10, change: "0" },
];

describe("the audience chart", () => {
  const config = audienceConfig("Audience of Apes", ROWS);
  const labels = (config.data.labels ?? []).map(String);

  it("says each change in words: how many wallets, over 30 days", () => {
    expect(labels).toHaveLength(ROWS.length);
    expect(labels[0]).toMatch(/^Collector\b.*\+1,000 wallets\b.*\b30 days\b/);
    expect(labels[1]).toMatch(/^Whale\b.*[-−]3 wallets\b.*\b30 days\b/);
    expect(labels[2]).toMatch(/^Other\b.*\bno change\b.*\b30 days\b/i);
  });

  it("names what each bar colour means in a legend", () => {
    expect(config.options?.plugins?.legend?.display).toBe(true);
    // Each category has its bar in exactly one dataset (one colour), the legend names each.
    const datasets = config.data.datasets;
    const meaningOf = ROWS.map((row, i) => {
      const holding = datasets.filter((set) => typeof set.data[i] === "number");
      expect(holding, row.label).toHaveLength(1);
      expect(holding[0]?.data[i]).toBe(row.share);
      return {
        legend: String(holding[0]?.label ?? ""),
        colour: String(holding[0]?.backgroundColor ?? ""),
      };
    });
    expect(meaningOf[0]?.legend).toMatch(/more wallets/i);
    expect(meaningOf[1]?.legend).toMatch(/fewer wallets/i);
    expect(meaningOf[2]?.legend).toMatch(/no change/i);
    expect(new Set(meaningOf.map((meaning) => meaning.colour)).size).toBe(3);
    // No legend entry for a colour no bar has.
    expect(audienceConfig("A", ROWS.slice(0, 2)).data.datasets).toHaveLength(2);
  });
});

describe("/audience names its collection", () => {
  let t: RuntimeSetup;
  afterEach(async () => {
    for (const refresher of t?.runtime.refreshers.values() ?? []) await refresher.stop();
    await t?.close();
  });

  it("asked by a basescan link, it is titled with the collection's name the bot can know", async () => {
    t = await startRuntime({ CHAINS: "ethereum,base" });
    // As `npm start` plans them: the first chain's index filled a while after start, the other
    // chains' at their first use (the embedded simulator builds a chain's data then).
    t.runtime.refresher.start(60_000);
    t.runtime.refreshers.get("base")?.startWhenUsed();
    const { collection } = t.sim.fixturesOf("base");
    const reply = await t.say(`/audience https://basescan.org/address/${collection}`);
    const base = t.chains.find((chain) => chain.id === "base");
    const name = base && t.runtime.collectionsOf(base).name(collection);
    expect(name).toBeTruthy();
    expect(reply.title).toBe(`Audience of ${name}`);
    expect(reply.title?.toLowerCase()).not.toContain(collection.slice(2, 10).toLowerCase());
    expect(reply.image?.kind === "png" && reply.image.alt).toBe(reply.title);
  });

  it("before the index's first refresh, a collection given by address is still named", async () => {
    t = await startRuntime();
    t.runtime.refresher.start(60_000);
    const { collection } = t.sim.fixtures;
    const reply = await t.say(`/audience ${collection}`);
    const name = t.runtime.collections.name(collection);
    expect(name).toBeTruthy();
    expect(reply.title).toBe(`Audience of ${name}`);
    // Its Sample wallets button opens a list titled by the name too.
    const id = reply.buttons?.find((b) => b.label === "Sample wallets")?.id;
    expect(id).toBeDefined();
    expect((await t.press(id as string)).title).toBe(`Sample wallets of ${name}`);
  });

  it("a collection without a name is titled with its address", async () => {
    t = await startRuntime();
    t.runtime.refresher.start(60_000);
    const collection = t.sim.fixtures.emptyNameCollection;
    const reply = await t.say(`/audience ${collection}`);
    expect(reply.title?.toLowerCase()).toBe(`audience of ${collection.toLowerCase()}`);
  });
});
