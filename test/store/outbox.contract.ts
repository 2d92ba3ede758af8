import { describe, expect, it } from "vitest";
import { alertStoresOf } from "../../src/alerts/store/index.ts";
import type { OpenStore } from "./backends.ts";
import { aContract, subscribe } from "./samples.ts";
import { useStore } from "./use-store.ts";

export function outboxContract(open: OpenStore): void {
  describe("alert outbox and cursor", () => {
    const fresh = useStore(open);

    it("records unseen contracts, one alert per wanting subscription, and the cursor, at once", async () => {
      const { subscriptions, outbox, kv } = await fresh();
      const all = (await subscribe(subscriptions, "all", "all")).subscription;
      const erc1155 = (await subscribe(subscriptions, "1155", "erc1155")).subscription;
      const first = await outbox.record({
        contracts: [aContract(1), aContract(2, "TYPE_ERC1155")],
        subscriptions: [all, erc1155],
        chain: "ethereum",
        cursorKey: "cursor",
        cursor: "2025-01-01T00:00:00.000Z",
        note: "a gap",
        now: 100,
      });
      expect(first.fresh.map((c) => c.name)).toEqual(["Collection 1", "Collection 2"]);
      expect(first.enqueued).toBe(3);
      expect(await kv.get("cursor")).toBe("2025-01-01T00:00:00.000Z");
      // Seen already (another case of address too): not fresh, nothing enqueued again.
      const again = await outbox.record({
        contracts: [{ ...aContract(1), address: aContract(1).address.toUpperCase() }],
        subscriptions: [all, erc1155],
        chain: "ethereum",
        cursorKey: "cursor",
        cursor: "2025-01-02T00:00:00.000Z",
        note: null,
        now: 200,
      });
      expect(again).toEqual({ fresh: [], enqueued: 0, hidden: 0 });
      expect(await kv.get("cursor")).toBe("2025-01-02T00:00:00.000Z");
      expect(await outbox.depth()).toBe(3);
      const due = await outbox.due(100, 10);
      expect(due[0]).toMatchObject({
        subscriptionId: all.id,
        platform: "telegram",
        chatId: "all",
        attempts: 0,
        note: "a gap",
        contract: { name: "Collection 1", types: ["TYPE_ERC721"] },
      });
    });

    it("stores each contract's minter label; a subscription hiding bad actors gets no alert for theirs", async () => {
      const { subscriptions, outbox } = await fresh();
      const hides = (await subscribe(subscriptions, "hides")).subscription;
      expect(hides.badActors).toBe("hide");
      const shows = (
        await subscriptions.upsert({
          platform: "telegram",
          chatId: "shows",
          chain: "ethereum",
          types: "all",
          badActors: "show",
          createdBy: "telegram:u1",
          now: 1_000,
        })
      ).subscription;
      expect(shows.badActors).toBe("show");
      expect(await outbox.unseen("ethereum", [aContract(1).address, aContract(2).address])).toEqual(
        [aContract(1).address, aContract(2).address],
      );
      const recorded = await outbox.record({
        chain: "ethereum",
        contracts: [
          { ...aContract(1), minterBehavior: "BEHAVIOR_BADACTOR" },
          { ...aContract(2), minterBehavior: "BEHAVIOR_COLLECTOR" },
          aContract(3),
        ],
        subscriptions: "active",
        cursorKey: "cursor",
        cursor: "c",
        note: null,
        now: 100,
      });
      // Contract 1: only the channel that shows bad actors; 2 and 3: both.
      expect(recorded).toMatchObject({ enqueued: 5, hidden: 1 });
      // Seen now (any case of address), so not looked up again; an unseen one still is.
      expect(
        await outbox.unseen("ethereum", [aContract(2).address.toUpperCase(), aContract(4).address]),
      ).toEqual([aContract(4).address]);
      expect(await outbox.unseen("base", [aContract(2).address])).toEqual([aContract(2).address]);
      const due = await outbox.due(100, 10);
      const label = (chatId: string, n: number) =>
        due.find((a) => a.chatId === chatId && a.contract.address === aContract(n).address)
          ?.contract.minterBehavior;
      expect(label("shows", 1)).toBe("BEHAVIOR_BADACTOR");
      expect(label("hides", 1)).toBeUndefined();
      expect(label("hides", 2)).toBe("BEHAVIOR_COLLECTOR");
      expect(label("hides", 3)).toBeUndefined();
      // Subscribing again without the option keeps the rule; with it, changes it.
      const again = await subscribe(subscriptions, "shows", "erc721");
      expect(again.subscription.badActors).toBe("show");
      const changed = await subscriptions.upsert({
        platform: "telegram",
        chatId: "shows",
        chain: "ethereum",
        types: "all",
        badActors: "hide",
        createdBy: "telegram:u1",
        now: 1_000,
      });
      expect(changed.subscription.badActors).toBe("hide");
    });

    it("suppressed alerts leave the outbox; whether the channel was told is kept per channel and contract", async () => {
      const { subscriptions, outbox } = await fresh();
      const sub = (await subscribe(subscriptions, "c1")).subscription;
      const other = (await subscribe(subscriptions, "c2")).subscription;
      await outbox.record({
        chain: "ethereum",
        contracts: [aContract(1), aContract(2)],
        subscriptions: [sub, other],
        cursorKey: "cursor",
        cursor: "c",
        note: null,
        now: 100,
      });
      const due = await outbox.due(100, 10);
      const of = (chatId: string, n: number) =>
        due.filter((a) => a.chatId === chatId && a.contract.address === aContract(n).address);
      expect(await outbox.alreadyNoted(due)).toEqual(new Set());
      await outbox.suppress(of("c1", 1), { reports: 2, noted: true, now: 200 });
      await outbox.suppress(of("c1", 2), { reports: 3, noted: false, now: 200 });
      expect(await outbox.depth()).toBe(2);
      expect(await outbox.alreadyNoted(due)).toEqual(new Set(of("c1", 1).map((a) => a.id)));
      // A later silent drop does not forget that the channel was told.
      await outbox.suppress(of("c1", 1), { reports: 4, noted: false, now: 300 });
      expect(await outbox.alreadyNoted(of("c1", 1))).toEqual(new Set(of("c1", 1).map((a) => a.id)));
    });

    it("contracts are seen per chain: one address on two chains is two contracts, each alerting its chain's subscribers", async () => {
      const { subscriptions, outbox } = await fresh();
      const eth = (await subscribe(subscriptions, "c1")).subscription;
      const base = (await subscribe(subscriptions, "c1", "all", "telegram", "base")).subscription;
      const other = (await subscribe(subscriptions, "c2", "all", "telegram", "base")).subscription;
      const onEth = await outbox.record({
        chain: "ethereum",
        contracts: [aContract(1)],
        subscriptions: "active",
        cursorKey: "poll_cursor:ethereum",
        cursor: "e",
        note: null,
        now: 100,
      });
      expect(onEth).toMatchObject({ enqueued: 1 });
      // The same address on base: fresh there, for base's subscribers only.
      const onBase = await outbox.record({
        chain: "base",
        contracts: [{ ...aContract(1), name: "Base twin" }],
        subscriptions: "active",
        cursorKey: "poll_cursor:base",
        cursor: "b",
        note: "base gap",
        now: 100,
      });
      expect(onBase.fresh.map((c) => c.name)).toEqual(["Base twin"]);
      expect(onBase.enqueued).toBe(2);
      // Seen on base now too.
      expect(
        await outbox.record({
          chain: "base",
          contracts: [aContract(1)],
          subscriptions: "active",
          cursorKey: "poll_cursor:base",
          cursor: "b2",
          note: null,
          now: 100,
        }),
      ).toEqual({ fresh: [], enqueued: 0, hidden: 0 });
      const due = await outbox.due(100, 10);
      expect(due.map((a) => [a.subscriptionId, a.chain, a.contract.name, a.note])).toEqual([
        [eth.id, "ethereum", "Collection 1", null],
        [base.id, "base", "Base twin", "base gap"],
        [other.id, "base", "Base twin", "base gap"],
      ]);
      const claimed = await outbox.claim({ now: 100, limit: 10, holder: "h", claimMs: 1_000 });
      expect(claimed.map((a) => a.chain).sort()).toEqual(["base", "base", "ethereum"]);
      await outbox.delivered(claimed, 101);
      expect(await outbox.depth()).toBe(0);
      expect(await outbox.deliveredCount()).toBe(3);
    });

    it("a batch that fails leaves nothing behind: no contract seen, no alert, the cursor unmoved", async () => {
      const { subscriptions, outbox, kv } = await fresh();
      const sub = (await subscribe(subscriptions, "c1")).subscription;
      await kv.set("cursor", "before");
      const gone = { ...sub, id: sub.id + 1000 };
      await expect(
        outbox.record({
          contracts: [aContract(1)],
          subscriptions: [sub, gone],
          chain: "ethereum",
          cursorKey: "cursor",
          cursor: "after",
          note: null,
          now: 1,
        }),
      ).rejects.toThrow();
      expect(await kv.get("cursor")).toBe("before");
      expect(await outbox.depth()).toBe(0);
      // Not seen: the next batch records it.
      const retried = await outbox.record({
        contracts: [aContract(1)],
        subscriptions: [sub],
        chain: "ethereum",
        cursorKey: "cursor",
        cursor: "after",
        note: null,
        now: 1,
      });
      expect(retried.enqueued).toBe(1);
    });

    it("enqueues for the active subscriptions when told so, read in the same transaction", async () => {
      const { subscriptions, outbox } = await fresh();
      const on = (await subscribe(subscriptions, "on", "erc721")).subscription;
      const off = (await subscribe(subscriptions, "off")).subscription;
      await subscriptions.pause(off.id, "gone", 1);
      const { enqueued } = await outbox.record({
        contracts: [aContract(1), aContract(2, "TYPE_ERC1155")],
        subscriptions: "active",
        chain: "ethereum",
        cursorKey: "cursor",
        cursor: "x",
        note: null,
        now: 1,
      });
      expect(enqueued).toBe(1);
      expect((await outbox.due(1, 10)).map((a) => [a.subscriptionId, a.contract.name])).toEqual([
        [on.id, "Collection 1"],
      ]);
    });

    it("gives due alerts oldest first, per platform, never a paused chat's", async () => {
      const { subscriptions, outbox } = await fresh();
      const tg = (await subscribe(subscriptions, "t1")).subscription;
      const dc = (await subscribe(subscriptions, "d1", "all", "discord")).subscription;
      const paused = (await subscribe(subscriptions, "t2")).subscription;
      await subscriptions.pause(paused.id, "gone", 1);
      for (const n of [1, 2])
        await outbox.record({
          contracts: [aContract(n)],
          subscriptions: [tg, dc, paused],
          chain: "ethereum",
          cursorKey: "cursor",
          cursor: "x",
          note: null,
          now: n * 10,
        });
      expect((await outbox.due(15, 10)).map((a) => a.contract.name)).toEqual([
        "Collection 1",
        "Collection 1",
      ]);
      const telegram = await outbox.due(100, 10, "telegram");
      expect(telegram.map((a) => [a.chatId, a.contract.name])).toEqual([
        ["t1", "Collection 1"],
        ["t1", "Collection 2"],
      ]);
      expect(await outbox.due(100, 1, "discord")).toHaveLength(1);
    });

    it("delivered alerts leave the outbox and are counted; retried ones wait; given-up ones go", async () => {
      const { subscriptions, outbox } = await fresh();
      const sub = (await subscribe(subscriptions, "c1")).subscription;
      await outbox.record({
        contracts: [aContract(1), aContract(2), aContract(3)],
        subscriptions: [sub],
        chain: "ethereum",
        cursorKey: "cursor",
        cursor: "x",
        note: null,
        now: 0,
      });
      const [one, two, three] = await outbox.due(0, 10);
      if (!one || !two || !three) throw new Error("three alerts expected");
      await outbox.delivered([one], 5);
      expect(await outbox.deliveredCount()).toBe(1);
      await outbox.retryLater([two], 1_000, "HTTP 500", true);
      await outbox.retryLater([three], 1_000, "rate limited", false);
      expect(await outbox.due(999, 10)).toEqual([]);
      const later = await outbox.due(1_000, 10);
      expect(later.map((a) => [a.contract.name, a.attempts])).toEqual([
        ["Collection 2", 1],
        ["Collection 3", 0],
      ]);
      await outbox.giveUp(later, "HTTP 500", 2_000);
      expect(await outbox.depth()).toBe(0);
      expect(await outbox.deliveredCount()).toBe(1);
    });

    /** n contracts due at 0 for one subscription: n alerts. */
    const queue = async (store: Awaited<ReturnType<typeof fresh>>, n: number) => {
      const sub = (await subscribe(alertStoresOf(store).subscriptions, "c1")).subscription;
      await alertStoresOf(store).outbox.record({
        contracts: Array.from({ length: n }, (_, i) => aContract(i + 1)),
        subscriptions: [sub],
        chain: "ethereum",
        cursorKey: "cursor",
        cursor: "x",
        note: null,
        now: 0,
      });
    };
    const claimer =
      (store: Awaited<ReturnType<typeof fresh>>, holder: string, claimMs = 60_000) =>
      (limit: number) =>
        alertStoresOf(store).outbox.claim({ now: Date.now(), limit, holder, claimMs });

    it("claims due alerts oldest first; claimers at once never get the same alert", async () => {
      const store = await fresh();
      await queue(store, 30);
      const claims = await Promise.all(
        ["a", "b", "c", "d", "e"].map((holder) => claimer(store, holder)(4)),
      );
      const ids = claims.flat().map((alert) => alert.id);
      expect(new Set(ids).size).toBe(ids.length);
      expect(ids.length).toBeGreaterThan(0);
      for (const claim of claims)
        expect(claim.map((a) => a.id)).toEqual([...claim.map((a) => a.id)].sort((x, y) => x - y));
      // The rest, and nothing claimed twice.
      const rest = await claimer(store, "f")(100);
      expect(new Set([...ids, ...rest.map((a) => a.id)]).size).toBe(30);
      expect(await claimer(store, "g")(100)).toEqual([]);
      // A plain read still shows them all (claimed or not).
      expect(await alertStoresOf(store).outbox.due(Date.now(), 100)).toHaveLength(30);
    });

    it("an expired claim is claimable again; retried ones are free at once; delivered ones are gone", async () => {
      const store = await fresh();
      await queue(store, 3);
      const [one, two, three] = await claimer(store, "dead", 400)(10);
      if (!one || !two || !three) throw new Error("three alerts expected");
      expect(await claimer(store, "live")(10)).toEqual([]);
      // "dead" delivered one before dying and handed one back; the third's claim must expire.
      await alertStoresOf(store).outbox.delivered([one], 1);
      await alertStoresOf(store).outbox.retryLater([two], 0, "not tried", false);
      expect((await claimer(store, "live")(10)).map((a) => a.id)).toEqual([two.id]);
      await new Promise((resolve) => setTimeout(resolve, 500));
      expect((await claimer(store, "live")(10)).map((a) => a.id)).toEqual([three.id]);
    });

    it("a claimer known to be dead leaves its claims free at once", async () => {
      const store = await fresh();
      await queue(store, 2);
      expect(await claimer(store, "dead")(10)).toHaveLength(2);
      expect(await claimer(store, "live")(10)).toEqual([]);
      const taken = await alertStoresOf(store).outbox.claim({
        now: Date.now(),
        limit: 10,
        holder: "live",
        claimMs: 60_000,
        isDead: (holder) => holder === "dead",
      });
      expect(taken).toHaveLength(2);
      // "live" is not dead: its fresh claims hold against a third.
      expect(
        await alertStoresOf(store).outbox.claim({
          now: Date.now(),
          limit: 10,
          holder: "third",
          claimMs: 60_000,
          isDead: (holder) => holder === "dead",
        }),
      ).toEqual([]);
    });

    it("a subscription's rules are stored; filters leave mints out at enqueue, quiet hours and digests hold the due time", async () => {
      const { subscriptions, outbox } = await fresh();
      const plain = (await subscribe(subscriptions, "plain")).subscription;
      const ruled = (await subscribe(subscriptions, "ruled")).subscription;
      expect(plain.rules).toEqual({});
      await subscriptions.setRules(ruled.id, {
        keywords: { exclude: ["airdrop"] },
        minters: { exclude: ["BEHAVIOR_NEWBIE"] },
        digestMinutes: 30,
      });
      const stored = await subscriptions.find("telegram", "ruled");
      expect(stored?.rules).toEqual({
        keywords: { exclude: ["airdrop"] },
        minters: { exclude: ["BEHAVIOR_NEWBIE"] },
        digestMinutes: 30,
      });
      const now = Date.UTC(2026, 0, 10, 10, 3);
      const result = await outbox.record({
        contracts: [
          aContract(1),
          { ...aContract(2), name: "Free Airdrop Club" },
          { ...aContract(3), minterBehavior: "BEHAVIOR_NEWBIE" },
        ],
        subscriptions: "active",
        chain: "ethereum",
        cursorKey: "cursor",
        cursor: "2026-01-10T10:03:00.000Z",
        note: null,
        now,
      });
      // plain: 3; ruled: only #1, held until 10:30.
      expect(result.enqueued).toBe(4);
      expect((await outbox.due(now, 10)).map((a) => a.chatId)).toEqual(["plain", "plain", "plain"]);
      expect((await outbox.due(now, 10)).every((a) => !a.held)).toBe(true);
      const later = await outbox.due(Date.UTC(2026, 0, 10, 10, 30), 10);
      const held = later.filter((a) => a.chatId === "ruled");
      expect(held).toHaveLength(1);
      expect(held[0]).toMatchObject({ held: true, contract: { name: "Collection 1" } });
      // The seen contracts since a time, for /alerts test.
      expect((await outbox.seenSince("ethereum", now - 1, 10)).map((c) => c.name)).toEqual([
        "Collection 1",
        "Free Airdrop Club",
        "Collection 3",
      ]);
      expect(await outbox.seenSince("ethereum", now + 1, 10)).toEqual([]);
      expect(await outbox.seenSince("base", now - 1, 10)).toEqual([]);
      // No rules left: stored as none.
      await subscriptions.setRules(ruled.id, {});
      expect((await subscriptions.find("telegram", "ruled"))?.rules).toEqual({});
    });
  });
}
