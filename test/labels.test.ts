/**
 * Issue 13, "Labels a person reads": enum values the spec does not list read as words in tables
 * and on charts, and a chart's title names the collection once the bot knows its name. The chart
 * functions are wrapped to record what each chart is drawn with (title and labels), and still draw.
 */
import { afterEach, describe, expect, it, vi } from "vitest";
import { alertReply } from "../src/alerts/message.ts";
import { behaviorLabel, contractTypeLabel, scoreLabel } from "../src/core/format.ts";
import { type RuntimeSetup, startRuntime } from "./helpers.ts";

const drawn = vi.hoisted(() => [] as { chart: string; title: string; labels: string[] }[]);

vi.mock("../src/render/charts.ts", async (importOriginal) => {
  const real = await importOriginal<typeof import("../src/render/charts.ts")>();
  return {
    ...real,
    audienceChart: (title: string, rows: { label: string; share: number; change: string }[]) => {
      drawn.push({ chart: "audience", title, labels: rows.map((row) => row.label) });
      return real.audienceChart(title, rows);
    },
    ownersHistoryChart: (title: string, points: { timestamp: string; count: string }[]) => {
      drawn.push({ chart: "owners", title, labels: [] });
      return real.ownersHistoryChart(title, points);
    },
    rankingChart: (title: string, axis: string, items: { label: string; value: number }[]) => {
      drawn.push({ chart: "ranking", title, labels: items.map((item) => item.label) });
      return real.rankingChart(title, axis, items);
    },
  };
});

const lastDrawn = (chart: string) => drawn.filter((entry) => entry.chart === chart).at(-1);

const json = (body: unknown) => ({ status: 200, body: JSON.stringify(body) });

describe("labels of enum values", () => {
  it("known values keep their labels; others read as their words, without the prefix", () => {
    expect(behaviorLabel("BEHAVIOR_PROGRAMMED_FLIPPER")).toBe("Programmed flipper");
    expect(behaviorLabel("BEHAVIOR_BADACTOR")).toBe("Bad actor");
    expect(behaviorLabel("BEHAVIOR_OTHER")).toBe("Other");
    expect(behaviorLabel("BEHAVIOR_SOME_NEW_THING")).toBe("Some new thing");
    expect(contractTypeLabel("TYPE_ERC721")).toBe("ERC-721");
    expect(contractTypeLabel("TYPE_CRYPTOPUNKS")).toBe("CryptoPunks");
    expect(contractTypeLabel("TYPE_ERC20")).toBe("ERC20");
    expect(contractTypeLabel("TYPE_SEMI_FUNGIBLE")).toBe("Semi fungible");
    expect(scoreLabel("SCORE_VERY_HIGH")).toBe("very high");
    expect(scoreLabel("SCORE_VERY_HIGH", "short")).toBe("VH");
    expect(scoreLabel("SCORE_EXTREME")).toBe("Extreme");
    expect(scoreLabel("SCORE_EXTREME", "short")).toBe("Extreme");
    // Whatever else the service sends is shown as it came (the renderers escape it).
    expect(behaviorLabel("whale?")).toBe("whale?");
  });

  it("an alert about a contract of an unknown type names the type", () => {
    const reply = alertReply(
      {
        address: "0x5aaeb6053f3e94c9b9a09f33669435e7ef1beaed",
        name: "Coins",
        types: ["TYPE_ERC20"],
        minter: undefined,
        txHash: undefined,
        mintedAt: undefined,
      },
      null,
      "https://etherscan.io",
      new Date("2026-11-22T12:00:00Z"),
    );
    expect(JSON.stringify(reply)).toContain("ERC20");
    expect(JSON.stringify(reply)).not.toContain("TYPE_ERC20");
  });
});

