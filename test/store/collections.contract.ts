import { describe, expect, it } from "vitest";
import type { Address } from "../../src/api/validate.ts";
import type { OpenStore } from "./backends.ts";
import { useStore } from "./use-store.ts";

const address = (n: number) => `0x${n.toString(16).padStart(40, "0")}` as Address;

export function collectionsContract(open: OpenStore): void {
  describe("known collections", () => {
    const fresh = useStore(open);

    it("keeps what is put, replaces by address, and drops what is removed, at once", async () => {
      const { collections } = await fresh();
      expect(await collections.load()).toEqual([]);
      await collections.write({
        put: [
          { address: address(1), name: "One", symbol: "", rank: 3, source: "top", seenAt: 1 },
          {
            address: address(2),
            name: "Two",
            symbol: "TWO",
            rank: undefined,
            source: "answer",
            seenAt: 2,
          },
        ],
        remove: [],
      });
      await collections.write({
        put: [
          {
            address: address(1),
            name: "One",
            symbol: "ONE",
            rank: undefined,
            source: "contracts",
            seenAt: 3,
          },
        ],
        remove: [address(2)],
      });
      expect(await collections.load()).toEqual([
        {
          address: address(1),
          name: "One",
          symbol: "ONE",
          rank: undefined,
          source: "contracts",
          seenAt: 3,
        },
      ]);
    });

    it("keeps each chain's collections apart: the same address is a collection per chain", async () => {
      const { collections } = await fresh();
      const base = collections.forChain("base");
      const one = (name: string, seenAt: number) => ({
        address: address(1),
        name,
        symbol: "",
        rank: undefined,
        source: "top" as const,
        seenAt,
      });
      await collections.write({ put: [one("On ethereum", 1)], remove: [] });
      await base.write({ put: [one("On base", 2)], remove: [] });
      expect((await collections.load()).map((c) => c.name)).toEqual(["On ethereum"]);
      expect((await collections.forChain("ethereum").load()).map((c) => c.name)).toEqual([
        "On ethereum",
      ]);
      expect((await base.load()).map((c) => c.name)).toEqual(["On base"]);
      expect(await collections.forChain("polygon").load()).toEqual([]);
      await base.write({ put: [], remove: [address(1)] });
      expect(await base.load()).toEqual([]);
      expect((await collections.load()).map((c) => c.name)).toEqual(["On ethereum"]);
    });
  });
}
