/**
 * Issue 29: a gate's criteria read against the simulator over HTTP through the bot's own client.
 * Each criterion on both sides of its threshold, wallets adding up (holdings) or one passing
 * (behavior, spend), and an upstream failure that makes a criterion unknown, never a fail.
 */
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import type { ApiClient } from "../src/api/client.ts";
import { ApiGateEvaluator } from "../src/gates/evaluate.ts";
import type { GateCriterion, SpendCriterion } from "../src/gates/types.ts";
import type { GateFixtures } from "../src/simulator/index.ts";
import { type ClientSetup, startClient } from "./helpers.ts";

const AZUKI = "0xED5AF388653567Af2F388E6224dC7C4b3241C544";
const BAYC = "0xBC4CA0EdA7647A8aB7C2061c2E118A18a936f13D";
const NICK = "0xb8c2C29ee19D8307cb7255e1Cd9CbDE883A267d5";

let setup: ClientSetup;
let gates: GateFixtures;
let evaluator: ApiGateEvaluator;

const holds = (min: number, contract = AZUKI, chain = "ethereum"): GateCriterion => ({
  kind: "holds",
  chain,
  contract,
  name: contract === AZUKI ? "Azuki" : "Bored Ape Yacht Club",
  min,
});
const behavior = (behaviors: string[], not = false): GateCriterion => ({
  kind: "behavior",
  chain: "ethereum",
  behaviors,
  not,
});
const spend = (filters: Omit<SpendCriterion, "kind" | "chain">): GateCriterion => ({
  kind: "spend",
  chain: "ethereum",
  ...filters,
});

/** One criterion's result for these wallets. */
async function one(criterion: GateCriterion, wallets: string[], by = evaluator) {
  const verdict = await by.evaluate([criterion], wallets);
  const [result] = verdict.results;
  expect(verdict.outcome).toBe(result?.outcome);
  return result as NonNullable<typeof result>;
}

/** The next decimal up in the 18th place: "41.5" -> "41.500000000000000001". */
function justAbove(decimal: string): string {
  const [int = "0", frac = ""] = decimal.split(".");
  const digits = BigInt(int + frac.padEnd(18, "0")) + 1n;
  const text = digits.toString().padStart(19, "0");
  return `${text.slice(0, -18)}.${text.slice(-18)}`;
}

beforeAll(async () => {
  setup = await startClient();
  gates = setup.sim.fixtures.gates;
  evaluator = new ApiGateEvaluator({ apis: new Map([["ethereum", setup.api]]) });
});

afterAll(async () => {
  await setup?.close();
});

