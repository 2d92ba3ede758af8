/**
 * Issue 29: the words a manager types for a gate's criteria. Collections are named as people name
 * them (a name, an address, a link) and looked up through the bot's own collection index, filled
 * from the simulator over HTTP; everything the grammar refuses says what to type instead.
 */
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { CollectionRefresher } from "../src/core/collection-refresh.ts";
import { KnownCollections } from "../src/core/known-collections.ts";
import { RecentWallets } from "../src/core/recent-wallets.ts";
import { NameResolver } from "../src/core/resolver.ts";
import { UserError } from "../src/errors.ts";
import {
  CRITERIA_EXAMPLES,
  type CriteriaContext,
  collectionResolverFor,
  describeCriterion,
  parseCriteria,
} from "../src/gates/criteria.ts";
import { ApiGateEvaluator } from "../src/gates/evaluate.ts";
import { silentLogger } from "../src/log.ts";
import { type ClientSetup, startClient } from "./helpers.ts";

const AZUKI = "0xED5AF388653567Af2F388E6224dC7C4b3241C544";
const BAYC = "0xBC4CA0EdA7647A8aB7C2061c2E118A18a936f13D";

let setup: ClientSetup;
let ctx: CriteriaContext;

beforeAll(async () => {
  setup = await startClient();
  const collections = new KnownCollections();
  const refresher = new CollectionRefresher({
    api: setup.api,
    collections,
    logger: silentLogger(),
    intervalMs: 60_000,
  });
  const resolver = new NameResolver({
    collections,
    refresher,
    wallets: new RecentWallets(),
    chat: "test:1",
    chain: { id: "ethereum", name: "Ethereum" },
    chains: [{ id: "ethereum" }, { id: "base" }],
  });
  const chain = { id: "ethereum", name: "Ethereum" } as Parameters<
    typeof collectionResolverFor
  >[0]["chain"];
  ctx = {
    chain: "ethereum",
    chains: ["ethereum", "base"],
    resolveCollection: collectionResolverFor({ chain, resolver, collections }),
  };
});

afterAll(async () => {
  await setup?.close();
});

/** The refusal's code; fails the test when the text is accepted or the error is a bug. */
async function refusalCode(text: string, context: CriteriaContext = ctx): Promise<string> {
  try {
    await parseCriteria(text, context);
  } catch (error) {
    expect(error).toBeInstanceOf(UserError);
    return (error as UserError).code;
  }
  throw new Error(`expected ${JSON.stringify(text)} to be refused`);
}

/** The refusal's message; fails the test when the text is accepted or the error is a bug. */
async function refusal(text: string, context: CriteriaContext = ctx): Promise<string> {
  try {
    await parseCriteria(text, context);
  } catch (error) {
    expect(error).toBeInstanceOf(UserError);
    return (error as Error).message;
  }
  throw new Error(`expected ${JSON.stringify(text)} to be refused`);
}

