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
  });
}
