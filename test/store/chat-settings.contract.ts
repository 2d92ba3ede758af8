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

    it("a moved chat takes its settings along, unless the new chat has its own", async () => {
      const { chatSettings } = await fresh();
      await chatSettings.setChain("telegram", "-1", "base", 1);
      await chatSettings.moveChat("telegram", "-1", "-100");
      expect(await chatSettings.get("telegram", "-100")).toEqual({ chain: "base" });
      expect(await chatSettings.get("telegram", "-1")).toEqual({ chain: undefined });
      await chatSettings.setChain("telegram", "-2", "polygon", 2);
      await chatSettings.setChain("telegram", "-200", "ethereum", 2);
      await chatSettings.moveChat("telegram", "-2", "-200");
      expect(await chatSettings.get("telegram", "-200")).toEqual({ chain: "ethereum" });
      expect(await chatSettings.get("telegram", "-2")).toEqual({ chain: undefined });
      // Nothing to move: nothing happens.
      await chatSettings.moveChat("telegram", "-3", "-300");
      expect(await chatSettings.get("telegram", "-300")).toEqual({ chain: undefined });
    });
  });
}
