import { afterAll, beforeAll, describe, expect, it } from "vitest";
import type { Simulator } from "../src/simulator/index.ts";
import { ownersDailyMove, whaleShareMove } from "../src/watches/checker.ts";
import { startTestSimulator } from "./test-simulator.ts";

/** Changes on demand for watches: in one simulator only, though the data set is shared. */
describe("simulator: owner jumps, whale moves and new NFTs on demand", () => {
  let a: Simulator;
  let b: Simulator;
  beforeAll(async () => {
    a = await startTestSimulator();
    b = await startTestSimulator();
  });
  afterAll(async () => {
    await a?.close();
    await b?.close();
  });

  const get = async (sim: Simulator, path: string) => {
    const response = await fetch(`${sim.url}${path}`, { headers: { "x-api-key": sim.apiKey } });
    expect(response.status).toBe(200);
    return (await response.json()) as Record<string, unknown>;
  };
  const ownerPoints = async (sim: Simulator, collection: string) =>
    (
      (await get(
        sim,
        `/collections/v1beta2/${collection}/owners_count/DURATION_7_DAYS/GROUP_BY_PERIOD_1_DAY`,
      )) as { dataPoints: { timestamp: string; count: string }[] }
    ).dataPoints;

  it("bumpOwners moves today's owner count by the percent, and only in that simulator", async () => {
    const { collection } = a.fixtures;
    const before = await ownerPoints(a, collection);
    a.bumpOwners(collection, 20);
    const after = await ownerPoints(a, collection);
    expect(after.slice(0, -1)).toEqual(before.slice(0, -1));
    const last = Number(after.at(-1)?.count);
    expect(last / Number(before.at(-1)?.count)).toBeCloseTo(1.2, 1);
    expect((ownersDailyMove(after) ?? 0) - (ownersDailyMove(before) ?? 0)).toBeGreaterThan(15);
    expect(await ownerPoints(b, collection)).toEqual(before);
    // A past window (timestampLt) is history: unchanged.
    const at = new Date(Date.now() - 3 * 86_400_000).toISOString();
    const past = (await get(
      a,
      `/collections/v1beta2/${collection}/owners_count/DURATION_7_DAYS/GROUP_BY_PERIOD_1_DAY?timestampLt=${at}`,
    )) as { dataPoints: unknown[] };
    expect(past).toEqual(
      await get(
        b,
        `/collections/v1beta2/${collection}/owners_count/DURATION_7_DAYS/GROUP_BY_PERIOD_1_DAY?timestampLt=${at}`,
      ),
    );
  });

  it("moveWhales raises the whale share's 30-day move by about the points", async () => {
    const { erc1155Collection: collection } = a.fixtures;
    const path = `/audiences/v1beta1/behaviors/by_collection/${collection}`;
    type Answer = { aggregatedBehaviors: Parameters<typeof whaleShareMove>[0] };
    const before = whaleShareMove(((await get(a, path)) as Answer).aggregatedBehaviors);
    const joined = a.moveWhales(collection, 5);
    expect(joined).toBeGreaterThan(0);
    const after = whaleShareMove(((await get(a, path)) as Answer).aggregatedBehaviors);
    const moved = (after?.move ?? 0) - (before?.move ?? 0);
    expect(moved).toBeGreaterThan(4);
    expect(moved).toBeLessThan(7);
    expect(whaleShareMove(((await get(b, path)) as Answer).aggregatedBehaviors)).toEqual(before);
  });

  it("giveNft puts a new NFT in the wallet (a spam one when asked), seen with the spam flag and filter", async () => {
    const { wallet } = a.fixtures;
    type Answer = { nfts: { nft: { contractAddress: string; tokenId: string }; spam: boolean }[] };
    const path = `/wallets/v1beta2/${wallet}/nfts`;
    const before = ((await get(a, path)) as Answer).nfts.length;
    const gift = a.giveNft(wallet);
    const spam = a.giveNft(wallet, undefined, { spam: true });
    const all = ((await get(a, path)) as Answer).nfts;
    expect(all).toHaveLength(before + 2);
    const key = (n: { contractAddress: string; tokenId: string }) =>
      `${n.contractAddress.toLowerCase()}:${n.tokenId}`;
    expect(all.find((n) => key(n.nft) === `${gift.contract}:${gift.tokenId}`)?.spam).toBe(false);
    expect(all.find((n) => key(n.nft) === `${spam.contract}:${spam.tokenId}`)?.spam).toBe(true);
    const excluded = ((await get(a, `${path}?spam=SPAM_FILTER_EXCLUDE`)) as Answer).nfts;
    expect(excluded.some((n) => key(n.nft) === `${spam.contract}:${spam.tokenId}`)).toBe(false);
    expect(((await get(b, path)) as Answer).nfts).toHaveLength(before);
  });
});