describe("holds", () => {
  it("passes the demo wallet on what it holds, and fails it one above", async () => {
    expect(gates.demo.holds[AZUKI.toLowerCase()]).toBe(1);
    expect(await one(holds(1), [gates.demo.wallet])).toEqual({
      criterion: holds(1),
      outcome: "pass",
      why: "holds 1 of Azuki, needs 1",
    });
    expect(await one(holds(2), [gates.demo.wallet])).toMatchObject({
      outcome: "fail",
      why: "holds 1 of Azuki, needs 2",
    });
    expect(await one(holds(1, BAYC), [NICK])).toMatchObject({
      outcome: "fail",
      why: "holds 0 of Bored Ape Yacht Club, needs 1",
    });
  });

  it("adds the wallets up: two wallets of one Azuki each pass a gate of two", async () => {
    expect(await one(holds(2), [NICK])).toMatchObject({ outcome: "fail" });
    expect(await one(holds(2), [gates.demo.wallet, NICK])).toEqual({
      criterion: holds(2),
      outcome: "pass",
      why: "holds 2 of Azuki over 2 wallets, needs 2",
    });
    expect(await one(holds(3), [gates.demo.wallet, NICK])).toMatchObject({
      outcome: "fail",
      why: "holds 2 of Azuki over 2 wallets, needs 3",
    });
    // The same wallet twice (any case) is one wallet.
    expect(
      await one(holds(2), [gates.demo.wallet, gates.demo.wallet.toUpperCase().replace("0X", "0x")]),
    ).toMatchObject({ outcome: "fail" });
  });

  it("reads only as many tokens as the minimum needs, and stops at the wallet that reaches it", async () => {
    const { wallet, collection } = setup.sim.fixtures;
    const { tokens } = await setup.api.foundational.nftsByOwner(wallet, {
      contractAddress: collection,
      limit: 500,
    });
    const held = tokens.length;
    expect(held).toBeGreaterThan(1);
    const fresh = new ApiGateEvaluator({ apis: new Map([["ethereum", setup.api]]), fresh: true });
    const before = setup.sim.requests.length;
    const criterion: GateCriterion = {
      kind: "holds",
      chain: "ethereum",
      contract: collection,
      min: held - 1,
    };
    expect(await one(criterion, [wallet, NICK], fresh)).toMatchObject({
      outcome: "pass",
      why: `holds at least ${held} of ${collection} over 2 wallets, needs ${held - 1}`,
    });
    const asked = setup.sim.requests.slice(before);
    // One page of one more token than needed, from the first wallet only.
    expect(
      asked.map((r) => [r.path.toLowerCase().includes(wallet.toLowerCase()), r.query.limit]),
    ).toEqual([[true, String(held)]]);
    expect(await one({ ...criterion, min: held }, [wallet], fresh)).toMatchObject({
      outcome: "pass",
    });
    expect(await one({ ...criterion, min: held + 1 }, [wallet], fresh)).toMatchObject({
      outcome: "fail",
      why: `holds ${held} of ${collection}, needs ${held + 1}`,
    });
  });

  it("pages past 500 tokens only while the minimum is not reached", async () => {
    // No simulated wallet holds 500 of one collection: a client that answers pages of a wallet
    // holding 800.
    const asked: { limit: number | undefined; offset: number | undefined }[] = [];
    const api = {
      foundational: {
        nftsByOwner: async (_owner: string, query: { limit?: number; offset?: number }) => {
          asked.push({ limit: query.limit, offset: query.offset });
          const from = query.offset ?? 0;
          const count = Math.max(0, Math.min(query.limit ?? 20, 800 - from));
          return {
            tokens: Array.from({ length: count }, (_, i) => ({ tokenId: String(from + i) })),
          };
        },
      },
    } as unknown as ApiClient;
    const paged = new ApiGateEvaluator({ apis: new Map([["ethereum", api]]) });
    expect(await one(holds(700), [NICK], paged)).toMatchObject({
      outcome: "pass",
      why: "holds at least 701 of Azuki, needs 700",
    });
    expect(asked).toEqual([
      { limit: 500, offset: 0 },
      { limit: 201, offset: 500 },
    ]);
    asked.length = 0;
    expect(await one(holds(900), [NICK], paged)).toMatchObject({
      outcome: "fail",
      why: "holds 800 of Azuki, needs 900",
    });
    expect(asked).toEqual([
      { limit: 500, offset: 0 },
      { limit: 401, offset: 500 },
    ]);
  });
});

