/**
 * Issue "What a community sees", item 6: the simulator's timed mints are a history derived from
 * the clock (one contract per slot of the interval), not a memory of what it minted since it
 * started: a simulator started again answers the same past as one that ran through, so a
 * digest's count of the last 24 hours and /alerts test's of the last hour agree with the rate.
 */
import { describe, expect, it } from "vitest";
import { NFT_CONTRACT_TYPES } from "../src/api/schemas.ts";
import { type Contract, type Simulator, startSimulator } from "../src/simulator/index.ts";

const MINUTE = 60_000;
const HOUR = 60 * MINUTE;
const DAY = 24 * HOUR;

/** Every contract minted in (since, now], oldest first, read in pages as the bot does. */
async function mintedSince(
  sim: Simulator,
  chain: string,
  sinceMs: number,
  types: readonly string[] = [],
): Promise<Contract[]> {
  const all: Contract[] = [];
  for (let offset = 0; ; offset += 500) {
    const query = [
      `blockTimestampGt=${new Date(sinceMs).toISOString()}`,
      "limit=500",
      `offset=${offset}`,
      ...types.map((type) => `contractTypes=${type}`),
    ].join("&");
    const response = await fetch(`${sim.urlOf(chain)}/foundational/v1beta2/contracts?${query}`, {
      headers: { "x-api-key": sim.apiKey },
    });
    expect(response.status).toBe(200);
    const { contracts } = (await response.json()) as { contracts: Contract[] };
    all.push(...contracts);
    if (contracts.length < 500) return all;
  }
}

describe("the timed mints' history follows the clock", () => {
  it("two simulators started at different times answer the same contracts for the same past, at the rate", async () => {
    const chains = ["ethereum", "base"];
    const start = Date.UTC(2030, 0, 1, 12);
    let clock = start;
    // One ran through from `start`; the other started three hours later (a restart).
    const through = await startSimulator({ mintIntervalMs: MINUTE, now: () => clock, chains });
    clock += 3 * HOUR;
    const restarted = await startSimulator({ mintIntervalMs: MINUTE, now: () => clock, chains });
    try {
      for (const chain of chains) {
        const lastDay = await mintedSince(through, chain, clock - DAY);
        expect(await mintedSince(restarted, chain, clock - DAY)).toEqual(lastDay);
        // A contract a minute: 60 in the last hour, 24 times as many in the last day.
        expect(lastDay).toHaveLength(24 * 60);
        expect(await mintedSince(restarted, chain, clock - HOUR)).toHaveLength(60);
        expect(lastDay.at(-1)?.mintEvent.blockTimestamp).toBe(
          new Date(clock).toISOString().replace(".000", ""),
        );
        // The NFT contracts (what digests and alerts count) are the same in both too.
        const nfts = await mintedSince(restarted, chain, clock - DAY, NFT_CONTRACT_TYPES);
        expect(nfts).toEqual(await mintedSince(through, chain, clock - DAY, NFT_CONTRACT_TYPES));
        expect(nfts.length).toBeGreaterThan(24 * 60 * 0.8);
      }
      // The chains' histories are their own.
      const [ethereum, base] = await Promise.all(
        chains.map(async (chain) =>
          (await mintedSince(restarted, chain, clock - HOUR)).map((contract) => contract.address),
        ),
      );
      expect(ethereum?.filter((address) => base?.includes(address))).toEqual([]);
      // An hour on, both have the same new hour, and the hour before is still the same.
      clock += HOUR;
      for (const chain of chains) {
        const lastTwo = await mintedSince(through, chain, clock - 2 * HOUR);
        expect(lastTwo).toHaveLength(120);
        expect(await mintedSince(restarted, chain, clock - 2 * HOUR)).toEqual(lastTwo);
      }
    } finally {
      await through.close();
      await restarted.close();
    }
  });
});
