import { describe, expect, it } from "vitest";
import { chatMover } from "../../src/store/move-chat.ts";
import type { OpenStore } from "./backends.ts";
import { useStore } from "./use-store.ts";

/**
 * The outbound module's waits (issue 35): one per chat and stream, replaced by the next failure,
 * cleared by a success, kept apart per platform and stream, and carried along when the chat moves.
 */
export function sendWaitsContract(open: OpenStore): void {
  describe("send waits", () => {
    const fresh = useStore(open);

    it("keeps one wait per chat and stream, replaced, cleared, apart per platform and stream", async () => {
      const { sendWaits } = await fresh();
      expect(await sendWaits.all("watches")).toEqual([]);
      const wait = {
        stream: "watches",
        platform: "telegram",
        chatId: "-100",
        attempts: 1,
        until: 1_700_000_030_000,
        reason: "try again",
      };
      await sendWaits.set(wait);
      await sendWaits.set({ ...wait, platform: "discord" });
      await sendWaits.set({ ...wait, stream: "other" });
      await sendWaits.set({ ...wait, attempts: 2, until: 1_700_000_090_000, reason: "again" });
      expect(await sendWaits.all("watches")).toEqual([
        { ...wait, platform: "discord" },
        { ...wait, attempts: 2, until: 1_700_000_090_000, reason: "again" },
      ]);
      expect(await sendWaits.get("watches", "telegram", "-100")).toEqual({
        ...wait,
        attempts: 2,
        until: 1_700_000_090_000,
        reason: "again",
      });
      expect(await sendWaits.get("other", "telegram", "-100")).toEqual({
        ...wait,
        stream: "other",
      });
      await sendWaits.clear("watches", "telegram", "-100");
      expect(await sendWaits.get("watches", "telegram", "-100")).toBeUndefined();
      expect(await sendWaits.all("watches")).toEqual([{ ...wait, platform: "discord" }]);
      expect(await sendWaits.all("other")).toEqual([{ ...wait, stream: "other" }]);
      // A long reason is cut, never refused.
      await sendWaits.set({ ...wait, chatId: "long", reason: "x".repeat(2_000) });
      const long = (await sendWaits.all("watches")).find((w) => w.chatId === "long");
      expect(long?.reason).toHaveLength(500);
    });

    it("follows the chat to its new id with the chat mover; a wait the new id has is kept", async () => {
      const store = await fresh();
      const { sendWaits } = store;
      const wait = {
        stream: "watches",
        platform: "telegram",
        chatId: "-1",
        attempts: 3,
        until: 5_000,
        reason: "r",
      };
      await sendWaits.set(wait);
      await sendWaits.set({ ...wait, stream: "other" });
      await sendWaits.set({ ...wait, stream: "other", chatId: "-1002", attempts: 7 });
      await chatMover(store)("telegram", "-1", "-1002");
      expect(await sendWaits.all("watches")).toEqual([{ ...wait, chatId: "-1002" }]);
      expect(await sendWaits.all("other")).toEqual([
        { ...wait, stream: "other", chatId: "-1002", attempts: 7 },
      ]);
    });
  });
}