describe("behavior", () => {
  it("passes a wallet of each behavior in its set, and fails it outside", async () => {
    const entries = Object.entries(gates.behaviorWallets);
    expect(entries.length).toBeGreaterThanOrEqual(13);
    for (const [label, wallet] of entries) {
      const other = label === "BEHAVIOR_WHALE" ? "BEHAVIOR_FLIPPER" : "BEHAVIOR_WHALE";
      expect((await one(behavior([label]), [wallet])).outcome, label).toBe("pass");
      expect((await one(behavior([other, label]), [wallet])).outcome, label).toBe("pass");
      expect((await one(behavior([other]), [wallet])).outcome, label).toBe("fail");
      expect((await one(behavior([label], true), [wallet])).outcome, label).toBe("fail");
      expect((await one(behavior([other], true), [wallet])).outcome, label).toBe("pass");
    }
  });

  it("passes on any one wallet, and says why in words", async () => {
    const flipper = gates.behaviorWallets.BEHAVIOR_FLIPPER as string;
    const collector = gates.behaviorWallets.BEHAVIOR_COLLECTOR as string;
    expect(await one(behavior(["BEHAVIOR_FLIPPER"], true), [flipper])).toMatchObject({
      outcome: "fail",
      why: "the wallet is Flipper",
    });
    expect(await one(behavior(["BEHAVIOR_FLIPPER"], true), [flipper, collector])).toMatchObject({
      outcome: "pass",
      why: "1 of 2 wallets are not Flipper",
    });
    expect(await one(behavior(["BEHAVIOR_COLLECTOR", "BEHAVIOR_WHALE"]), [flipper])).toMatchObject({
      outcome: "fail",
      why: "the wallet is Flipper, not Collector or Whale",
    });
    expect(
      await one(behavior(["BEHAVIOR_COLLECTOR", "BEHAVIOR_WHALE"]), [flipper, collector]),
    ).toMatchObject({ outcome: "pass", why: "1 of 2 wallets are Collector or Whale" });
  });

  it("reads every wallet in one request", async () => {
    const wallets = Object.values(gates.behaviorWallets).slice(0, 4);
    const before = setup.sim.countRequests("/audiences/v1beta1/behaviors/by_wallets");
    await one(behavior(["BEHAVIOR_TASTEMAKER"]), wallets);
    expect(setup.sim.countRequests("/audiences/v1beta1/behaviors/by_wallets")).toBe(before + 1);
  });
});

describe("spend", () => {
  it("puts each filter on both sides of the demo wallet's own figure", async () => {
    const demo = gates.demo;
    const w = [demo.wallet];
    expect((await one(spend({ volumeGte: demo.volume }), w)).outcome).toBe("pass");
    expect((await one(spend({ volumeGte: justAbove(demo.volume) }), w)).outcome).toBe("fail");
    expect((await one(spend({ priceAvgGte: demo.priceAvg }), w)).outcome).toBe("pass");
    expect((await one(spend({ priceAvgGte: justAbove(demo.priceAvg) }), w)).outcome).toBe("fail");
    expect((await one(spend({ collectionsGte: demo.collections }), w)).outcome).toBe("pass");
    expect((await one(spend({ collectionsGte: demo.collections + 1 }), w)).outcome).toBe("fail");
    const days = demo.daysSinceLastPurchase as number;
    expect((await one(spend({ lastPurchaseDaysLte: days }), w)).outcome).toBe("pass");
    expect((await one(spend({ lastPurchaseDaysLte: days - 1 }), w)).outcome).toBe("fail");
    expect((await one(spend({ volumeGte: "1" }), [gates.neverBought])).outcome).toBe("fail");
  });

  it("passes when one wallet passes every filter, not when each passes some", async () => {
    const { demo, bigSpender } = gates;
    // The big spender has the volume and the recent purchase; the demo wallet has the price.
    const both = [demo.wallet, bigSpender.wallet];
    const recentVolume = spend({ volumeGte: "100", lastPurchaseDaysLte: 10 });
    expect(await one(recentVolume, [demo.wallet])).toMatchObject({
      outcome: "fail",
      why: "no wallet has NFT purchase volume at least 100 ETH and a purchase within 10 days (it has a volume of 41.5 ETH)",
    });
    expect(await one(recentVolume, both)).toMatchObject({
      outcome: "pass",
      why: "1 of 2 wallets have NFT purchase volume at least 100 ETH and a purchase within 10 days",
    });
    const volumeAndPrice = spend({ volumeGte: "100", priceAvgGte: "4" });
    expect(Number(bigSpender.priceAvg)).toBeLessThan(4);
    expect(Number(demo.priceAvg)).toBeGreaterThan(4);
    expect((await one(volumeAndPrice, both)).outcome).toBe("fail");
  });

  it("a decision's passing spend criterion is one read; /gate test's reads the wallet's figures too", async () => {
    const fresh = new ApiGateEvaluator({ apis: new Map([["ethereum", setup.api]]), fresh: true });
    const criterion = spend({ volumeGte: "1" });
    const before = setup.sim.requests.length;
    const decided = await fresh.evaluate([criterion], [gates.demo.wallet]);
    expect(decided.outcome).toBe("pass");
    expect(setup.sim.requests.length - before).toBe(1);
    const explained = await fresh.evaluate([criterion], [gates.demo.wallet], undefined, {
      explain: true,
    });
    expect(explained.results[0]?.why).toMatch(/^it has a volume of [\d.,]+ ETH; needs /);
    expect(setup.sim.requests.length - before).toBe(3);
  });
});

