import { afterAll, afterEach, beforeAll, describe, expect, it } from "vitest";
import { shareOf } from "../commands/common.ts";
import { collectionName, formatChange, formatCount, short } from "../src/core/format.ts";
import { replyHelpers } from "./command-helpers.ts";
import { type RuntimeSetup, startRuntime } from "./helpers.ts";

/** Collection commands: /audience, /top, /nft, /contracts, /owners, /common. */

let t: RuntimeSetup;
const { field, rows, button, sent } = replyHelpers(() => t);

describe("each test on its own runtime", () => {
  afterEach(async () => {
    await t?.close();
  });

  describe("/audience", () => {
    it("shows every category with its share and signed 30-day change, unknown ones by their words", async () => {
      t = await startRuntime();
      const reply = await t.say(`/audience ${t.sim.fixtures.otherBehaviorCollection}`);
      const rows = reply.table?.rows ?? [];
      expect(rows.map((row) => row[0])).toContain("Other");
      const total = rows.reduce((sum, row) => sum + Number((row[2] ?? "0").replace("%", "")), 0);
      expect(total).toBeGreaterThan(99);
      expect(total).toBeLessThan(101);
      for (const row of rows) expect(row[3]).toMatch(/^([+-][\d,]+|0)$/);
    });

    it("accepts an Etherscan link and an address in <>", async () => {
      t = await startRuntime();
      const c = t.sim.fixtures.collection;
      expect((await t.say(`/audience https://etherscan.io/token/${c}`)).title).toMatch(
        /^Audience of/,
      );
      expect((await t.say(`/audience <${c.toUpperCase().replace("0X", "0x")}>`)).title).toMatch(
        /^Audience of/,
      );
    });

    it("an unknown collection is not found", async () => {
      t = await startRuntime();
      expect((await t.say(`/audience ${t.sim.fixtures.unknownAddress}`)).text).toMatch(
        /^No collection 0x[0-9a-fA-F]{4}…[0-9a-fA-F]{4} on this chain\.$/,
      );
    });
  });

  describe("/top", () => {
    it("ranks by each metric, descending, and pages on", async () => {
      t = await startRuntime();
      for (const metric of ["volume", "sales", "max_price"]) {
        const reply = await t.say(`/top ${metric} 30d 5`);
        expect(reply.table?.rows).toHaveLength(5);
      }
      const first = await t.say("/top sales 365d 3");
      const next = first.buttons?.find((b) => b.label.includes("Next"));
      const second = await t.press(next?.id ?? "");
      expect(second.table?.rows[0]?.[0]).toBe("4");
    });

    it("takes aliases (24h, 1w) and refuses what the spec does not name (1h, average price)", async () => {
      t = await startRuntime();
      expect((await t.say("/top volume 24h")).title).toMatch(/last 1 day/);
      expect((await t.say("/top sales 1w")).title).toMatch(/last 7 days/);
      expect((await t.say("/top volume 1h")).text).toMatch(
        /"1h": it is not one of duration \(1d, 7d, 30d, 365d\) or a number for limit/,
      );
      expect((await t.say("/top avg_price")).text).toMatch(
        /"avg_price": it is not one of metric \(volume, sales, max_price\)/,
      );
    });
  });

  describe("/nft", () => {
    it("details, owners, last sale with fungible totals, and the raw metadata button", async () => {
      t = await startRuntime();
      const { contract, tokenId } = t.sim.fixtures.token;
      const reply = await t.say(`/nft https://opensea.io/assets/ethereum/${contract}/${tokenId}`);
      expect(reply.fields?.find((x) => x.name === "Last sale")?.value).toMatch(
        /^1\.2346 ETH · \$[\d,]+\.\d{2}$/,
      );
      expect(reply.fields?.find((x) => x.name === "Sale details")?.value).toMatch(/of token 0x/);
      expect(reply.table?.columns).toEqual(["Owner", "Quantity"]);
      const raw = await t.press(reply.buttons?.find((b) => b.label === "Raw metadata")?.id ?? "");
      expect(() =>
        JSON.parse(raw.text ?? new TextDecoder().decode(raw.files?.[0]?.data)),
      ).not.toThrow();
    });

    it("plain-text metadata is shown as it is", async () => {
      t = await startRuntime();
      const { contract, tokenId } = t.sim.fixtures.tokenWithTextMetadata;
      const reply = await t.say(`/nft ${contract} ${tokenId}`);
      const raw = await t.press(reply.buttons?.[0]?.id ?? "");
      expect(raw.text ?? "").not.toBe("");
    });

    it("a token that never sold says so; a 78-digit id works", async () => {
      t = await startRuntime();
      const { fixtures: f } = t.sim;
      const unsold = await t.say(
        `/nft ${f.tokenWithoutSale.contract} ${f.tokenWithoutSale.tokenId}`,
      );
      expect(unsold.fields?.find((x) => x.name === "Last sale")?.value).toBe("never sold");
      const huge = await t.say(`/nft ${f.hugeTokenId.contract} ${f.hugeTokenId.tokenId}`);
      expect(huge.fields?.find((x) => x.name === "Token id")?.value).toBe(f.hugeTokenId.tokenId);
    });

    it("not found, missing token, conflicting link and bad ids", async () => {
      t = await startRuntime();
      const c = t.sim.fixtures.collection;
      expect((await t.say(`/nft ${c} 999999999`)).text).toMatch(
        /^No token 999999999 in collection 0x/,
      );
      expect(await t.refusal(`/nft ${c}`)).toBe("missing_argument");
      expect((await t.say(`/nft https://opensea.io/assets/ethereum/${c}/5 6`)).text).toMatch(
        /names token 5 but you also gave 6/,
      );
      expect((await t.say(`/nft ${c} ${"1".repeat(79)}`)).text).toMatch(/79 digits/);
      expect((await t.say(`/nft ${c} 0x1`)).text).toMatch(/decimal, not hex/);
      expect((await t.say(`/nft ${c} 1.5`)).text).toMatch(/whole number/);
    });
  });
});

