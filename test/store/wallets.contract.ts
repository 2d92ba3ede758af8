import { describe, expect, it } from "vitest";
import type { ProvedWallet, VerifyLinkRow } from "../../src/store/types.ts";
import type { OpenStore } from "./backends.ts";
import { useStore } from "./use-store.ts";

const proved = (
  address: string,
  provedAt: number,
  more: Partial<ProvedWallet> = {},
): ProvedWallet => ({
  platform: "discord",
  userId: "u1",
  address,
  chain: "ethereum",
  label: address,
  message: `message for ${address}`,
  signature: "0xabcdef",
  provedAt,
  ...more,
});

const aLink = (more: Partial<VerifyLinkRow> = {}): VerifyLinkRow => ({
  tokenHash: "h1",
  platform: "discord",
  userId: "u1",
  chatId: "c1",
  confirm: "app:token",
  chain: "ethereum",
  createdAt: 1_000,
  expiresAt: 601_000,
  nonce: undefined,
  nonceAddress: undefined,
  usedAt: undefined,
  challenge: undefined,
  ...more,
});

const address = (i: number) => `0x${String(i).padStart(40, "0")}`;

export function walletsContract(open: OpenStore): void {
  describe("proved wallets and verify links", () => {
    const fresh = useStore(open);

    it("keeps up to 10 wallets a person, the most recently proved first; the 11th changes nothing", async () => {
      const { wallets } = await fresh();
      for (let i = 0; i < 10; i++)
        expect(await wallets.addProved(proved(address(i), 100 + i))).toBe("added");
      expect(await wallets.addProved(proved(address(10), 500))).toBe("full");
      const kept = await wallets.list("discord", "u1");
      expect(kept.map((w) => w.address)).toEqual(
        Array.from({ length: 10 }, (_, i) => address(9 - i)),
      );
      expect(kept[0]).toEqual({
        address: address(9),
        chain: "ethereum",
        label: address(9),
        provedAt: 109,
        linkedAt: 109,
        chains: ["ethereum"],
      });
      // Proving one of them again replaces its proof; another person is not counted.
      expect(await wallets.addProved(proved(address(0), 600, { chain: "base" }))).toBe("updated");
      expect((await wallets.list("discord", "u1"))[0]).toMatchObject({
        address: address(0),
        chain: "base",
        provedAt: 600,
      });
      expect(await wallets.addProved(proved(address(10), 500, { userId: "u2" }))).toBe("added");
      expect(await wallets.addProved(proved(address(10), 500, { platform: "telegram" }))).toBe(
        "added",
      );
    });

    it("two proofs at once never make an 11th", async () => {
      const { wallets } = await fresh();
      for (let i = 0; i < 9; i++) await wallets.addProved(proved(address(i), i));
      const results = await Promise.all(
        [20, 21, 22, 23].map((i) => wallets.addProved(proved(address(i), 100 + i))),
      );
      expect(results.filter((r) => r === "added")).toHaveLength(1);
      expect(await wallets.list("discord", "u1")).toHaveLength(10);
    });

    it("reports use the most recently proved wallet, never a not proved one; remove forgets one or all", async () => {
      const { wallets } = await fresh();
      await wallets.link("discord", "u1", "0xAA", "a.eth", 1_000);
      expect(await wallets.reportWallet("discord", "u1")).toBeUndefined();
      expect(await wallets.list("discord", "u1")).toEqual([
        {
          address: "0xaa",
          chain: "",
          label: "a.eth",
          chains: [],
          provedAt: undefined,
          linkedAt: 1_000,
        },
      ]);
      await wallets.addProved(proved("0xbb", 10));
      await wallets.addProved(proved("0xcc", 20));
      expect((await wallets.reportWallet("discord", "u1"))?.address).toBe("0xcc");
      expect((await wallets.list("discord", "u1")).map((w) => w.address)).toEqual([
        "0xcc",
        "0xbb",
        "0xaa",
      ]);
      expect(await wallets.remove("discord", "u1", "0xCC")).toBe(1);
      expect(await wallets.remove("discord", "u1", "0xcc")).toBe(0);
      expect((await wallets.reportWallet("discord", "u1"))?.address).toBe("0xbb");
      expect(await wallets.remove("discord", "u1", "all")).toBe(2);
      expect(await wallets.list("discord", "u1")).toEqual([]);
    });

    it("a link is used once, with its pending nonce, before it expires; the confirmation goes with it", async () => {
      const { verifyLinks, wallets } = await fresh();
      await verifyLinks.create(aLink());
      expect(await verifyLinks.find("h1")).toEqual(aLink());
      expect(await verifyLinks.find("h2")).toBeUndefined();
      // No nonce yet: nothing to complete.
      expect(await verifyLinks.complete("h1", "n1", proved("0xaa", 2_000), 2_000)).toBe("used");
      expect(await verifyLinks.setNonce("h1", "n1", "0xaa", 2_000, "first")).toBe(true);
      expect(await verifyLinks.setNonce("h1", "n2", "0xaa", 2_000, "second")).toBe(true);
      // The older nonce was replaced.
      expect(await verifyLinks.complete("h1", "n1", proved("0xaa", 2_000), 2_000)).toBe("used");
      expect(await wallets.list("discord", "u1")).toEqual([]);
      // Not after expiry.
      expect(await verifyLinks.complete("h1", "n2", proved("0xaa", 601_000), 601_000)).toBe("used");
      const [a, b] = await Promise.all([
        verifyLinks.complete("h1", "n2", proved("0xaa", 3_000), 3_000),
        verifyLinks.complete("h1", "n2", proved("0xbb", 3_000), 3_000),
      ]);
      expect([a, b]).toContainEqual({ kept: "added", movedFrom: [] });
      expect([a, b]).toContain("used");
      expect(await wallets.list("discord", "u1")).toHaveLength(1);
      expect(await verifyLinks.find("h1")).toMatchObject({
        usedAt: 3_000,
        confirm: undefined,
        nonce: "n2",
        nonceAddress: "0xaa",
        challenge: "second",
      });
      expect(await verifyLinks.setNonce("h1", "n3", "0xaa", 3_000, "third")).toBe(false);
    });

    it("a person with 10 wallets keeps the link when the proof cannot be kept", async () => {
      const { verifyLinks, wallets } = await fresh();
      for (let i = 0; i < 10; i++) await wallets.addProved(proved(address(i), i));
      await verifyLinks.create(aLink({ nonce: "n1", nonceAddress: "0xaa" }));
      expect(await verifyLinks.complete("h1", "n1", proved("0xaa", 2_000), 2_000)).toBe("full");
      expect((await verifyLinks.find("h1"))?.usedAt).toBeUndefined();
    });

    it("a wallet belongs to one person per platform: another account's proof moves it, atomically", async () => {
      const { verifyLinks, wallets } = await fresh();
      // u1 proves 0xaa on Discord; u3 has it on Telegram (the same person's other account may).
      await wallets.addProved(proved("0xaa", 1_000));
      await wallets.addProved(proved("0xaa", 1_100, { platform: "telegram", userId: "u3" }));
      // u4 merely typed it before proofs (on their word: no claim, kept as it was).
      await wallets.link("discord", "u4", "0xAA", "aa.eth", 900);
      await verifyLinks.create(aLink({ userId: "u2" }));
      expect(await verifyLinks.setNonce("h1", "n1", "0xaa", 2_000, "the message")).toBe(true);
      expect(
        await verifyLinks.complete("h1", "n1", proved("0xaa", 2_000, { userId: "u2" }), 2_000),
      ).toEqual({ kept: "added", movedFrom: ["u1"] });
      expect(await wallets.list("discord", "u1")).toEqual([]);
      expect(await wallets.reportWallet("discord", "u1")).toBeUndefined();
      expect(await wallets.list("discord", "u2")).toEqual([
        expect.objectContaining({ address: "0xaa", provedAt: 2_000 }),
      ]);
      expect(await wallets.list("telegram", "u3")).toEqual([
        expect.objectContaining({ address: "0xaa", provedAt: 1_100 }),
      ]);
      expect(await wallets.list("discord", "u4")).toEqual([
        expect.objectContaining({ address: "0xaa", provedAt: undefined }),
      ]);
      // Proving it again oneself moves nothing; u1 proving it back takes it back.
      expect(await wallets.addProved(proved("0xaa", 2_500, { userId: "u2" }))).toBe("updated");
      expect(await wallets.addProved(proved("0xaa", 3_000))).toBe("added");
      expect(await wallets.list("discord", "u2")).toEqual([]);
    });

    it("two accounts proving one wallet at once: one of them holds it, never both", async () => {
      const { wallets } = await fresh();
      await Promise.all(
        ["u1", "u2", "u3", "u4"].map((userId, i) =>
          wallets.addProved(proved("0xaa", 1_000 + i, { userId })),
        ),
      );
      const holders = [];
      for (const userId of ["u1", "u2", "u3", "u4"])
        if ((await wallets.list("discord", userId)).length > 0) holders.push(userId);
      expect(holders).toHaveLength(1);
    });

    it("a person with 10 wallets moves nothing: the other account keeps the wallet", async () => {
      const { verifyLinks, wallets } = await fresh();
      for (let i = 0; i < 10; i++) await wallets.addProved(proved(address(i), i, { userId: "u2" }));
      await wallets.addProved(proved("0xaa", 1_000));
      await verifyLinks.create(aLink({ userId: "u2", nonce: "n1", nonceAddress: "0xaa" }));
      expect(
        await verifyLinks.complete("h1", "n1", proved("0xaa", 2_000, { userId: "u2" }), 2_000),
      ).toBe("full");
      expect(await wallets.list("discord", "u1")).toHaveLength(1);
    });

    it("prune drops expired links' confirmations at once, and the links a day later", async () => {
      const { verifyLinks } = await fresh();
      await verifyLinks.create(aLink({ tokenHash: "old", expiresAt: 10 }));
      await verifyLinks.create(aLink({ tokenHash: "expired", expiresAt: 5_000 }));
      await verifyLinks.create(aLink({ tokenHash: "open", expiresAt: 9_000 }));
      expect(await verifyLinks.prune(6_000, 100)).toBe(1);
      expect(await verifyLinks.find("old")).toBeUndefined();
      expect((await verifyLinks.find("expired"))?.confirm).toBeUndefined();
      expect((await verifyLinks.find("open"))?.confirm).toBe("app:token");
    });

    it("keeps each wallet once with every chain it was proved on, and how (issue 37)", async () => {
      const { wallets } = await fresh();
      await wallets.addProved(proved(address(1), 100, { kind: "eoa" }));
      await wallets.addProved(proved(address(1), 200, { kind: "eoa", chain: "base" }));
      await wallets.addProved(proved(address(1), 300, { kind: "eoa", chain: "ethereum" }));
      const [one, ...rest] = await wallets.list("discord", "u1");
      expect(rest).toEqual([]);
      expect(one).toMatchObject({ chain: "ethereum", chains: ["base", "ethereum"], kind: "eoa" });
      // Proved before the kind was kept: told later, once.
      await wallets.addProved(proved(address(2), 400, { chain: "base" }));
      expect((await wallets.list("discord", "u1"))[0]).toMatchObject({
        kind: undefined,
        chains: ["base"],
      });
      expect(await wallets.proof("discord", "u1", address(2))).toEqual({
        message: `message for ${address(2)}`,
        signature: "0xabcdef",
        chain: "base",
      });
      await wallets.setKind("discord", "u1", address(2), "contract");
      await wallets.setKind("discord", "u1", address(2), "eoa");
      expect((await wallets.list("discord", "u1"))[0]?.kind).toBe("contract");
      // Another account proving it starts its own list of chains.
      await wallets.addProved(
        proved(address(1), 500, { kind: "eoa", userId: "u2", chain: "base" }),
      );
      expect((await wallets.list("discord", "u2"))[0]?.chains).toEqual(["base"]);
    });

    it("keeps delegations per hot wallet and chain, and counts a cold wallet for one account", async () => {
      const store = await fresh();
      const { wallets, delegations } = store;
      const [hotA, hotB, hotC, cold, apes] = [1, 2, 3, 9, 7].map(address) as string[];
      await wallets.addProved(proved(hotA as string, 100, { kind: "eoa", userId: "a" }));
      await wallets.addProved(proved(hotB as string, 100, { kind: "eoa", userId: "b" }));
      await wallets.addProved(proved(hotC as string, 100, { kind: "eoa", userId: "c" }));
      await delegations.put(
        hotA as string,
        "ethereum",
        [{ cold: cold as string, contract: "" }],
        1_000,
      );
      await delegations.put(
        hotB as string,
        "ethereum",
        [{ cold: cold as string, contract: apes as string }],
        2_000,
      );
      // Read again later: the first sighting is kept.
      await delegations.put(
        hotA as string,
        "ethereum",
        [{ cold: cold as string, contract: "" }],
        3_000,
      );
      expect(await delegations.readAt([hotA as string, hotB as string])).toEqual(
        new Map([
          [`${hotA} ethereum`, 3_000],
          [`${hotB} ethereum`, 2_000],
        ]),
      );
      const people = await delegations.ofPeople("discord", ["a", "b", "c"]);
      expect(people.get("a")).toEqual([
        { hot: hotA, cold, contract: "", chain: "ethereum", firstSeen: 1_000, counts: true },
      ]);
      expect(people.get("b")).toMatchObject([{ counts: false, heldElsewhere: "earlier" }]);
      expect(people.has("c")).toBe(false);
      // The cold wallet proved by c itself: it is c's, no one's by delegation.
      await wallets.addProved(proved(cold as string, 200, { kind: "eoa", userId: "c" }));
      const after = await delegations.ofPeople("discord", ["a"]);
      expect(after.get("a")).toMatchObject([{ counts: false, heldElsewhere: "proved" }]);
      // Revoked: the next read finds none, and the row goes.
      await delegations.put(hotA as string, "ethereum", [], 4_000);
      expect((await delegations.ofPeople("discord", ["a"])).get("a")).toBeUndefined();
    });
  });
}
