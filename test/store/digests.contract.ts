import { describe, expect, it } from "vitest";
import type { NewDigest } from "../../src/digests/types.ts";
import type { OpenStore } from "./backends.ts";
import { useStore } from "./use-store.ts";

const aDigest = (chatId: string, over: Partial<NewDigest> = {}): NewDigest => ({
  platform: "telegram",
  chatId,
  chain: "ethereum",
  cadence: "daily",
  weekday: null,
  time: "09:00",
  zone: "Europe/Berlin",
  metric: "volume",
  period: "1d",
  createdBy: "telegram:u1",
  createdAt: 1_000,
  ...over,
});

export function digestsContract(open: OpenStore): void {
  describe("digests", () => {
    const fresh = useStore(open);

    it("adds up to the cap per chat, lists per chat oldest first, removes only the chat's own", async () => {
      const { digests } = await fresh();
      const first = await digests.add(aDigest("c1"), 2);
      expect(first).toMatchObject({ chatId: "c1", time: "09:00", zone: "Europe/Berlin" });
      const weekly = await digests.add(
        aDigest("c1", { cadence: "weekly", weekday: 1, metric: "sales", period: "7d" }),
        2,
      );
      expect(weekly).toMatchObject({ cadence: "weekly", weekday: 1, metric: "sales" });
      expect(await digests.add(aDigest("c1"), 2)).toBe("full");
      // Another chat has its own cap.
      const other = await digests.add(aDigest("c2"), 2);
      if (first === "full" || weekly === "full" || other === "full") throw new Error("full");
      expect((await digests.forChat("telegram", "c1")).map((d) => d.id)).toEqual([
        first.id,
        weekly.id,
      ]);
      expect(await digests.forChat("discord", "c1")).toEqual([]);
      expect(await digests.remove("telegram", "c2", first.id)).toBe(false);
      expect(await digests.remove("telegram", "c1", first.id)).toBe(true);
      expect(await digests.remove("telegram", "c1", first.id)).toBe(false);
      expect((await digests.all()).map((d) => d.id)).toEqual([weekly.id, other.id]);
    });

    it("a slot's run is claimed once: not again while held, nor once sent; a failed try waits, a dead claim expires", async () => {
      const { digests } = await fresh();
      const digest = await digests.add(aDigest("c1"), 5);
      if (digest === "full") throw new Error("full");
      // Real time: a backend may time claims by its own clock (PostgreSQL uses the database's).
      const claim = (holder: string, now: number, claimMs = 60_000) =>
        digests.claimRun({ digestId: digest.id, slot: 100, holder, now, claimMs });
      const start = Date.now();
      expect(await claim("a", start, 300)).toMatchObject({
        status: "sending",
        claimedBy: "a",
        attempts: 0,
      });
      expect(await claim("b", start + 10)).toBeUndefined();
      // a died: its claim ends 300 ms on, then b takes the slot.
      await new Promise((resolve) => setTimeout(resolve, 400));
      expect(await claim("b", Date.now())).toMatchObject({ claimedBy: "b" });
      // A failed try's wait is a due time on the instances' clock, like an alert's.
      const dueAt = Date.now() + 3_600_000;
      await digests.retryRun(digest.id, 100, dueAt, "timeout", true);
      expect(await claim("a", dueAt - 1)).toBeUndefined();
      expect(await claim("a", dueAt)).toMatchObject({ attempts: 1, lastError: "timeout" });
      await digests.finishRun(digest.id, 100, "sent", 410);
      expect(await claim("b", 10_000)).toBeUndefined();
      expect(await digests.runs(digest.id)).toEqual([
        expect.objectContaining({ slot: 100, status: "sent", finishedAt: 410, claimedBy: null }),
      ]);
      // The next slot is a run of its own.
      expect(
        await digests.claimRun({
          digestId: digest.id,
          slot: 500,
          holder: "a",
          now: 500,
          claimMs: 50,
        }),
      ).toMatchObject({ slot: 500 });
      // A removed digest's runs go with it, and no run is made for it any more.
      await digests.remove("telegram", "c1", digest.id);
      expect(await digests.runs(digest.id)).toEqual([]);
      expect(
        await digests.claimRun({
          digestId: digest.id,
          slot: 900,
          holder: "a",
          now: 900,
          claimMs: 50,
        }),
      ).toBeUndefined();
    });

    it("a chat's digests follow it to a new id", async () => {
      const { digests } = await fresh();
      await digests.add(aDigest("old"), 5);
      await digests.add(aDigest("other"), 5);
      await digests.moveChat("telegram", "old", "new");
      expect((await digests.all()).map((d) => d.chatId)).toEqual(["new", "other"]);
      expect(await digests.forChat("telegram", "old")).toEqual([]);
    });

    it("claimers racing for one slot: exactly one gets it", async () => {
      const { digests } = await fresh();
      const digest = await digests.add(aDigest("c1"), 5);
      if (digest === "full") throw new Error("full");
      const claims = await Promise.all(
        Array.from({ length: 8 }, (_, i) =>
          digests.claimRun({
            digestId: digest.id,
            slot: 7,
            holder: `h${i}`,
            now: 10,
            claimMs: 60_000,
          }),
        ),
      );
      expect(claims.filter(Boolean)).toHaveLength(1);
    });

    it("a chat's digests pause with the reason (the first pause kept) and resume; other chats are untouched", async () => {
      const { digests, chatPauses } = await fresh();
      const mine = await digests.add(aDigest("c1"), 5);
      const other = await digests.add(aDigest("c2"), 5);
      const discord = await digests.add(aDigest("c1", { platform: "discord" }), 5);
      if (mine === "full" || other === "full" || discord === "full") throw new Error("full");
      expect(mine).toMatchObject({ pausedAt: null, pauseReason: null });

      await digests.pauseChat("telegram", "c1", "Telegram: Bad Request: chat not found", 7_000);
      await digests.pauseChat("telegram", "c1", "a later refusal", 8_000);
      expect(await digests.forChat("telegram", "c1")).toMatchObject([
        { id: mine.id, pausedAt: 7_000, pauseReason: "Telegram: Bad Request: chat not found" },
      ]);
      expect((await digests.forChat("telegram", "c2"))[0]?.pausedAt).toBeNull();
      expect((await digests.forChat("discord", "c1"))[0]?.pausedAt).toBeNull();
      expect((await digests.all()).find((d) => d.id === mine.id)?.pausedAt).toBe(7_000);

      expect(await chatPauses.resume("telegram", "c1")).toBe(true);
      expect(await chatPauses.resume("telegram", "c1")).toBe(false);
      expect(await digests.forChat("telegram", "c1")).toMatchObject([
        { id: mine.id, pausedAt: null, pauseReason: null },
      ]);
    });
  });
}