describe("gate criteria: what is read", () => {
  it("reads a collection by name, address, short form or link, on the invocation's chain", async () => {
    for (const text of [
      "holds 1 azuki",
      "Holds 1 Azuki",
      `holds 1 ${AZUKI.toLowerCase()}`,
      `holds 1 ${AZUKI.slice(2)}`,
      "holds 1 0xED5A…C544",
      "holds 1 https://opensea.io/collection/azuki",
      `holds 1 <https://etherscan.io/address/${AZUKI}>`,
    ]) {
      expect(await parseCriteria(text, ctx), text).toEqual([
        { kind: "holds", chain: "ethereum", contract: AZUKI, name: "Azuki", min: 1 },
      ]);
    }
  });

  it("takes the chain from `on`, or from a link that names one", async () => {
    expect(await parseCriteria(`holds 3 ${BAYC} on base`, ctx)).toEqual([
      { kind: "holds", chain: "base", contract: BAYC, min: 3 },
    ]);
    expect(await parseCriteria(`holds 2 https://opensea.io/assets/base/${BAYC}/7`, ctx)).toEqual([
      { kind: "holds", chain: "base", contract: BAYC, min: 2 },
    ]);
  });

  it("reads behaviors in and out of a set, and the spend words into one criterion", async () => {
    const criteria = await parseCriteria(
      "behavior Collector, whale and not behaviour flipper, VOLUME 10 and avgprice 0.50, collections 5, lastpurchase 30d",
      ctx,
    );
    expect(criteria).toEqual([
      {
        kind: "behavior",
        chain: "ethereum",
        behaviors: ["BEHAVIOR_COLLECTOR", "BEHAVIOR_WHALE"],
        not: false,
      },
      { kind: "behavior", chain: "ethereum", behaviors: ["BEHAVIOR_FLIPPER"], not: true },
      {
        kind: "spend",
        chain: "ethereum",
        volumeGte: "10",
        priceAvgGte: "0.5",
        collectionsGte: 5,
        lastPurchaseDaysLte: 30,
      },
    ]);
    expect(criteria.map(describeCriterion)).toEqual([
      "behavior is Collector or Whale on Ethereum",
      "behavior is not Flipper on Ethereum",
      "one wallet: NFT purchase volume at least 10 ETH, average NFT price at least 0.5 ETH, owns NFTs of at least 5 collections, bought an NFT within 30 days on Ethereum",
    ]);
  });

  it("reads a behavior list written with commas, 'or' or 'and'", async () => {
    for (const text of [
      "behavior collector,whale",
      "behavior collector or whale",
      "behavior collector and whale",
    ]) {
      expect(await parseCriteria(text, ctx), text).toEqual([
        {
          kind: "behavior",
          chain: "ethereum",
          behaviors: ["BEHAVIOR_COLLECTOR", "BEHAVIOR_WHALE"],
          not: false,
        },
      ]);
    }
  });

  it("keeps a name with a comma or an 'and' in it whole", async () => {
    const seen: string[] = [];
    const spy: CriteriaContext = {
      chain: "ethereum",
      resolveCollection: async (q) => {
        seen.push(q);
        return { address: AZUKI, name: "Cats and Dogs" };
      },
    };
    await parseCriteria("holds 1 Cats and Dogs, Birds and behavior whale", spy);
    expect(seen).toEqual(["Cats and Dogs, Birds"]);
  });

  it("describes a holding in plain words, the name from the resolver", async () => {
    const [holds] = await parseCriteria("holds 2 Bored Ape Yacht Club", ctx);
    expect(holds && describeCriterion(holds)).toBe(
      "holds at least 2 Bored Ape Yacht Club on Ethereum",
    );
  });

  it("never keeps markup from the resolver's name or the control characters in it", async () => {
    const odd: CriteriaContext = {
      chain: "ethereum",
      resolveCollection: async () => ({ address: AZUKI.toLowerCase(), name: "Az\u0000uki\u0007" }),
    };
    expect(await parseCriteria("holds 1 azuki", odd)).toEqual([
      { kind: "holds", chain: "ethereum", contract: AZUKI, name: "Azuki", min: 1 },
    ]);
  });

  it("reads every /help example on the simulator, and the demo wallet passes each", async () => {
    const evaluator = new ApiGateEvaluator({ apis: new Map([["ethereum", setup.api]]) });
    const demo = setup.sim.fixtures.gates.demo.wallet;
    for (const example of CRITERIA_EXAMPLES) {
      const criteria = await parseCriteria(example, ctx);
      expect(criteria.length, example).toBeGreaterThan(0);
      const verdict = await evaluator.evaluate(criteria, [demo]);
      expect(verdict.outcome, `${example}: ${verdict.results.map((r) => r.why).join("; ")}`).toBe(
        "pass",
      );
    }
  });
});

