import { describe, expect, it } from "vitest";
import type { NewWatch } from "../../src/watches/types.ts";
import type { OpenStore } from "./backends.ts";
import { useStore } from "./use-store.ts";

const base: NewWatch = {
  platform: "discord",
  chatId: "c1",
  chain: "ethereum",
  kind: "collection",
  target: "0x00000000000000000000000000000000000000aa",
  label: "Apes",
  ownersPercent: 10,
  whalesPoints: null,
  createdBy: "discord:u1",
  createdAt: 1,
};

export function watchesContract(open: OpenStore): void {
  describe("watches", () => {
    const fresh = useStore(open);

    it("adds once per chat, chain, kind and target; adding again changes the thresholds and keeps the state", async () => {
      const { watches } = await fresh();
      const first = await watches.add(base, 10);
      expect(first.kind).toBe("added");
      if (first.kind === "full") throw new Error("full");
      expect(first.watch).toMatchObject({ ...base, state: null, pending: null });
      await watches.advance(first.watch.id, '{"owners":1}', null);
      const again = await watches.add({ ...base, ownersPercent: 5, whalesPoints: 2.5 }, 10);
      expect(again).toMatchObject({
        kind: "updated",
        watch: { id: first.watch.id, ownersPercent: 5, whalesPoints: 2.5, state: '{"owners":1}' },
      });
      const other = await watches.add({ ...base, chain: "base" }, 10);
      expect(other.kind).toBe("added");
      expect((await watches.forChat("discord", "c1")).map((w) => w.chain)).toEqual([
        "ethereum",
        "base",
      ]);
      expect(await watches.all("base")).toHaveLength(1);
      expect(await watches.all()).toHaveLength(2);
    });

    it("a chat holds at most `max` watches; another chat is not counted", async () => {
      const { watches } = await fresh();
      for (let i = 0; i < 3; i++)
        expect(
          (await watches.add({ ...base, target: `0x${String(i).padStart(40, "0")}` }, 3)).kind,
        ).toBe("added");
      expect(await watches.add({ ...base, target: `0x${"9".repeat(40)}` }, 3)).toEqual({
        kind: "full",
        count: 3,
        max: 3,
      });
      // Changing one it has is no new watch.
      expect((await watches.add({ ...base, target: `0x${"0".repeat(40)}` }, 3)).kind).toBe(
        "updated",
      );
      expect((await watches.add({ ...base, chatId: "c2" }, 3)).kind).toBe("added");
    });

    it("removes only the chat's own watch", async () => {
      const { watches } = await fresh();
      const added = await watches.add(base, 10);
      if (added.kind === "full") throw new Error("full");
      expect(await watches.remove("discord", "c2", added.watch.id)).toBe(false);
      expect(await watches.remove("telegram", "c1", added.watch.id)).toBe(false);
      expect(await watches.remove("discord", "c1", added.watch.id)).toBe(true);
      expect(await watches.remove("discord", "c1", added.watch.id)).toBe(false);
      expect(await watches.all()).toEqual([]);
    });

    it("state and the owed post are stored at once; posted clears only the same post", async () => {
      const { watches } = await fresh();
      const added = await watches.add({ ...base, kind: "wallet", ownersPercent: null }, 10);
      if (added.kind === "full") throw new Error("full");
      const { id } = added.watch;
      await watches.advance(id, '{"n":1}', '{"text":"a"}');
      expect((await watches.all())[0]).toMatchObject({ state: '{"n":1}', pending: '{"text":"a"}' });
      await watches.posted(id, '{"text":"other"}');
      expect((await watches.all())[0]?.pending).toBe('{"text":"a"}');
      await watches.posted(id, '{"text":"a"}');
      expect((await watches.all())[0]).toMatchObject({ state: '{"n":1}', pending: null });
      // A removed watch stays removed.
      await watches.remove("discord", "c1", id);
      await watches.advance(id, '{"n":2}', null);
      expect(await watches.all()).toEqual([]);
    });

    it("a moved chat takes its watches along; those the new chat has already are kept", async () => {
      const { watches } = await fresh();
      const a = await watches.add({ ...base, platform: "telegram", chatId: "-1" }, 10);
      await watches.add(
        { ...base, platform: "telegram", chatId: "-1", target: `0x${"b".repeat(40)}` },
        10,
      );
      const kept = await watches.add(
        { ...base, platform: "telegram", chatId: "-100", ownersPercent: 30 },
        10,
      );
      if (a.kind === "full" || kept.kind === "full") throw new Error("full");
      await watches.moveChat("telegram", "-1", "-100");
      expect(await watches.forChat("telegram", "-1")).toEqual([]);
      const moved = await watches.forChat("telegram", "-100");
      expect(moved.map((w) => [w.target, w.ownersPercent]).sort()).toEqual([
        [base.target, 30],
        [`0x${"b".repeat(40)}`, 10],
      ]);
    });

    it("a chat's watches pause with the reason (the first pause kept) and resume; other chats are untouched", async () => {
      const { watches, chatPauses } = await fresh();
      const mine = await watches.add(base, 10);
      const mineToo = await watches.add(
        { ...base, kind: "wallet", target: `0x${"1".repeat(40)}` },
        10,
      );
      const other = await watches.add({ ...base, chatId: "c2" }, 10);
      const telegram = await watches.add({ ...base, platform: "telegram" }, 10);
      if ([mine, mineToo, other, telegram].some((r) => r.kind === "full")) throw new Error("full");
      expect(mine).toMatchObject({ watch: { pausedAt: null, pauseReason: null } });

      await watches.pauseChat("discord", "c1", "Discord: Unknown Channel", 5_000);
      await watches.pauseChat("discord", "c1", "a later refusal", 6_000);
      const paused = await watches.forChat("discord", "c1");
      expect(paused.map((w) => [w.pausedAt, w.pauseReason])).toEqual([
        [5_000, "Discord: Unknown Channel"],
        [5_000, "Discord: Unknown Channel"],
      ]);
      expect((await watches.forChat("discord", "c2"))[0]?.pausedAt).toBeNull();
      expect((await watches.forChat("telegram", "c1"))[0]?.pausedAt).toBeNull();
      expect((await watches.all()).filter((w) => w.pausedAt !== null)).toHaveLength(2);

      expect(await chatPauses.resume("discord", "c1")).toBe(true);
      expect(await chatPauses.resume("discord", "c1")).toBe(false);
      expect(
        (await watches.forChat("discord", "c1")).map((w) => [w.pausedAt, w.pauseReason]),
      ).toEqual([
        [null, null],
        [null, null],
      ]);
    });
  });
}