describe("labels in answers", () => {
  let t: RuntimeSetup;
  afterEach(async () => {
    await t?.close();
  });

  it("/audience: BEHAVIOR_OTHER and a new behavior read as words in the table and on the chart", async () => {
    t = await startRuntime();
    const row = (behavior: string, walletsCount: string, walletsPercentage: number) => ({
      behavior,
      walletsCount,
      walletsPercentage,
      walletsCountChange30d: "2",
    });
    t.sim.script([
      json({
        aggregatedBehaviors: [
          row("BEHAVIOR_OTHER", "50", 50),
          row("BEHAVIOR_SOME_NEW_THING", "30", 30),
          row("BEHAVIOR_PROGRAMMED_FLIPPER", "20", 20),
        ],
      }),
    ]);
    const reply = await t.say(`/audience ${t.sim.fixtures.collection}`);
    const text = t.text(reply);
    expect(text).toMatch(/^Other\s+50/m);
    expect(text).toMatch(/^Some new thing\s+30/m);
    expect(text).toMatch(/^Programmed flipper\s+20/m);
    expect(text).not.toContain("BEHAVIOR_");
    expect(reply.image?.kind).toBe("png");
    expect(lastDrawn("audience")?.labels).toEqual([
      "Other",
      "Some new thing",
      "Programmed flipper",
    ]);
  });

  it("/audience samples: unknown behaviors and scores read as words", async () => {
    t = await startRuntime();
    const unknown = "SCORE_EXTREME";
    t.sim.script([
      json({ aggregatedBehaviors: [] }),
      json({
        walletBehaviors: [
          {
            address: "0xd8da6bf26964af9d7eed9e03e53415d37aa96045",
            behavior: "BEHAVIOR_OTHER",
            experience: unknown,
            holding: "SCORE_HIGH",
            selling: unknown,
            taste: unknown,
            automation: unknown,
            spendIntent: unknown,
            influence: unknown,
          },
        ],
      }),
    ]);
    const breakdown = await t.say(`/audience ${t.sim.fixtures.collection}`);
    const samples = await t.press(breakdown.buttons?.[0]?.id ?? "");
    const text = t.text(samples);
    expect(text).toMatch(/Other\s+Extreme\s+H\s+Extreme/);
    expect(text).not.toContain("SCORE_");
    expect(text).not.toContain("BEHAVIOR_");
  });

  it("/behaviors and /contracts: unknown values read as words", async () => {
    t = await startRuntime();
    t.sim.script([
      json({
        aggregatedBehaviors: [
          { behavior: "BEHAVIOR_OTHER", walletsCount: "1", walletsPercentage: 100 },
        ],
      }),
      json({
        contracts: [
          {
            address: "0x5aaeb6053f3e94c9b9a09f33669435e7ef1beaed",
            name: "Coins",
            types: ["TYPE_ERC20", "TYPE_ERC721"],
          },
        ],
      }),
    ]);
    const behaviors = t.text(await t.say("/behaviors 0xd8da6bf26964af9d7eed9e03e53415d37aa96045"));
    expect(behaviors).toMatch(/^Other\s+1\s+100/m);
    const contracts = t.text(await t.say("/contracts all 1"));
    expect(contracts).toContain("ERC20, ERC-721");
    expect(contracts).not.toContain("TYPE_");
  });

  it("chart titles name the collection once the bot knows its name (/audience, /owners)", async () => {
    t = await startRuntime();
    const collection = t.sim.fixtures.collection;
    await t.say(`/audience ${collection}`);
    await t.say(`/owners ${collection} 30d`);
    // A top list teaches the bot the collection's name.
    t.sim.script([
      json({
        collections: [
          { contractAddress: collection, contractName: "Scripted Apes", salesVolume: "1.5" },
        ],
      }),
    ]);
    await t.say("/top volume 1d 1");
    const audience = await t.say(`/audience ${collection}`);
    expect(audience.title).toBe("Audience of Scripted Apes");
    expect(audience.image?.kind === "png" && audience.image.alt).toBe("Audience of Scripted Apes");
    expect(lastDrawn("audience")?.title).toBe("Audience of Scripted Apes");
    const owners = await t.say(`/owners ${collection} 30d`);
    expect(owners.image?.kind).toBe("png");
    expect(lastDrawn("owners")?.title).toMatch(/^Owners of Scripted Apes, last 30 days/);
  });

  it("/top: a collection without a name is told apart on the chart by its address", async () => {
    t = await startRuntime();
    t.sim.script([
      json({
        collections: [
          {
            contractAddress: "0x5aaeb6053f3e94c9b9a09f33669435e7ef1beaed",
            contractName: "",
            salesVolume: "2",
          },
          {
            contractAddress: "0xfb6916095ca1df60bb79ce92ce3ea74c37c5d359",
            contractName: " ",
            salesVolume: "1",
          },
        ],
      }),
    ]);
    await t.say("/top volume 1d 2");
    expect(lastDrawn("ranking")?.labels).toEqual(["0x5aAe…eAed", "0xfB69…d359"]);
  });
});
