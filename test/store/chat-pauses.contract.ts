import { describe, expect, it } from "vitest";
import type { OpenStore } from "./backends.ts";
import { subscribe } from "./samples.ts";
import { useStore } from "./use-store.ts";

/**
 * The pause is the chat's (issue 34): one pause per chat, the first time and reason kept, seen
 * by every feature's rows of that chat and by no other chat's; lifted in one step.
 */
export function chatPausesContract(open: OpenStore): void {
  describe("chat pauses", () => {
    const fresh = useStore(open);

    it("pauses a chat once (the first reason kept), shows it on each feature's rows, resumes", async () => {
      const { chatPauses, subscriptions, watches, digests } = await fresh();
      const mine = (await subscribe(subscriptions, "c1", "all", "telegram")).subscription;
      await subscribe(subscriptions, "c1", "all", "discord");
      const watch = await watches.add(
        {
          platform: "telegram",
          chatId: "c1",
          chain: "ethereum",
          kind: "wallet",
          target: `0x${"1".repeat(40)}`,
          label: "w",
          ownersPercent: null,
          whalesPoints: null,
          createdBy: "telegram:u1",
          createdAt: 1,
        },
        10,
      );
      if (watch.kind === "full") throw new Error("full");
      expect(await chatPauses.get("telegram", "c1")).toBeUndefined();

      // The alert delivery pauses through the subscription: the chat is what pauses.
      await subscriptions.pause(mine.id, "Telegram: Forbidden: bot was kicked", 5_000);
      expect(await chatPauses.pause("telegram", "c1", "a later refusal", 6_000)).toBe(false);
      expect(await chatPauses.get("telegram", "c1")).toEqual({
        platform: "telegram",
        chatId: "c1",
        pausedAt: 5_000,
        reason: "Telegram: Forbidden: bot was kicked",
      });
      const shown = { pausedAt: 5_000, pauseReason: "Telegram: Forbidden: bot was kicked" };
      expect((await watches.forChat("telegram", "c1"))[0]).toMatchObject(shown);
      expect((await watches.all())[0]).toMatchObject(shown);
      expect(await subscriptions.find("telegram", "c1")).toMatchObject(shown);
      // Another platform's chat of the same id is not paused, nor is it in active().
      expect((await subscriptions.find("discord", "c1"))?.pausedAt).toBeNull();
      expect((await subscriptions.active()).map((s) => s.platform)).toEqual(["discord"]);
      await digests.pauseChat("discord", "c2", "Discord: Unknown Channel", 7_000);
      expect(await chatPauses.get("discord", "c2")).toMatchObject({ pausedAt: 7_000 });
      expect((await subscriptions.find("discord", "c1"))?.pausedAt).toBeNull();

      expect(await chatPauses.resume("telegram", "c1")).toBe(true);
      expect(await chatPauses.resume("telegram", "c1")).toBe(false);
      expect((await watches.forChat("telegram", "c1"))[0]?.pausedAt).toBeNull();
      expect((await subscriptions.active()).map((s) => s.platform).sort()).toEqual([
        "discord",
        "telegram",
      ]);
    });

    it("a long reason is cut; subscribing again lifts the chat's pause", async () => {
      const { chatPauses, subscriptions } = await fresh();
      await subscribe(subscriptions, "c1", "all", "telegram");
      expect(await chatPauses.pause("telegram", "c1", "x".repeat(2_000), 1)).toBe(true);
      expect((await chatPauses.get("telegram", "c1"))?.reason).toHaveLength(500);
      await subscribe(subscriptions, "c1", "erc721", "telegram");
      expect(await chatPauses.get("telegram", "c1")).toBeUndefined();
    });
  });
}
