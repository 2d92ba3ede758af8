import { describe, expect, it } from "vitest";
import type { NewAction } from "../../src/store/types.ts";
import type { OpenStore } from "./backends.ts";
import { useStore } from "./use-store.ts";

const reply = (size: number, userId = "u1", expiresAt = Date.now() + 60_000): NewAction[] =>
  Array.from({ length: size }, (_, i) => ({
    platform: "telegram",
    chatId: "c1",
    userId,
    action: { command: "c", action: "a", payload: { i } },
    expiresAt,
  }));

export function actionsContract(open: OpenStore): void {
  describe("button actions", () => {
    const fresh = useStore(open);

    it("stores a reply's actions and gives each back by its id; a forged id finds nothing", async () => {
      const { actions } = await fresh();
      const ids = await actions.putMany(reply(3));
      expect(new Set(ids).size).toBe(3);
      for (const id of ids) expect(id).toMatch(/^[A-Za-z0-9_-]{22}$/);
      const second = await actions.get(ids[1] ?? "");
      expect(second).toMatchObject({
        id: ids[1],
        platform: "telegram",
        chatId: "c1",
        userId: "u1",
        action: { command: "c", action: "a", payload: { i: 1 } },
      });
      expect(await actions.get("AAAAAAAAAAAAAAAAAAAAAA")).toBeUndefined();
      expect(await actions.get("not an id")).toBeUndefined();
      // The same id with one character of its secret changed.
      const id = ids[0] ?? "";
      const forged = `${id.slice(0, 12)}${id[12] === "A" ? "B" : "A"}${id.slice(13)}`;
      expect(await actions.get(forged)).toBeUndefined();
    });

    it("gives a payload back exactly as stored: nulls, numbers, booleans, long strings", async () => {
      // Buttons are pressed up to 7 days after they were stored, by the next release: what the
      // actions' schemas decode is this JSON as it was written (see test/button-shapes.test.ts).
      const { actions } = await fresh();
      const payloads = [
        { chain: "ethereum", collection: "0xAbC", trend: null, page: 0 },
        { chain: "base", kind: "not_spam", contract: "0x1", tokenId: "9".repeat(78), wallet: null },
        { chain: "ethereum", metric: "sales", duration: "7d", limit: 25, page: 3, flag: true },
        { chain: "ethereum", chat: "-1001234567890", note: "“quoted” ✓ \u0000" },
      ];
      const ids = await actions.putMany(
        payloads.map((payload) => ({
          ...reply(1)[0]!,
          action: { command: "c", action: "a", payload },
        })),
      );
      for (const [i, id] of ids.entries())
        expect((await actions.get(id))?.action.payload).toStrictEqual(payloads[i]);
    });

    it("drops expired actions on prune, and only those", async () => {
      const { actions } = await fresh();
      const [old] = await actions.putMany(reply(1, "u1", 1_000));
      const [live] = await actions.putMany(reply(1, "u1", 3_000));
      expect(await actions.prune(2_000)).toBeGreaterThanOrEqual(1);
      expect(await actions.get(old ?? "")).toBeUndefined();
      expect(await actions.get(live ?? "")).toBeDefined();
    });

    it("keeps at most the cap per person: the oldest go, the newest and others' stay", async () => {
      const cap = 25;
      const { actions } = await fresh({ maxButtonsPerUser: cap });
      const theirs = await actions.putMany(reply(3, "u2"));
      const mine: string[][] = [];
      for (let i = 0; i < 20; i++) mine.push(await actions.putMany(reply(3)));
      let kept = 0;
      for (const ids of mine) for (const id of ids) if (await actions.get(id)) kept++;
      expect(kept).toBeLessThanOrEqual(cap);
      expect(kept).toBeGreaterThanOrEqual(Math.floor(cap * 0.9) - 3);
      for (const id of mine.at(-1) ?? []) expect(await actions.get(id)).toBeDefined();
      expect(await actions.get(mine[0]?.[0] ?? "")).toBeUndefined();
      for (const id of theirs) expect(await actions.get(id)).toBeDefined();
    });

    it("holds no more than the cap after a reply as large as the cap and a small one after it", async () => {
      // Found by the property test in runtime.test.ts: cap 25, replies of 1, 25 and 1 held 26.
      const cap = 25;
      const { actions } = await fresh({ maxButtonsPerUser: cap });
      const replies: string[][] = [];
      for (const size of [1, 25, 1, 1, 25, 3]) {
        replies.push(await actions.putMany(reply(size)));
        let kept = 0;
        for (const ids of replies) for (const id of ids) if (await actions.get(id)) kept++;
        expect(kept).toBeLessThanOrEqual(cap);
        for (const id of replies.at(-1) ?? []) expect(await actions.get(id)).toBeDefined();
      }
    });

    it("keeps all but a tenth of the cap when replies come one button at a time", async () => {
      const cap = 25;
      const { actions } = await fresh({ maxButtonsPerUser: cap });
      const ids: string[] = [];
      for (let i = 0; i < 60; i++) {
        ids.push(...(await actions.putMany(reply(1))));
        let kept = 0;
        for (const id of ids) if (await actions.get(id)) kept++;
        expect(kept).toBeLessThanOrEqual(cap);
        expect(kept).toBeGreaterThanOrEqual(Math.min(i + 1, cap - Math.floor(cap / 10)));
      }
    });

    it("a chat's buttons follow it to a new id (ChatRowsStore), others' stay", async () => {
      const { actions, chatRows } = await fresh();
      const [mine] = await actions.putMany(reply(1));
      const [theirs] = await actions.putMany(
        reply(1).map((action) => ({ ...action, chatId: "c2" })),
      );
      await chatRows.moveChat("telegram", "c1", "c9");
      expect((await actions.get(mine ?? ""))?.chatId).toBe("c9");
      expect((await actions.get(theirs ?? ""))?.chatId).toBe("c2");
    });

    it("replies stored at the same time each get their own ids", async () => {
      const { actions } = await fresh();
      const all = await Promise.all(
        Array.from({ length: 5 }, (_, n) => actions.putMany(reply(2, `u${n}`))),
      );
      expect(new Set(all.flat()).size).toBe(10);
      for (const [n, ids] of all.entries())
        expect((await actions.get(ids[0] ?? ""))?.userId).toBe(`u${n}`);
    });
  });
}
