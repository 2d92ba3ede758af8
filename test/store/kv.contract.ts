import { describe, expect, it } from "vitest";
import type { OpenStore } from "./backends.ts";
import { useStore } from "./use-store.ts";

export function keyValueContract(open: OpenStore): void {
  describe("key-value and lease", () => {
    const fresh = useStore(open);

    it("keeps named values: set, replace, delete", async () => {
      const { kv } = await fresh();
      expect(await kv.get("k")).toBeUndefined();
      await kv.set("k", "1");
      await kv.set("k", "2");
      expect(await kv.get("k")).toBe("2");
      await kv.delete("k");
      expect(await kv.get("k")).toBeUndefined();
    });

    it("a lease is held until it expires, renewed by its holder, taken over when expired or dead", async () => {
      const { leases } = await fresh();
      expect(await leases.acquire("poller", "a", 1_000, 0)).toBe("a");
      expect(await leases.acquire("poller", "b", 1_000, 500)).toBe("a");
      // Renewed at 900: still a's at 1,500.
      expect(await leases.acquire("poller", "a", 1_000, 900)).toBe("a");
      expect(await leases.acquire("poller", "b", 1_000, 1_500)).toBe("a");
      expect(await leases.acquire("poller", "b", 1_000, 1_900)).toBe("b");
      // A holder known to be gone is replaced before expiry.
      expect(await leases.acquire("poller", "c", 1_000, 2_000, (h) => h === "b")).toBe("c");
      // Another lease name is another lease.
      expect(await leases.acquire("other", "a", 1_000, 2_000)).toBe("a");
    });

    it("a released lease is free at once; another holder cannot release it", async () => {
      const { leases } = await fresh();
      await leases.acquire("poller", "a", 60_000, 0);
      await leases.release("poller", "b");
      expect(await leases.acquire("poller", "b", 60_000, 1)).toBe("a");
      await leases.release("poller", "a");
      expect(await leases.acquire("poller", "b", 60_000, 2)).toBe("b");
    });
  });
}
