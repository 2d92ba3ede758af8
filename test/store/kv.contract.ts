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

    // Real time, short leases: a backend may time leases by its own clock (PostgreSQL uses the
    // database's) and ignore the `now` it is given, so the test waits rather than passes times.
    it("a lease is held until it expires, renewed by its holder, taken over when expired or dead", async () => {
      const { leases } = await fresh();
      const ttl = 600;
      const sleep = (ms: number) => new Promise((resolve) => setTimeout(resolve, ms));
      expect(await leases.acquire("poller", "a", ttl, Date.now())).toBe("a");
      expect(await leases.acquire("poller", "b", ttl, Date.now())).toBe("a");
      await sleep(400);
      // Renewed at 400: still a's at 800, past the first expiry.
      expect(await leases.acquire("poller", "a", ttl, Date.now())).toBe("a");
      await sleep(400);
      expect(await leases.acquire("poller", "b", ttl, Date.now())).toBe("a");
      await sleep(300);
      expect(await leases.acquire("poller", "b", ttl, Date.now())).toBe("b");
      // A holder known to be gone is replaced before expiry.
      expect(await leases.acquire("poller", "c", ttl, Date.now(), (h) => h === "b")).toBe("c");
      // Another lease name is another lease.
      expect(await leases.acquire("other", "a", ttl, Date.now())).toBe("a");
    });

    it("a released lease is free at once; another holder cannot release it", async () => {
      const { leases } = await fresh();
      await leases.acquire("poller", "a", 60_000, Date.now());
      await leases.release("poller", "b");
      expect(await leases.acquire("poller", "b", 60_000, Date.now())).toBe("a");
      await leases.release("poller", "a");
      expect(await leases.acquire("poller", "b", 60_000, Date.now())).toBe("b");
    });
  });
}
