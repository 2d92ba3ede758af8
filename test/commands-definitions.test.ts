import { afterEach, describe, expect, it } from "vitest";
import { shareOf } from "../commands/common.ts";
import { allCommands } from "../commands/index.ts";
import { percentChange, summarizeOwnerCounts } from "../commands/owners.ts";
import { flattenProfile } from "../commands/profile.ts";
import { segmentCsv } from "../commands/segment.ts";
import { formatNativeNumber } from "../commands/shared/stats.ts";
import { slashCommands } from "../src/adapters/discord/commands.ts";
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

/** Every order of the words. */
function orders(words: readonly string[]): string[][] {
  if (words.length <= 1) return [[...words]];
  return words.flatMap((word, i) =>
    orders([...words.slice(0, i), ...words.slice(i + 1)]).map((rest) => [word, ...rest]),
  );
}

describe("text arguments in any order", () => {
  // As `npm start` serves them: on the simulator's three chains, with the chain option.
  const served = servedCommands(allCommands(), parseConfig({}).chains);
  const command = (name: string) => served.find((c) => c.name === name)!;
  const parsed = (name: string, text: string) =>
    parseArgs(command(name), parseTextArgs(command(name), text));

  it.each([
    ["top", ["7d", "volume"], { metric: "volume", duration: "7d", limit: 10 }],
    ["top", ["7d", "volume", "5"], { metric: "volume", duration: "7d", limit: 5 }],
    [
      "top",
      ["base", "sales", "30d", "3"],
      { chain: "base", metric: "sales", duration: "30d", limit: 3 },
    ],
    ["subscribe", ["erc721", "show"], { types: "erc721", badactors: "show" }],
    [
      "subscribe",
      ["polygon", "1155", "hide"],
      { chain: "polygon", types: "erc1155", badactors: "hide" },
    ],
    ["contracts", ["erc1155", "5", "base"], { chain: "base", type: "erc1155", limit: 5 }],
    ["owners", ["7d", "bayc"], { duration: "7d" }],
  ] as const)(
    "/%s %j: each word lands in the one option it fits, in every order",
    (name, words, expected) => {
      for (const order of orders(words))
        expect(parsed(name, order.join(" ")), order.join(" ")).toMatchObject(expected);
    },
  );

  it("a wallet first, then its choices in either order", () => {
    for (const order of orders(["only", "base"]))
      expect(parsed("wallet", `vitalik.eth ${order.join(" ")}`)).toMatchObject({
        wallet: "vitalik.eth",
        spam: "only",
        chain: "base",
      });
  });

  it("a word that fits nothing is named, with the options it could have been", () => {
    const refusal = (text: string) => {
      try {
        parsed("top", text);
      } catch (error) {
        return String((error as Error).message);
      }
      return "accepted";
    };
    for (const text of ["7x volume", "volume 7x", "7x"]) {
      expect(refusal(text), text).toMatch(
        /^I did not understand "7x": it is not one of chain \(ethereum, base, polygon\), .*duration \(1d, 7d, 30d, 365d\) or a number for limit\. Usage: \/top /,
      );
    }
    // Only the options still without a word: here the chain or the metric.
    expect(refusal("5 7x 7d")).toMatch(
      /^I did not understand "7x": it is not one of chain \(ethereum, base, polygon\) or metric \(volume, sales, max_price\)\./,
    );
    expect(() => parsed("subscribe", "erc72 show")).toThrow(
      /I did not understand "erc72": it is not one of chain \(.*\) or types \(all, erc721, erc1155\)/,
    );
    // A word for an option that has one already.
    expect(refusal("7d volume 30d")).toMatch(/^I did not expect "30d": duration is already 7d\./);
  });

  it("keeps what worked: names, numbers, quotes, a trailing text, a word alone", () => {
    expect(parseTextArgs(command("owners"), "bored ape yacht club 7d")).toMatchObject({
      collection: "bored ape yacht club",
      duration: "7d",
    });
    // A collection named like a choice, given alone, is the collection.
    expect(parseTextArgs(command("stats"), "day")).toMatchObject({ collection: "day" });
    expect(parseTextArgs(command("segment"), '"bored ape yacht club" mayc 2 any')).toMatchObject({
      collection: "bored ape yacht club",
      collection2: "mayc",
      min_owned: "2",
      condition: "any",
    });
    // The free text after a choice keeps its words, choice-like ones too.
    expect(
      parseTextArgs(command("gate"), "add role:@Holders holds 1 Azuki, not behavior flipper"),
    ).toMatchObject({
      action: "add",
      spec: "holds 1 Azuki, not behavior flipper",
    });
    expect(parseTextArgs(command("alerts"), "minters exclude badactor, newbie")).toMatchObject({
      action: "minters",
      value: "exclude badactor, newbie",
    });
  });
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
      // /help <name> suggests a near command as a typed one does.
      expect((await t.say("/help audiense")).text).toBe(
        "There is no /audiense command. Did you mean /audience? /help lists them all.",
      );
    });

    it("shows each choice once, under the names people type", async () => {
      t = await startRuntime({ CHAINS: "ethereum,base,polygon" });
      const words = (text: string) => text.toLowerCase().match(/[a-z0-9_]+/g) ?? [];
      for (const command of t.runtime.commands) {
        const help = await t.say(`/help ${command.name}`);
        const fields = (help.fields ?? []).filter((f) => !["Usage", "Examples"].includes(f.name));
        for (const field of fields) {
          for (const [, option] of Object.entries(command.options)) {
            for (const choice of option.choices ?? []) {
              // The default named after them is no repetition.
              const listed = field.value.replace(/; default [^;]*$/, "");
              const times = words(listed).filter((word) => word === choice.value).length;
              expect(times, `/help ${command.name}, ${field.name}: ${choice.value}`).toBeLessThan(
                2,
              );
            }
          }
        }
      }
      const gate = await t.say("/help gate");
      const names = (gate.fields ?? []).map((field) => field.name);
      // The words the usage line shows, typed by position; never the internal "spec".
      expect(names).toEqual([
        "Usage",
        "chain (optional)",
        "action",
        "role (optional)",
        "criteria|number|wallet (optional)",
        "Examples",
      ]);
      const value = (name: string) => gate.fields?.find((field) => field.name === name)?.value;
      expect(value("action")).toBe("add, list, remove, test or log");
      expect(value("chain (optional)")).toBe(
        "Which chain (ethereum, base or polygon; default: this chat's)",
      );
      // Where the description does not list them, the choices follow it once.
      const top = await t.say("/help top");
      expect(top.fields?.find((field) => field.name === "metric (optional)")?.value).toBe(
        "What to rank by (volume, sales, max_price); default volume",
      );
      // On Discord the option's own name is what people pick.
      const discord = await t.say("/help gate", { platform: "discord" });
      expect(discord.fields?.map((field) => field.name)).toContain("spec (optional)");
    });

    it("/top 7d volume 5 answers the ranking, whatever the order", async () => {
      t = await startRuntime();
      const reply = await t.say("/top 7d volume 5");
      expect(reply.title).toMatch(/sales volume, last 7 days/);
      expect(reply.table?.rows).toHaveLength(5);
    });

    it("leaves out a hidden command (/link, retired), which still answers when typed from habit", async () => {
      t = await startRuntime();
      const index = await t.say("/help");
      expect(index.text).toContain("/verify");
      expect(index.text).not.toMatch(/\/link\b/);
      // The list the Telegram menu and Discord's registration at start are made from.
      expect(t.runtime.commands.map((command) => command.name)).not.toContain("link");
      // `npm run register` publishes what slashCommands makes of every command.
      const published = slashCommands(allCommands()).map((command) => command.name);
      expect(published).toContain("verify");
      expect(published).not.toContain("link");
      const answer = await t.say("/link 0xEC3111Cb30983AC4545f576b2793cA163fE0294B");
      expect(answer.text).toMatch(/prove yours with \/verify/);
    });
  });
});