describe("against the simulator", () => {
  beforeAll(async () => {
    t = await startRuntime();
  });
  afterAll(async () => {
    await t.close();
  });

  describe("/contracts", () => {
    it("lists the newest NFT contracts of all four types and remembers them", async () => {
      const { result: reply, requests } = await sent(() => t.say("/contracts"));
      // The list (the count of the last hour's runs beside it).
      const list = requests.find((request) => request.query.sortDirection !== undefined);
      expect(list?.query).toMatchObject({
        sortDirection: "SORT_DIRECTION_DESC",
        contractTypes: "TYPE_ERC721,TYPE_ERC1155,TYPE_ERC721_LEGACY,TYPE_CRYPTOPUNKS",
        limit: "10",
      });
      const { contracts } = await t.api.foundational.contracts({
        sortDirection: "SORT_DIRECTION_DESC",
        contractTypes: ["TYPE_ERC721", "TYPE_ERC1155", "TYPE_ERC721_LEGACY", "TYPE_CRYPTOPUNKS"],
        limit: 10,
      });
      expect(rows(reply).map((row) => row[1])).toEqual(contracts.map((c) => short(c.address)));
      expect(rows(reply)[0]?.[0]).toBe(collectionName(contracts[0]?.name));
      expect(rows(reply)[0]?.[3]).toMatch(/ago$|^just now$/);
      expect(t.runtime.collections.search("", 100).length).toBeGreaterThanOrEqual(10);
    });

    it("filters by type and limit", async () => {
      const { result: reply, requests } = await sent(() => t.say("/contracts erc1155 3"));
      const list = requests.find((request) => request.query.sortDirection !== undefined);
      expect(list?.query).toMatchObject({ contractTypes: "TYPE_ERC1155", limit: "3" });
      expect(rows(reply)).toHaveLength(3);
      expect(rows(reply).every((row) => row[2] === "ERC-1155")).toBe(true);
    });

    it("the footer counts the new contracts of the last hour the data service lists, not a constant", async () => {
      const now = Date.now();
      // Older than an hour, or dated by a bad clock (year 9999): not counted.
      t.sim.mintDated(now - 2 * 3_600_000, 4);
      expect(t.sim.mintDated(Date.UTC(9999, 0, 1), 2).map((c) => c.types[0])).toContain(
        "TYPE_ERC721",
      );
      const minted = t.sim.mint(7);
      const nftTypes = ["TYPE_ERC721", "TYPE_ERC1155", "TYPE_ERC721_LEGACY", "TYPE_CRYPTOPUNKS"];
      const nfts = minted.filter((c) => c.types.some((type) => nftTypes.includes(type)));
      const erc1155 = minted.filter((c) => c.types.includes("TYPE_ERC1155"));
      const { result: reply, requests } = await sent(() => t.say("/contracts"));
      // The list may come from the cache; the count asks the data service.
      const asked = requests.find((request) => request.query.blockTimestampGt !== undefined);
      expect(asked?.query).toMatchObject({ contractTypes: nftTypes.join(",") });
      const since = Date.parse(asked?.query.blockTimestampGt ?? "");
      expect(since).toBeGreaterThanOrEqual(now - 3_600_000);
      expect(since).toBeLessThan(now - 3_590_000);
      const count = (n: number, kind: string) =>
        `${n === 0 ? "no" : n} new ${kind} contract${n === 1 ? "" : "s"} in the last hour on Ethereum`;
      expect(reply.footer).toBe(`Newest first · ${count(nfts.length, "NFT")}`);
      expect((await t.say("/contracts erc1155 3")).footer).toBe(
        `Newest first · ${count(erc1155.length, "ERC-1155")}`,
      );
      // Without an answer to the count, the list is shown and the footer claims no figure.
      t.sim.script([{ status: 200 }, ...Array.from({ length: 4 }, () => ({ status: 503 }))]);
      const unsure = await t.say("/contracts erc721 2");
      expect(rows(unsure)).toHaveLength(2);
      expect(unsure.footer).toBe("Newest first");
    });

    it("refuses a bad type or limit", async () => {
      expect((await t.say("/contracts erc20")).text).toContain("type (all, erc721, erc1155)");
      expect((await t.say("/contracts all 26")).text).toContain("from 1 to 25");
    });
  });

  describe("/owners", () => {
    it("summarises the owner-count history and lists the top holders", async () => {
      const f = t.sim.fixtures;
      const reply = await t.say(`/owners ${f.collection}`);
      const { dataPoints } = await t.api.collections.ownersCount(f.collection, "DURATION_30_DAYS");
      const counts = dataPoints.map((p) => BigInt(p.count));
      const first = dataPoints[0]!;
      const last = dataPoints.at(-1)!;
      expect(field(reply, "First")).toBe(
        `${formatCount(first.count)} on ${first.timestamp.slice(0, 10)}`,
      );
      expect(field(reply, "Last")).toBe(
        `${formatCount(last.count)} on ${last.timestamp.slice(0, 10)}`,
      );
      expect(field(reply, "Change")).toMatch(
        new RegExp(
          `^${formatChange(String(BigInt(last.count) - BigInt(first.count))).replace("+", "\\+")} \\(`,
        ),
      );
      const sorted = [...counts].sort((a, b) => (a < b ? -1 : a > b ? 1 : 0));
      const min = sorted[0];
      const max = sorted.at(-1);
      expect(field(reply, "Min")).toMatch(new RegExp(`^${formatCount(String(min))} on `));
      expect(field(reply, "Max")).toMatch(new RegExp(`^${formatCount(String(max))} on `));
      const { owner } = await t.api.collections.ownersList(f.collection, {
        sortDirection: "SORT_DIRECTION_DESC",
        limit: 10,
      });
      expect(rows(reply).map((row) => row[1])).toEqual(owner.map((o) => short(o.address)));
      expect(reply.footer).toMatch(/^30 daily points/);
    });

    it("takes a duration", async () => {
      const { result: reply, requests } = await sent(() =>
        t.say(`/owners ${t.sim.fixtures.collection} 365d`),
      );
      expect(
        requests.some((r) => r.path.includes("/DURATION_365_DAYS/GROUP_BY_PERIOD_1_DAY")),
      ).toBe(true);
      expect(reply.footer).toMatch(/^365 daily points/);
    });

    it("answers not found and bad input", async () => {
      const f = t.sim.fixtures;
      expect((await t.say(`/owners ${f.unknownAddress}`)).text).toContain("No collection");
      expect(
        (
          await t.say(
            `/owners https://opensea.io/assets/ethereum/${f.collection}/${"1".repeat(79)}`,
          )
        ).text,
      ).toContain("79 digits");
      expect((await t.say(`/owners ${f.collection} 2d`)).text).toContain("use one of");
      expect((await t.say("/owners 0x12345")).text).toContain("not a valid contract address");
    });
  });

  describe("/common", () => {
    it("lists collections in common, 15 a page, names as they come", async () => {
      const f = t.sim.fixtures;
      const { collections } = await t.api.audiences.commonCollections(f.collection);
      const first = await t.say(`/common ${f.collection}`);
      expect(rows(first)).toHaveLength(Math.min(15, collections.length));
      expect(rows(first).map((row) => row[1])).toEqual(
        collections.slice(0, 15).map((c) => collectionName(c.name)),
      );
      const top = collections[0]!;
      expect(rows(first)[0]?.slice(2)).toEqual([
        short(top.contractAddress),
        formatCount(top.commonOwnersCount),
        formatCount(top.ownersCount),
        shareOf(top.commonOwnersCount, top.ownersCount),
      ]);
      const second = await t.press(button(first, "Next"));
      expect(rows(second)[0]?.[0]).toBe("16");
      expect(rows(second)).not.toEqual(rows(first));
    });

    it("shows trends with signed changes", async () => {
      const f = t.sim.fixtures;
      const { result: reply, requests } = await sent(() => t.say(`/common ${f.collection} 7d`));
      expect(requests[0]?.query.duration).toBe("DURATION_7_DAYS");
      const { collections } = await t.api.audiences.commonCollectionTrends(
        f.collection,
        "DURATION_7_DAYS",
      );
      expect(rows(reply).map((row) => row[3])).toEqual(
        collections.slice(0, 15).map((c) => formatChange(c.ownersCountChange)),
      );
      expect(reply.title).toContain("last 7 days");
    });

    it("answers not found and bad input", async () => {
      const f = t.sim.fixtures;
      expect((await t.say(`/common ${f.unknownAddress}`)).text).toContain("No collection");
      expect((await t.say(`/common ${f.collection} 2w`)).text).toContain("use one of");
    });
  });
});
