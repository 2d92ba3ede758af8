import { describe, expect, it } from "vitest";
import { SourceUpdateDedup } from "../../src/store/updates.ts";
import type { OpenStore } from "./backends.ts";
import { useStore } from "./use-store.ts";

export function updatesContract(open: OpenStore): void {
  describe("platform update ids", () => {
    const fresh = useStore(open);

    it("says first once per update id and source", async () => {
      const { updates } = await fresh();
      expect(await updates.firstSeen("telegram:1", 10, 0)).toBe(true);
      expect(await updates.firstSeen("telegram:1", 10, 5)).toBe(false);
      expect(await updates.firstSeen("telegram:1", 11, 5)).toBe(true);
      expect(await updates.firstSeen("telegram:2", 10, 5)).toBe(true);
    });

    it("keeps 64-bit ids (Discord snowflakes) apart where a double would merge them", async () => {
      const { updates } = await fresh();
      // 2^60 + 1 and 2^60 + 2 are one double.
      const id = 2n ** 60n + 1n;
      expect(await updates.firstSeen("discord", id, 0)).toBe(true);
      expect(await updates.firstSeen("discord", id + 1n, 0)).toBe(true);
      expect(await updates.firstSeen("discord", id, 1)).toBe(false);
    });

    it("prunes one source's ids only: each source has its own window", async () => {
      const { updates } = await fresh();
      await updates.firstSeen("telegram:1", 1, 0);
      await updates.firstSeen("discord", 1n, 0);
      expect(await updates.prune("discord", 10)).toBe(1);
      expect(await updates.firstSeen("telegram:1", 1, 20)).toBe(false);
      expect(await updates.firstSeen("discord", 1n, 20)).toBe(true);
    });

    it("forgets ids once the redelivery window has passed", async () => {
      const { updates } = await fresh();
      let now = Date.parse("2025-06-01T12:00:00Z");
      const seen = new SourceUpdateDedup(updates, {
        source: "telegram:1",
        windowMs: 24 * 3_600_000,
        now: () => now,
      });
      expect(await seen.firstSeen(1)).toBe(true);
      now += 23 * 3_600_000;
      await seen.firstSeen(2);
      expect(await seen.prune()).toBe(0);
      expect(await seen.firstSeen(1)).toBe(false);
      now += 2 * 3_600_000;
      expect(await seen.prune()).toBe(1);
      expect(await seen.firstSeen(2)).toBe(false);
      expect(await seen.firstSeen(1)).toBe(true);
    });
  });
}