describe("when the data service fails or the chain is not served", () => {
  it("a criterion on a chain the bot does not read is unknown, with the reason", async () => {
    expect(await one(holds(1, AZUKI, "base"), [gates.demo.wallet])).toMatchObject({
      outcome: "unknown",
      why: "this bot does not read Base (the criterion cannot be checked)",
    });
  });

  it("no proved wallet fails without a request", async () => {
    const before = setup.sim.requests.length;
    const verdict = await evaluator.evaluate([holds(1), behavior(["BEHAVIOR_WHALE"])], []);
    expect(verdict.outcome).toBe("fail");
    expect(setup.sim.requests.length).toBe(before);
  });

  it("a 500 on every route makes each criterion unknown, never fail; a pass elsewhere still decides nothing", async () => {
    const failing = await startClient({ API_RETRIES: "0" });
    try {
      const fresh = new ApiGateEvaluator({
        apis: new Map([["ethereum", failing.api]]),
        fresh: true,
      });
      failing.sim.setFaults({ errorRates: { 500: 1 } });
      const criteria = [
        holds(1),
        behavior(["BEHAVIOR_FLIPPER"], true),
        spend({ volumeGte: "1000" }),
      ];
      const verdict = await fresh.evaluate(criteria, [gates.demo.wallet]);
      expect(verdict.outcome).toBe("unknown");
      expect(verdict.results.map((r) => r.outcome)).toEqual(["unknown", "unknown", "unknown"]);
      expect(verdict.results[0]?.why).toBe(
        "unknown: the data service is unavailable (holds 0 of Azuki in the wallets read, needs 1)",
      );
      expect(verdict.results[1]?.why).toBe("unknown: the data service is unavailable");
      failing.sim.clearFaults();
      // One failing wallet does not matter when the others already reach the minimum…
      failing.sim.script([{ status: 500 }]);
      expect(await one(holds(1), [NICK, gates.demo.wallet], fresh)).toMatchObject({
        outcome: "pass",
      });
      // …and makes the criterion unknown when they do not.
      failing.sim.script([{ status: 500 }]);
      expect(await one(holds(2), [NICK, gates.demo.wallet], fresh)).toMatchObject({
        outcome: "unknown",
      });
    } finally {
      await failing.close();
    }
  });

  it("a stopped data service makes every criterion unknown", async () => {
    const stopped = await startClient({ API_RETRIES: "0", API_TIMEOUT_MS: "500" });
    await stopped.sim.close();
    try {
      const gone = new ApiGateEvaluator({ apis: new Map([["ethereum", stopped.api]]) });
      const verdict = await gone.evaluate(
        [holds(1), behavior(["BEHAVIOR_COLLECTOR"]), spend({ collectionsGte: 1 })],
        [gates.demo.wallet],
      );
      expect(verdict.outcome).toBe("unknown");
      expect(
        verdict.results.every((r) => r.outcome === "unknown" && r.why.startsWith("unknown: ")),
      ).toBe(true);
    } finally {
      await stopped.api.close();
    }
  });
});