describe("gate criteria: what is refused, and what to type instead", () => {
  it.each([
    ["holds 0 azuki", "number_out_of_range"],
    ["holds 1000001 azuki", "number_out_of_range"],
    ["holds many azuki", "invalid_number"],
    ["volume -1", "invalid_number"],
    ["volume 0.0000000000000000001", "invalid_number"],
    ["avgprice 0", "number_out_of_range"],
    ["lastpurchase 99999d", "number_out_of_range"],
    ["volume", "missing_argument"],
    ["holds 1", "missing_argument"],
    ["   ", "missing_argument"],
    ["behavior collector,hodler", "unknown_behavior"],
    ["owns 1 azuki", "invalid_criteria"],
    ["holds 1 azuki,, volume 1", "invalid_criteria"],
    ["volume 1, volume 2", "duplicate_criterion"],
    [`holds 1 azuki, holds 2 ${AZUKI}`, "duplicate_criterion"],
    [
      "holds 1 azuki, holds 1 doodles, holds 1 pudgy penguins, behavior whale, not behavior flipper, volume 1",
      "too_many_items",
    ],
    ["holds 1 Az\u0000uki", "invalid_characters"],
    ["holds 1 <b>Azuki</b>", "invalid_characters"],
    ["holds 1 Zzyzx Nonexistent Apes", "unknown_collection"],
    ["behavior whale on mars", "unknown_chain"],
    ["volume 1 on polygon", "unknown_chain"],
    ["holds 1 azuki on base", "collection_names_unavailable"],
    [`holds 1 https://opensea.io/assets/base/${BAYC} on ethereum`, "chain_mismatch"],
  ])("%j is refused as %s", async (text, code) => {
    expect(await refusalCode(text)).toBe(code);
  });

  it("refuses counts below 1, absurd or of 79 digits, and negative or non-numeric amounts", async () => {
    expect(await refusal("holds 0 azuki")).toMatch(/at least 1.*`holds 1 Azuki`/);
    expect(await refusal("holds -2 azuki")).toMatch(/cannot be negative/);
    expect(await refusal("holds 1000001 azuki")).toMatch(/at most 1,000,000/);
    expect(await refusal(`holds ${"9".repeat(79)} azuki`)).toMatch(/at most 1,000,000/);
    expect(await refusal("holds many azuki")).toMatch(/whole number.*"many"/);
    expect(await refusal("holds 1.5 azuki")).toMatch(/whole number/);
    expect(await refusal("volume -1")).toMatch(/cannot be negative.*`volume 10`/);
    expect(await refusal("volume ten")).toMatch(/amount.*`volume 10`.*"ten"/);
    expect(await refusal("avgprice 0")).toMatch(/more than 0.*`avgprice 0.5`/);
    expect(await refusal(`volume ${"1".repeat(79)}`)).toMatch(/at most 1,000,000/);
    expect(await refusal("volume 0.0000000000000000001")).toMatch(/18 decimals/);
    expect(await refusal("collections 0")).toMatch(/at least 1.*`collections 5`/);
    expect(await refusal("lastpurchase soon")).toMatch(/whole number.*`lastpurchase 30d`/);
    expect(await refusal("lastpurchase 99999d")).toMatch(/at most 3650 days/);
    expect(await refusal("volume")).toMatch(/Give a number after volume/);
  });

  it("refuses an unknown behavior, listing the valid names", async () => {
    const message = await refusal("behavior collector,hodler");
    expect(message).toMatch(/"hodler" is not a behavior/);
    expect(message).toMatch(/whale.*collector.*flipper|whale, newbie/);
    expect(await refusal("behavior")).toMatch(/Name one or more behaviors/);
    expect(await refusal("not flipper")).toMatch(/`not behavior flipper`/);
  });

  it("refuses duplicates of the same kind", async () => {
    expect(await refusal("volume 1, volume 2")).toMatch(/volume is there twice/);
    expect(await refusal("behavior whale and behavior collector")).toMatch(
      /put the names in one list/,
    );
    expect(await refusal(`holds 1 azuki, holds 2 ${AZUKI}`)).toMatch(/Azuki is there twice/);
  });

  it("refuses more than five criteria and an empty text", async () => {
    expect(
      await refusal(
        "holds 1 azuki, holds 1 doodles, holds 1 pudgy penguins, behavior whale, not behavior flipper, volume 1",
      ),
    ).toMatch(/at most 5 criteria.*this has 6/);
    expect(await refusal("   ")).toMatch(/Give the gate's criteria.*`holds 1 Azuki`/);
    expect(await refusal("holds 1 azuki,, volume 1")).toMatch(/empty/);
    expect(await parseCriteria("volume 1,", ctx)).toEqual([
      { kind: "spend", chain: "ethereum", volumeGte: "1" },
    ]);
  });

  it("refuses NUL and markup in a name, before any lookup", async () => {
    const asked: string[] = [];
    const spy: CriteriaContext = {
      chain: "ethereum",
      resolveCollection: async (q) => {
        asked.push(q);
        return { address: AZUKI };
      },
    };
    expect(await refusal("holds 1 Az\u0000uki", spy)).toMatch(/cannot read/);
    expect(await refusal("holds 1 <b>Azuki</b>", spy)).toMatch(/no collection name has/);
    expect(await refusal("holds 1 @everyone", spy)).toMatch(/no collection name has/);
    expect(await refusal("holds 1 [Azuki](https://evil.example)", spy)).toMatch(
      /no collection name has/,
    );
    expect(asked).toEqual([]);
  });

  it("names an unknown collection, and refuses what is no criterion or no chain", async () => {
    expect(await refusal("holds 1 Zzyzx Nonexistent Apes")).toMatch(
      /I know no collection named "Zzyzx Nonexistent Apes"/,
    );
    expect(await refusal("holds 1")).toMatch(/Say which collection/);
    expect(await refusal("owns 1 azuki")).toMatch(/not a criterion I know.*`holds 1 Azuki`/);
    expect(await refusal("behavior whale on mars")).toMatch(/"mars" is not a chain/);
    expect(await refusal("volume 1 on polygon")).toMatch(/does not serve Polygon/);
    expect(await refusal("holds 1 azuki on base")).toMatch(/paste its contract address/);
    expect(await refusal(`holds 1 https://opensea.io/assets/base/${BAYC} on ethereum`)).toMatch(
      /That link is on Base/,
    );
  });
});
