import { describe, expect, it } from "vitest";
import type { OpenStore } from "./backends.ts";
import { aReport } from "./samples.ts";
import { useStore } from "./use-store.ts";

export function reportsContract(open: OpenStore): void {
  describe("reports and linked wallets", () => {
    const fresh = useStore(open);

    it("records a report once per person and target: the double press gets the first back", async () => {
      const { reports } = await fresh();
      const [a, b] = await Promise.all([
        reports.create(aReport(), 0),
        reports.create(aReport({ wallet: aReport().wallet.toUpperCase() }), 1),
      ]);
      expect([a.created, b.created].sort()).toEqual([false, true]);
      expect(a.report.id).toBe(b.report.id);
      expect(a.report).toMatchObject({ status: "sending", attempts: 0, createdAt: 0 });
      expect(await reports.findSame({ ...aReport() })).toMatchObject({ id: a.report.id });
      // Another kind, token or person is another report.
      expect((await reports.create(aReport({ kind: "not_spam" }), 2)).created).toBe(true);
      expect((await reports.create(aReport({ tokenId: "" }), 2)).created).toBe(true);
      expect((await reports.create(aReport({ userId: "u2" }), 2)).created).toBe(true);
      expect(await reports.countSince("telegram", "u1", 2)).toBe(2);
      expect(await reports.countSince("telegram", "u1", 0)).toBe(3);
    });

    it("a report names its chain (ethereum unless given); the same report on another chain is another", async () => {
      const { reports } = await fresh();
      const first = await reports.create(aReport(), 0);
      expect(first.report.chain).toBe("ethereum");
      const polygon = await reports.create(aReport({ chain: "polygon" }), 1);
      expect(polygon).toMatchObject({ created: true, report: { chain: "polygon" } });
      expect((await reports.create(aReport({ chain: "polygon" }), 2)).created).toBe(false);
      expect(await reports.findSame({ ...aReport(), chain: "polygon" })).toMatchObject({
        id: polygon.report.id,
      });
      expect(await reports.findSame({ ...aReport(), chain: "base" })).toBeUndefined();
      await reports.begin(polygon.report.id, 3);
      await reports.queue(polygon.report.id, "HTTP 503", 4, 3);
      expect((await reports.due(10, 10)).map((r) => [r.id, r.chain])).toEqual([
        [polygon.report.id, "polygon"],
      ]);
    });

    it("an attempt is begun, then finished or queued; queued ones come due", async () => {
      const { reports } = await fresh();
      const { report } = await reports.create(aReport(), 0);
      const begun = await reports.begin(report.id, 10);
      expect(begun).toMatchObject({ status: "sending", attempts: 1, updatedAt: 10 });
      await reports.queue(report.id, "unavailable 503", 1_000, 20);
      expect(await reports.due(999, 10)).toEqual([]);
      expect(await reports.due(1_000, 10)).toMatchObject([
        { id: report.id, status: "queued", upstream: "unavailable 503", nextAttemptAt: 1_000 },
      ]);
      expect((await reports.begin(report.id, 1_000)).attempts).toBe(2);
      await reports.finish(report.id, "sent", "{}", 1_001);
      expect(await reports.due(5_000, 10)).toEqual([]);
      expect((await reports.forChat("telegram", "chat-1"))[0]).toMatchObject({
        status: "sent",
        upstream: "{}",
        nextAttemptAt: null,
        updatedAt: 1_001,
      });
    });

    it("what a stopped process left 'sending' is marked unknown, once", async () => {
      const { reports } = await fresh();
      const { report } = await reports.create(aReport(), 0);
      await reports.create(aReport({ tokenId: "8" }), 0);
      await reports.finish(report.id, "failed", "bad_request", 1);
      expect(await reports.markInterrupted(5, 5)).toBe(1);
      expect(await reports.markInterrupted(6, 6)).toBe(0);
      const statuses = (await reports.forChat("telegram", "chat-1")).map((r) => r.status);
      expect(statuses).toEqual(["unknown", "failed"]);
    });

    it("a report still within its call's time (another instance may be sending it) is left alone", async () => {
      const { reports } = await fresh();
      const { report } = await reports.create(aReport(), 0);
      await reports.begin(report.id, 100);
      // Sending since 100: a cutoff at 100 or before leaves it to the instance making the call.
      expect(await reports.markInterrupted(130, 100)).toBe(0);
      expect((await reports.forChat("telegram", "chat-1"))[0]?.status).toBe("sending");
      expect(await reports.markInterrupted(160, 101)).toBe(1);
      expect((await reports.forChat("telegram", "chat-1"))[0]).toMatchObject({
        status: "unknown",
        updatedAt: 160,
      });
    });

    it("counts the people who reported each contract as spam, per chat", async () => {
      const { reports } = await fresh();
      const contract = "0x3333333333333333333333333333333333333333";
      await reports.create(aReport({ userId: "u1", contract, tokenId: "" }), 1);
      await reports.create(
        aReport({
          userId: "u2",
          contract: contract.toUpperCase().replace("0X", "0x"),
          tokenId: "",
        }),
        2,
      );
      // The same person twice (a token and the collection) counts once; not-spam does not count.
      await reports.create(aReport({ userId: "u2", contract, tokenId: "5" }), 3);
      await reports.create(aReport({ userId: "u3", contract, tokenId: "", kind: "not_spam" }), 4);
      await reports.create(aReport({ userId: "u4", chatId: "chat-2", contract, tokenId: "" }), 5);
      await reports.create(
        aReport({ userId: "u5", platform: "discord", contract, tokenId: "" }),
        6,
      );
      // The same address on another chain is another contract: its reports do not count here.
      await reports.create(aReport({ userId: "u6", chain: "base", contract, tokenId: "" }), 7);
      const counted = await reports.spamReporters(
        "telegram",
        "ethereum",
        ["chat-1", "chat-2", "chat-3"],
        [contract],
      );
      expect(counted.sort((a, b) => a.chatId.localeCompare(b.chatId))).toEqual([
        { chatId: "chat-1", contract, reporters: 2 },
        { chatId: "chat-2", contract, reporters: 1 },
      ]);
      expect(await reports.spamReporters("telegram", "ethereum", [], [contract])).toEqual([]);
      expect(
        await reports.spamReporters("telegram", "base", ["chat-1", "chat-2"], [contract]),
      ).toEqual([{ chatId: "chat-1", contract, reporters: 1 }]);
    });

    it("lists a chat's reports newest first, up to a limit", async () => {
      const { reports } = await fresh();
      for (const tokenId of ["1", "2", "3"]) await reports.create(aReport({ tokenId }), 0);
      await reports.create(aReport({ chatId: "other" }), 0);
      expect((await reports.forChat("telegram", "chat-1")).map((r) => r.tokenId)).toEqual([
        "3",
        "2",
        "1",
      ]);
      expect(await reports.forChat("telegram", "chat-1", 1)).toHaveLength(1);
      expect(await reports.forChat("discord", "chat-1")).toEqual([]);
    });

    it("links one wallet per person and platform; relinking replaces it", async () => {
      const { wallets } = await fresh();
      expect(await wallets.find("telegram", "u1")).toBeUndefined();
      await wallets.link("telegram", "u1", "0xaa", "a.eth", 1);
      await wallets.link("telegram", "u1", "0xbb", "0xbb", 2);
      expect(await wallets.find("telegram", "u1")).toEqual({
        address: "0xbb",
        label: "0xbb",
        linkedAt: 2,
      });
      expect(await wallets.find("discord", "u1")).toBeUndefined();
      expect(await wallets.unlink("telegram", "u1")).toBe(true);
      expect(await wallets.unlink("telegram", "u1")).toBe(false);
    });

    it("a moved chat takes its report history along", async () => {
      const { reports, chatRows } = await fresh();
      await reports.create(aReport({ chatId: "-4001" }), 0);
      await chatRows.moveChat("telegram", "-4001", "-1004001");
      expect(await reports.forChat("telegram", "-1004001")).toHaveLength(1);
    });
  });
}
