import { describe, expect, it } from "vitest";
import type { OpenStore } from "./backends.ts";
import { useStore } from "./use-store.ts";

export function chatSettingsContract(open: OpenStore): void {
  describe("chat settings", () => {
    const fresh = useStore(open);

    it("a chat never set has no chain; set, replaced and cleared per chat and platform", async () => {
      const { chatSettings } = await fresh();
      expect(await chatSettings.get("discord", "c1")).toEqual({ chain: undefined });
      await chatSettings.setChain("discord", "c1", "base", 1);
      await chatSettings.setChain("telegram", "c1", "polygon", 2);
      expect(await chatSettings.get("discord", "c1")).toEqual({ chain: "base" });
      expect(await chatSettings.get("telegram", "c1")).toEqual({ chain: "polygon" });
      expect(await chatSettings.get("discord", "c2")).toEqual({ chain: undefined });
      await chatSettings.setChain("discord", "c1", "polygon", 3);
      expect(await chatSettings.get("discord", "c1")).toEqual({ chain: "polygon" });
      await chatSettings.setChain("discord", "c1", undefined, 4);
      expect(await chatSettings.get("discord", "c1")).toEqual({ chain: undefined });
      expect(await chatSettings.get("telegram", "c1")).toEqual({ chain: "polygon" });
    });
  });
}
