import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { formatNativeNumber } from "../commands/shared/stats.ts";
import { formatCount, formatDecimal, fullAddress, short } from "../src/core/format.ts";
import { addresses, replyHelpers } from "./command-helpers.ts";
import { type RuntimeSetup, startRuntime } from "./helpers.ts";

/** Financial commands: /stats, /walletstats, /profile, /segment. */

let t: RuntimeSetup;
const { field, rows, button, sent } = replyHelpers(() => t);

describe("against the simulator", () => {
  beforeAll(async () => {
    t = await startRuntime();
  });
  afterAll(async () => {
    await t.close();
  });

  describe("/stats and /walletstats", () => {
    it("show a collection's owner stats", async () => {
      const f = t.sim.fixtures;
      const stats = await t.api.audiences.financialStatsByCollection(f.collection);
      const reply = await t.say(`/stats ${f.collection}`);
      expect(field(reply, "Wallets")).toBe(formatCount(stats.walletsCount));
      expect(field(reply, "Wallet age")).toBe(
        `${formatCount(stats.walletAgeMin)} to ${formatCount(stats.walletAgeMax)} days`,
      );
      expect(field(reply, "Avg purchase price")).toBe(
        formatNativeNumber(stats.nftsPurchasesPriceAvg),
      );
      expect((await t.say(`/stats ${f.unknownAddress}`)).text).toContain("No collection");
      expect((await t.say("/stats")).text).toContain("Missing collection");
    });

    it("show a wallet list's stats with filters sent in the body", async () => {
      const f = t.sim.fixtures;
      const { wallets } = await t.api.audiences.segmentedAudience({
        collections: [{ contractAddress: f.collection }],
        limit: 3,
      });
      const spenders = wallets.map((w) => w.walletAddress);
      const filters = { collectionsOwnedCountGte: "1", daysSinceLastPurchaseLte: "36500" };
      const { result: reply, requests } = await sent(() =>
        t.say(
          `/walletstats min_collections:1 ${[f.wallet, ...spenders].join(", ")} max_days_since_purchase:36500`,
        ),
      );
      expect(requests[0]?.body).toEqual({
        walletAddresses: [f.wallet, ...spenders].map(fullAddress),
        ...filters,
      });
      const stats = await t.api.audiences.financialStatsByWallets([f.wallet, ...spenders], filters);
      // The fixture wallet never bought, so the purchase filter leaves the spenders only.
      expect(stats.walletsCount).toBe(String(spenders.length));
      expect(reply.title).toBe("Financial stats of 4 wallets");
      expect(field(reply, "Wallets")).toBe(formatCount(stats.walletsCount));
      expect(field(reply, "Avg purchase volume")).toBe(
        formatNativeNumber(stats.nftsPurchasesVolumeAvg),
      );
      expect(reply.footer).toContain("collections owned ≥ 1, last purchase ≤ 36,500 days ago");

      const none = await t.say(`/walletstats ${f.wallet} min_volume:100000000`);
      expect(none.text).toBe("No wallet of the list matches these filters.");
      expect(none.fields).toBeUndefined();
    });

    it("refuse bad filters and too many wallets", async () => {
      const f = t.sim.fixtures;
      const { result, requests } = await sent(async () => [
        await t.say(`/walletstats ${f.wallet} min_volume:abc`),
        await t.say(`/walletstats ${f.wallet} min_collections:1.5`),
        await t.say(`/walletstats ${addresses(501).join(",")}`),
      ]);
      expect(result[0]?.text).toContain('"abc" is not a valid minimum purchase volume');
      expect(result[1]?.text).toContain("not a valid minimum number of collections owned");
      expect(result[2]?.text).toContain("at most 500");
      expect(requests).toHaveLength(0);
    });
  });

  describe("/profile", () => {
    it("labels each figure with its unit, in plain words", async () => {
      const f = t.sim.fixtures;
      const reply = await t.say(`/profile ${f.collection}`);
      const { financialProfile: p } = (await t.api.audiences.financialProfileByCollection(
        f.collection,
      )) as { financialProfile: Record<string, Record<string, string>> };
      expect(reply.text).toBe(
        "How this collection's owners spend and hold NFTs. Amounts are in ETH; averages are per wallet.",
      );
      expect(field(reply, "Wallets")).toBe(formatCount(String(p.walletsCount)));
      expect(field(reply, "Total spent")).toMatch(/^[\d,]+(\.\d+)? ETH$/);
      expect(field(reply, "Avg purchase price")).toMatch(/^[\d,]+(\.\d+)? ETH$/);
      expect(field(reply, "Avg purchases")).toMatch(/^[\d,]+(\.\d+)?$/);
      expect(field(reply, "Avg holding time")).toMatch(/^[\d,]+(\.\d+)? days$/);
      expect(field(reply, "Wallet age")).toBe(
        `${formatCount(p.walletAgeDays?.min)} to ${formatCount(p.walletAgeDays?.max)} days (average ${formatDecimal(String(p.walletAgeDays?.avg), 2)} days)`,
      );
      expect(field(reply, "Spend per wallet")?.split("\n")[0]).toMatch(
        /^nothing: [\d,]+ wallets? \(\d+(\.\d)?%\)$/,
      );
      expect(field(reply, "Spend per wallet")?.split("\n")[1]).toMatch(
        /^under 1 ETH: [\d,]+ wallets? \(/,
      );
      expect(field(reply, "Spend per wallet")).toMatch(/\n100 ETH or more: [\d,]+ wallets? \(/);
      // The collection's own address is the footer's, not a field's.
      expect(reply.fields?.map((x) => x.value).join("\n")).not.toContain(fullAddress(f.collection));
      for (const text of [
        reply.text,
        t.runtime.find("profile")?.help,
        t.runtime.find("profile")?.description,
      ])
        expect(text).not.toMatch(/\b(spec|schema|endpoint|API)\b|shape/i);
    });

    it("names figures it does not know by their words, with the unit their name gives", async () => {
      t.sim.script([
        {
          status: 200,
          body: JSON.stringify({
            resalesVolumeNative: "12.5",
            holders_count: "12345",
            lastRefreshTimestamp: "2026-11-20T10:00:00Z",
            whalePercentage: 7.25,
          }),
        },
      ]);
      // A collection no other test asks for: the answer cache has nothing for it.
      const reply = await t.say(`/profile ${t.sim.fixtures.otherBehaviorCollection}`);
      expect(reply.fields).toEqual([
        { name: "Resales volume", value: "12.5 ETH" },
        { name: "Holders", value: "12,345" },
        { name: "Last refresh", value: "2026-11-20" },
        { name: "Whale", value: "7.3%" },
      ]);
    });

    it("bounds a large answer of unknown shape", async () => {
      const big = Object.fromEntries(
        Array.from({ length: 35 }, (_, i) => [`field${i}`, "v".repeat(900)]),
      );
      t.sim.script([{ status: 200, body: JSON.stringify(big) }]);
      const reply = await t.say(`/profile ${t.sim.fixtures.erc1155Collection}`);
      expect(reply.fields).toHaveLength(20);
      expect(reply.fields?.every((x) => [...x.value].length <= 200)).toBe(true);
      expect(reply.footer).toContain("15 more figures not shown");
    });

    it("answers not found", async () => {
      expect((await t.say(`/profile ${t.sim.fixtures.unknownAddress}`)).text).toContain(
        "No collection",
      );
    });
  });

  describe("/segment", () => {
    it("pages the segment and exports all of it as CSV", async () => {
      const f = t.sim.fixtures;
      const line = `/segment ${f.collection} ${f.erc1155Collection} condition:any`;
      const { result: first, requests } = await sent(() => t.say(line));
      expect(requests[0]?.body).toMatchObject({
        collections: [
          { contractAddress: fullAddress(f.collection) },
          { contractAddress: fullAddress(f.erc1155Collection) },
        ],
        collectionsCondition: "CONDITION_ANY",
        limit: 11,
        offset: 0,
      });
      expect(rows(first)).toHaveLength(10);
      const second = await t.press(button(first, "Next"));
      expect(rows(second)[0]?.[0]).toBe("11");
      expect(rows(second)).not.toEqual(rows(first));

      let size = 0;
      for (let offset = 0; ; offset += 500) {
        const { wallets } = await t.api.audiences.segmentedAudience({
          collections: [
            { contractAddress: f.collection },
            { contractAddress: f.erc1155Collection },
          ],
          collectionsCondition: "CONDITION_ANY",
          limit: 500,
          offset,
        });
        size += wallets.length;
        if (wallets.length < 500) break;
      }
      const exported = await t.press(button(first, "Export CSV"));
      const file = exported.files?.[0];
      expect(file?.contentType).toBe("text/csv");
      expect(file?.name).toMatch(/^segment-.*\.csv$/);
      const lines = new TextDecoder().decode(file?.data).trimEnd().split("\r\n");
      expect(lines[0]).toBe("walletAddress,totalSpend");
      expect(lines.length - 1).toBe(size);
      expect(lines.slice(1).every((l) => /^0x[0-9a-fA-F]{40},\d+(\.\d+)?$/.test(l))).toBe(true);
      expect(exported.text).toContain(`All ${formatCount(String(size))} wallets`);
    });

    it("guards a hostile wallet name in the CSV; amounts, negative ones too, stay numbers", async () => {
      const f = t.sim.fixtures;
      const first = await t.say(`/segment ${f.collection}`);
      t.sim.script([
        {
          status: 200,
          body: JSON.stringify({
            wallets: [
              { walletAddress: '=HYPERLINK("http://evil.example","x")', totalSpend: "2.5" },
              { walletAddress: "@evil.eth", totalSpend: "-1.5" },
              { walletAddress: f.wallet, totalSpend: "1" },
            ],
          }),
        },
      ]);
      const exported = await t.press(button(first, "Export CSV"));
      const lines = new TextDecoder().decode(exported.files?.[0]?.data).trimEnd().split("\r\n");
      expect(lines.slice(1)).toEqual([
        `"'=HYPERLINK(""http://evil.example"",""x"")",2.5`,
        "'@evil.eth,-1.5",
        `${fullAddress(f.wallet)},1`,
      ]);
    });

    it("sends min_owned for each collection and the filters", async () => {
      const f = t.sim.fixtures;
      const { result: reply, requests } = await sent(() =>
        t.say(
          `/segment ${f.collection} ${f.erc1155Collection} 1 all min_volume:0.5 min_collections:2`,
        ),
      );
      expect(requests[0]?.body).toMatchObject({
        collections: [{ nftsOwnedCountGte: "1" }, { nftsOwnedCountGte: "1" }],
        collectionsCondition: "CONDITION_ALL",
        nftsPurchasesVolumeGte: "0.5",
        collectionsOwnedCountGte: 2,
      });
      expect(reply.text).toContain("purchase volume ≥ 0.5 ETH");
    });

    it("says so when nobody matches", async () => {
      const reply = await t.say(`/segment ${t.sim.fixtures.collection} min_volume:100000000`);
      expect(reply.text).toContain("No wallet matches this segment.");
      expect(reply.buttons ?? []).toHaveLength(0);
    });

    it("answers not found and bad input", async () => {
      const f = t.sim.fixtures;
      expect((await t.say(`/segment ${f.unknownAddress}`)).text).toContain(
        `No collection ${short(f.unknownAddress)}`,
      );
      expect((await t.say(`/segment ${f.collection} ${f.collection}`)).text).toContain("the same");
      expect((await t.say(`/segment ${f.collection} condition:maybe`)).text).toContain(
        "use one of all, any",
      );
      expect((await t.say(`/segment ${f.collection} min_owned:-1`)).text).toContain(
        "not a valid minimum nfts owned",
      );
    });
  });
});
