import { afterEach, describe, expect, it } from "vitest";
import { shareOf } from "../commands/common.ts";
import { allCommands } from "../commands/index.ts";
import { percentChange, summarizeOwnerCounts } from "../commands/owners.ts";
import { flattenProfile } from "../commands/profile.ts";
import { segmentCsv } from "../commands/segment.ts";
import { formatNativeNumber } from "../commands/shared/stats.ts";
import { parseConfig } from "../src/config.ts";
import { definedActions } from "../src/core/button-actions.ts";
import { servedCommands } from "../src/core/chain-option.ts";
import { shortTokenId } from "../src/core/format.ts";
import { parseArgs, parseTextArgs } from "../src/core/text-args.ts";
import { type RuntimeSetup, startRuntime } from "./helpers.ts";

/** Command definitions and the pure builders behind the replies; /help. */

let t: RuntimeSetup;

describe("pure builders", () => {
  it("summarise owner counts on BigInt, beyond Number's exact range", () => {
    const points = [
      { timestamp: "2026-01-01T00:00:00Z", count: "9007199254740993" },
      { timestamp: "2026-01-02T00:00:00Z", count: "9007199254740991" },
      { timestamp: "2026-01-03T00:00:00Z", count: "9007199254740997" },
      { timestamp: "2026-01-04T00:00:00Z", count: "9007199254740995" },
    ];
    const summary = summarizeOwnerCounts(points);
    expect(summary?.change).toBe("2");
    expect(summary?.min.count).toBe("9007199254740991");
    expect(summary?.max.count).toBe("9007199254740997");
    expect(summarizeOwnerCounts([])).toBeUndefined();
    expect(percentChange("400", "436")).toBe("+9.0%");
    expect(percentChange("451", "415")).toBe("-8.0%");
    expect(percentChange("0", "5")).toBeUndefined();
    expect(shareOf("83", "392")).toBe("21.2%");
    expect(shareOf("1", "0")).toBe("n/a");
  });

  it("flatten any profile into at most 20 bounded fields", () => {
    const wide = Object.fromEntries(Array.from({ length: 50 }, (_, i) => [`k${i}`, i]));
    expect(flattenProfile(wide).fields).toHaveLength(20);
    expect(flattenProfile(wide).total).toBe(50);
    const odd = flattenProfile({
      data: {
        long: "x".repeat(5000),
        list: [{ a: 1 }, { a: 2 }, { a: 3 }, { a: 4 }],
        deep: { a: { b: { c: { d: { e: { f: 1 } } } } } },
        empty: {},
        amount: "12345.678900000000000001",
      },
    });
    const value = (name: string) => odd.fields.find((f) => f.name === name)?.value;
    expect([...(value("Long") ?? "")].length).toBeLessThanOrEqual(200);
    expect(value("List")).toBe("A: 1\nA: 2\nA: 3\nA: 4");
    expect(odd.fields.some((f) => f.name.startsWith("Deep › A › B"))).toBe(true);
    expect(value("Empty")).toBe("none");
    expect(value("Amount")).toBe("12,345.68");
    expect(flattenProfile({}).fields).toEqual([]);
  });

  it("write CSV with full addresses and exact amounts, and shorten huge ids", () => {
    const csv = segmentCsv([
      {
        walletAddress: "0xee921415072882a79213fc969454aad44f2bc2e6",
        totalSpend: "1.000000000000000001",
      },
    ]);
    expect(csv).toBe(
      "walletAddress,totalSpend\r\n0xee921415072882A79213Fc969454aad44F2BC2E6,1.000000000000000001\r\n",
    );
    expect(shortTokenId("1".repeat(78))).toBe("111111…111111");
    expect(shortTokenId("123")).toBe("123");
    expect(formatNativeNumber(0.000000123)).toBe("0.000000123 ETH");
    expect(formatNativeNumber(38.321773)).toBe("38.3218 ETH");
  });
});

describe("definitions", () => {
  it("what /help says of every command speaks of the data service, never of its spec, API, endpoints or schema", () => {
    for (const command of allCommands()) {
      const texts = [
        command.description,
        command.help ?? "",
        ...Object.values(command.options).map((option) => option.description),
      ];
      for (const text of texts)
        expect(text, `/${command.name}`).not.toMatch(
          /\b(spec|specs|specification|schema|endpoints?)\b|\bAPI\b/i,
        );
    }
  });

  it("every button action defined is a registered command's, under its own name, once", () => {
    // The commands are loaded, and with them every action their buttons (and alerts') name.
    const registered = allCommands().flatMap((command) =>
      Object.entries(command.actions ?? {}).map(([key, handler]) => {
        expect(`${handler.command}.${handler.name}`).toBe(`${command.name}.${key}`);
        return `${command.name}.${key}`;
      }),
    );
    const defined = definedActions().map(({ command, name }) => `${command}.${name}`);
    expect(defined.sort()).toEqual(registered.sort());
    expect(new Set(defined).size).toBe(defined.length);
    expect(defined).toContain("report.ask");
  });

  /** Commands whose one-line description says it all: they have no longer help. */
  const brief = new Set(["help", "reports", "subscriptions"]);

  // Every command of the registry: a new one is covered without editing a list.
  it.each(allCommands().map((command) => command.name))(
    "/%s has help (or is brief), and every example parses",
    (name) => {
      // As `npm start` serves them: on the simulator's chains, with the chain option.
      const command = servedCommands(allCommands(), parseConfig({}).chains).find(
        (c) => c.name === name,
      );
      if (brief.has(name)) expect(command?.help).toBeUndefined();
      else expect(command?.help).toBeTruthy();
      expect(command?.examples.length).toBeGreaterThan(0);
      for (const example of command?.examples ?? []) {
        expect(example.startsWith(`/${name}`)).toBe(true);
        const text = example.replace(/^\/\w+\s*/, "");
        expect(() => parseArgs(command!, parseTextArgs(command!, text))).not.toThrow();
      }
    },
  );
});

describe("each test on its own runtime", () => {
  afterEach(async () => {
    await t?.close();
  });

  describe("/help", () => {
    it("lists every command, and explains one", async () => {
      t = await startRuntime();
      const index = await t.say("/help");
      for (const command of t.runtime.commands) expect(index.text).toContain(`/${command.name}`);
      const one = await t.say("/help /top");
      expect(one.fields?.find((x) => x.name === "Usage")?.value).toBe(
        "/top [volume|sales|max_price] [1d|7d|30d|365d] [limit]",
      );
      expect((await t.say("/help nope")).text).toMatch(/There is no \/nope command/);
    });
  });
});
