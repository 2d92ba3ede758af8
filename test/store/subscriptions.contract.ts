import { describe, expect, it } from "vitest";
import type { OpenStore } from "./backends.ts";
import { aContract, subscribe } from "./samples.ts";
import { useStore } from "./use-store.ts";

export function subscriptionsContract(open: OpenStore): void {
  describe("subscriptions", () => {
    const fresh = useStore(open);

    it("subscribes a chat once: a second upsert changes the types and lifts a pause", async () => {
      const { subscriptions } = await fresh();
      const first = await subscribe(subscriptions, "c1", "erc721");
      expect(first.created).toBe(true);
      expect(first.subscription).toMatchObject({
        platform: "telegram",
        chatId: "c1",
        types: "erc721",
        createdBy: "telegram:u1",
        pausedAt: null,
        pauseReason: null,
      });
      await subscriptions.pause(first.subscription.id, "kicked", 1_000);
      expect(await subscriptions.find("telegram", "c1")).toMatchObject({
        pausedAt: 1_000,
        pauseReason: "kicked",
      });
      expect(await subscriptions.active()).toEqual([]);
      const again = await subscribe(subscriptions, "c1", "erc1155");
      expect(again.created).toBe(false);
      expect(again.subscription).toMatchObject({
        id: first.subscription.id,
        types: "erc1155",
        pausedAt: null,
      });
      expect(await subscriptions.active()).toHaveLength(1);
    });

    it("finds per platform and chat, lists oldest first, and removes", async () => {
      const { subscriptions } = await fresh();
      await subscribe(subscriptions, "c1");
      await subscribe(subscriptions, "c2");
      expect(await subscriptions.find("discord", "c1")).toBeUndefined();
      expect((await subscriptions.all()).map((s) => s.chatId)).toEqual(["c1", "c2"]);
      expect(await subscriptions.remove("telegram", "c1")).toBe(true);
      expect(await subscriptions.remove("telegram", "c1")).toBe(false);
      expect((await subscriptions.all()).map((s) => s.chatId)).toEqual(["c2"]);
    });

    it("a chat subscribes per chain: one row per (platform, chat, chain), found, listed and removed per chain", async () => {
      const { subscriptions } = await fresh();
      const eth = await subscribe(subscriptions, "c1", "all");
      const base = await subscribe(subscriptions, "c1", "erc721", "telegram", "base");
      expect(base.created).toBe(true);
      expect(base.subscription).toMatchObject({ chatId: "c1", chain: "base", types: "erc721" });
      expect(base.subscription.id).not.toBe(eth.subscription.id);
      // Again on base: the same row, the types changed; ethereum's untouched.
      const again = await subscribe(subscriptions, "c1", "erc1155", "telegram", "base");
      expect(again).toMatchObject({ created: false, subscription: { id: base.subscription.id } });
      expect(await subscriptions.find("telegram", "c1", "ethereum")).toMatchObject({
        types: "all",
      });
      expect(await subscriptions.find("telegram", "c1", "base")).toMatchObject({
        types: "erc1155",
      });
      expect(await subscriptions.find("telegram", "c1", "polygon")).toBeUndefined();
      // Without a chain: the oldest.
      expect(await subscriptions.find("telegram", "c1")).toMatchObject({ chain: "ethereum" });
      expect((await subscriptions.forChat("telegram", "c1")).map((s) => s.chain)).toEqual([
        "ethereum",
        "base",
      ]);
      expect(await subscriptions.remove("telegram", "c1", "polygon")).toBe(false);
      expect(await subscriptions.remove("telegram", "c1", "base")).toBe(true);
      expect((await subscriptions.forChat("telegram", "c1")).map((s) => s.chain)).toEqual([
        "ethereum",
      ]);
      await subscribe(subscriptions, "c1", "all", "telegram", "base");
      // Without a chain: all of the chat's.
      expect(await subscriptions.remove("telegram", "c1")).toBe(true);
      expect(await subscriptions.forChat("telegram", "c1")).toEqual([]);
    });

    it("a chat subscribed to two chains moves with both; merged per chain where the new chat has one", async () => {
      const { subscriptions } = await fresh();
      await subscribe(subscriptions, "old", "all");
      const oldBase = (await subscribe(subscriptions, "old", "all", "telegram", "base"))
        .subscription;
      const newEth = (await subscribe(subscriptions, "new", "erc721")).subscription;
      await subscriptions.moveChat("telegram", "old", "new");
      expect(await subscriptions.forChat("telegram", "old")).toEqual([]);
      expect(
        (await subscriptions.forChat("telegram", "new")).map((s) => [s.id, s.chain, s.types]),
      ).toEqual([
        [oldBase.id, "base", "all"],
        [newEth.id, "ethereum", "erc721"],
      ]);
    });

    it("removing a subscription drops its queued alerts", async () => {
      const { subscriptions, outbox } = await fresh();
      const { subscription } = await subscribe(subscriptions, "c1");
      await outbox.record({
        contracts: [aContract(1)],
        subscriptions: [subscription],
        chain: "ethereum",
        cursorKey: "cursor",
        cursor: "x",
        note: null,
        now: 1,
      });
      expect(await outbox.depth()).toBe(1);
      await subscriptions.remove("telegram", "c1");
      expect(await outbox.depth()).toBe(0);
    });

    it("a chat that moved takes its subscription along; merged into one there, nothing twice", async () => {
      const { subscriptions, outbox } = await fresh();
      const alone = (await subscribe(subscriptions, "old-1")).subscription;
      await subscriptions.moveChat("telegram", "old-1", "new-1");
      expect(await subscriptions.find("telegram", "new-1")).toMatchObject({
        id: alone.id,
        chatId: "new-1",
      });
      expect(await subscriptions.find("telegram", "old-1")).toBeUndefined();

      const from = (await subscribe(subscriptions, "old-2")).subscription;
      const to = (await subscribe(subscriptions, "new-2", "erc721")).subscription;
      const record = (subs: (typeof from)[], n: number) =>
        outbox.record({
          contracts: [aContract(n)],
          subscriptions: subs,
          chain: "ethereum",
          cursorKey: "cursor",
          cursor: "x",
          note: null,
          now: 1,
        });
      await record([from, to], 1);
      await record([from], 2);
      await subscriptions.moveChat("telegram", "old-2", "new-2");
      // The new chat's own subscription is the one kept.
      expect(await subscriptions.forChat("telegram", "new-2")).toMatchObject([
        { id: to.id, types: "erc721" },
      ]);
      const due = await outbox.due(10, 100);
      expect(
        due
          .filter((a) => a.chatId === "new-2")
          .map((a) => a.contract.name)
          .sort(),
      ).toEqual(["Collection 1", "Collection 2"]);
      await subscriptions.moveChat("telegram", "nowhere", "new-3");
      expect(await subscriptions.forChat("telegram", "new-3")).toEqual([]);
    });
  });
}
