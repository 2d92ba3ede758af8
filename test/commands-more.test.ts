import { afterAll, afterEach, beforeAll, describe, expect, it } from "vitest";
import { shareOf } from "../commands/common.ts";
import { allCommands } from "../commands/index.ts";
import { percentChange, summarizeOwnerCounts } from "../commands/owners.ts";
import { flattenProfile } from "../commands/profile.ts";
import { segmentCsv } from "../commands/segment.ts";
import { formatNativeNumber } from "../commands/shared/stats.ts";
import {
  behaviorLabel,
  collectionName,
  formatChange,
  formatCount,
  fullAddress,
  short,
  shortTokenId,
} from "../src/core/format.ts";
import type { RenderableReply } from "../src/core/reply.ts";
import { parseArgs, parseTextArgs } from "../src/core/runtime.ts";
import { type RuntimeSetup, startRuntime } from "./helpers.ts";

let t: RuntimeSetup;

const field = (reply: RenderableReply, name: string) =>
  reply.fields?.find((f) => f.name === name)?.value;
const rows = (reply: RenderableReply) => reply.table?.rows ?? [];
const button = (reply: RenderableReply, label: string) => {
  const found = reply.buttons?.find((b) => b.label.includes(label));
  if (!found) throw new Error(`no "${label}" button under: ${t.text(reply)}`);
  return found.id;
};
/** The requests a step sent, so tests on a shared runtime see only their own. */
async function sent<T>(step: () => Promise<T>) {
  const before = t.sim.requests.length;
  const result = await step();
  return { result, requests: t.sim.requests.slice(before) };
}
const addresses = (n: number) =>
  Array.from({ length: n }, (_, i) => `0x${(i + 1).toString(16).padStart(40, "0")}`);

describe("pure builders", () => {
  it("summarise owner counts on BigInt, beyond Number's exact range", () => {
    const points = [
      { timestamp: "2026-01-01T00:00:00Z", count: "9007199254740993" },
      { timestamp: "2026-01-02T00:00:00Z", count: "9007199254740991" },
      { timestamp: "2026-01-03T00:00:00Z", count: "9007199254740997" },
      { timestamp: "2026-01-04T00:00:00Z", count: "9007199254740995" },
    ];
    const summary = summarizeOwnerCounts(points);
    expect(summary?.change).toBe("2");
    expect(summary?.min.count).toBe("9007199254740991");
    expect(summary?.max.count).toBe("9007199254740997");
    expect(summarizeOwnerCounts([])).toBeUndefined();
    expect(percentChange("400", "436")).toBe("+9.0%");
    expect(percentChange("451", "415")).toBe("-8.0%");
    expect(percentChange("0", "5")).toBeUndefined();
    expect(shareOf("83", "392")).toBe("21.2%");
    expect(shareOf("1", "0")).toBe("n/a");
  });

  it("flatten any profile into at most 20 bounded fields", () => {
    const wide = Object.fromEntries(Array.from({ length: 50 }, (_, i) => [`k${i}`, i]));
    expect(flattenProfile(wide).fields).toHaveLength(20);
    expect(flattenProfile(wide).total).toBe(50);
    const odd = flattenProfile({
      data: {
        long: "x".repeat(5000),
        list: [{ a: 1 }, { a: 2 }, { a: 3 }, { a: 4 }],
        deep: { a: { b: { c: { d: { e: { f: 1 } } } } } },
        empty: {},
        amount: "12345.678900000000000001",
      },
    });
    const value = (name: string) => odd.fields.find((f) => f.name === name)?.value;
    expect([...(value("long") ?? "")].length).toBeLessThanOrEqual(200);
    expect(value("list")).toMatch(/^4 items: \{a: 1\}; \{a: 2\}; \{a: 3\}; …$/);
    expect(odd.fields.some((f) => f.name.startsWith("deep.a.b"))).toBe(true);
    expect(value("empty")).toBe("empty");
    expect(value("amount")).toBe("12,345.6789");
    expect(flattenProfile({}).fields).toEqual([]);
  });

  it("write CSV with full addresses and exact amounts, and shorten huge ids", () => {
    const csv = segmentCsv([
      {
        walletAddress: "0xee921415072882a79213fc969454aad44f2bc2e6",
        totalSpend: "1.000000000000000001",
      },
    ]);
    expect(csv).toBe(
      "walletAddress,totalSpend\r\n0xee921415072882A79213Fc969454aad44F2BC2E6,1.000000000000000001\r\n",
    );
    expect(shortTokenId("1".repeat(78))).toBe("111111…111111");
    expect(shortTokenId("123")).toBe("123");
    expect(formatNativeNumber(0.000000123)).toBe("0.000000123 ETH");
    expect(formatNativeNumber(38.321773)).toBe("38.3218 ETH");
  });
});

describe("definitions", () => {
  /** Commands whose one-line description says it all: they have no longer help. */
  const brief = new Set(["help", "reports", "subscriptions", "unlink", "unsubscribe"]);

  // Every command of the registry: a new one is covered without editing a list.
  it.each(allCommands().map((command) => command.name))(
    "/%s has help (or is brief), and every example parses",
    (name) => {
      const command = allCommands().find((c) => c.name === name);
      if (brief.has(name)) expect(command?.help).toBeUndefined();
      else expect(command?.help).toBeTruthy();
      expect(command?.examples.length).toBeGreaterThan(0);
      for (const example of command?.examples ?? []) {
        expect(example.startsWith(`/${name}`)).toBe(true);
        const text = example.replace(/^\/\w+\s*/, "");
        expect(() => parseArgs(command!, parseTextArgs(command!, text))).not.toThrow();
      }
    },
  );
});

describe("against the simulator", () => {
  beforeAll(async () => {
    t = await startRuntime();
  });
  afterAll(async () => {
    await t.close();
  });

  describe("/behaviors", () => {
    it("breaks down wallets given by address and ENS name, on spaces, commas and new lines", async () => {
      const f = t.sim.fixtures;
      const { result: reply, requests } = await sent(() =>
        t.say(`/behaviors ${f.wallet}, ${f.multiNameWallet}\n${f.walletEns}`),
      );
      expect(requests[0]?.body).toEqual({
        walletAddresses: [fullAddress(f.wallet), fullAddress(f.multiNameWallet), f.walletEns],
      });
      const expected = await t.api.audiences.behaviorsByWallets([f.wallet, f.multiNameWallet]);
      expect(reply.title).toBe("Behaviors of 3 wallets");
      expect(
        rows(reply)
          .map((row) => row[0])
          .sort(),
      ).toEqual(expected.aggregatedBehaviors.map((row) => behaviorLabel(row.behavior)).sort());
      expect(rows(reply).every((row) => /^\d+\.\d%$/.test(row[2] ?? ""))).toBe(true);
    });

    it("refuses bad input before any request", async () => {
      const { result, requests } = await sent(async () => [
        await t.say(`/behaviors ${addresses(501).join(" ")}`),
        await t.say(`/behaviors ${t.sim.fixtures.wallet} 0x1234`),
        await t.say("/behaviors"),
      ]);
      expect(result[0]?.text).toContain("at most 500");
      expect(result[1]?.text).toContain('"0x1234" is not a valid wallet address');
      expect(result[2]?.text).toContain("Missing wallets");
      expect(requests).toHaveLength(0);
    });
  });

  describe("/contracts", () => {
    it("lists the newest NFT contracts of all four types and remembers them", async () => {
      const { result: reply, requests } = await sent(() => t.say("/contracts"));
      expect(requests[0]?.query).toMatchObject({
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
      expect(requests[0]?.query).toMatchObject({ contractTypes: "TYPE_ERC1155", limit: "3" });
      expect(rows(reply)).toHaveLength(3);
      expect(rows(reply).every((row) => row[2] === "ERC-1155")).toBe(true);
    });

    it("refuses a bad type or limit", async () => {
      expect((await t.say("/contracts erc20")).text).toContain("use one of all, erc721, erc1155");
      expect((await t.say("/contracts all 26")).text).toContain("from 1 to 25");
    });
  });

  describe("/wallet", () => {
    it("pages a wallet's NFTs with their spam marks", async () => {
      const f = t.sim.fixtures;
      const { nfts } = await t.api.wallets.nfts(f.wallet);
      const first = await t.say(`/wallet ${f.wallet}`);
      expect(first.title).toBe(`NFTs of ${fullAddress(f.wallet)}`);
      const pages = Math.ceil(nfts.length / 10);
      const spam = nfts.filter((n) => n.spam).length;
      expect(first.footer).toBe(`Page 1 of ${pages} · ${nfts.length} NFTs · ${spam} flagged spam`);
      expect(rows(first).map((row) => row[5] === "SPAM")).toEqual(
        nfts.slice(0, 10).map((n) => n.spam),
      );
      const second = await t.press(button(first, "Next"));
      expect(second.footer).toMatch(/^Page 2 of /);
      expect(second.replaceOriginal).toBe(true);
      expect(rows(second)).not.toEqual(rows(first));
      expect(rows(second)[0]?.[2]).toBe(collectionName(nfts[10]?.nft.collection?.name));
    });

    it("excludes or isolates spam", async () => {
      const f = t.sim.fixtures;
      const { result: only, requests } = await sent(() => t.say(`/wallet ${f.wallet} only`));
      expect(requests[0]?.query.spam).toBe("SPAM_FILTER_ONLY");
      expect(rows(only).length).toBeGreaterThan(0);
      expect(rows(only).every((row) => row[5] === "SPAM")).toBe(true);
      const hidden = await t.say(`/wallet ${f.wallet} spam:exclude`);
      expect(rows(hidden).some((row) => row[5] === "SPAM")).toBe(false);
    });

    it("lists one collection's NFTs, with huge token ids shortened", async () => {
      const f = t.sim.fixtures;
      const { result: reply, requests } = await sent(() =>
        t.say(`/wallet ${f.walletEns} collection:${f.collection}`),
      );
      const { tokens } = await t.api.foundational.nftsByOwner(f.walletEns, {
        contractAddress: f.collection,
        limit: 500,
      });
      expect(requests[0]?.query.contractAddress?.toLowerCase()).toBe(f.collection);
      expect(rows(reply).map((row) => row[2])).toEqual(tokens.slice(0, 10).map((x) => x.tokenId));

      const { owners } = await t.api.foundational.tokenOwners(
        f.hugeTokenId.contract,
        f.hugeTokenId.tokenId,
      );
      const holder = owners[0]?.address ?? "";
      const huge = await t.say(`/wallet ${holder} collection:${f.hugeTokenId.contract}`);
      const ids = rows(huge).map((row) => row[2]);
      expect(ids).toContain(shortTokenId(f.hugeTokenId.tokenId));
      expect(t.text(huge)).not.toContain(f.hugeTokenId.tokenId);
    });

    it("passes a markup collection name through as plain text", async () => {
      const f = t.sim.fixtures;
      const { owner } = await t.api.collections.ownersList(f.markupCollection, { limit: 1 });
      await t.say(`/wallet ${owner[0]?.address} exclude`);
      const reply = await t.say(`/owners ${f.markupCollection}`);
      expect(reply.title).toBe(
        "Owners of @everyone <b>x</b> **bold** [link](https://evil.example) 🚨",
      );
    });

    it("says so when there is nothing, and refuses bad input", async () => {
      const f = t.sim.fixtures;
      expect((await t.say(`/wallet ${f.unknownAddress}`)).text).toBe("This wallet holds no NFTs.");
      expect((await t.say("/wallet no-such-name-xyz.eth")).text).toContain(
        "No data for wallet no-such-name-xyz.eth",
      );
      expect((await t.say(`/wallet ${f.wallet} maybe`)).text).toContain(
        "use one of all, exclude, only",
      );
      expect((await t.say("/wallet 0xnothex")).text).toContain("not a valid wallet address");
      expect((await t.say(`/wallet ${f.wallet} only ${f.collection}`)).text).toContain(
        "leave it out when you name a collection",
      );
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
    it("flattens whatever comes back, and says so", async () => {
      const f = t.sim.fixtures;
      const profile = await t.api.audiences.financialProfileByCollection(f.collection);
      const reply = await t.say(`/profile ${f.collection}`);
      expect(reply.fields).toEqual(flattenProfile(profile).fields);
      expect(reply.fields?.length).toBeGreaterThan(0);
      expect(reply.text).toContain("shape");
      expect(t.runtime.find("profile")?.help).toContain("not define");
    });

    it("bounds a large answer of unknown shape", async () => {
      const big = Object.fromEntries(
        Array.from({ length: 35 }, (_, i) => [`field${i}`, "v".repeat(900)]),
      );
      t.sim.script([{ status: 200, body: JSON.stringify(big) }]);
      const reply = await t.say(`/profile ${t.sim.fixtures.erc1155Collection}`);
      expect(reply.fields).toHaveLength(20);
      expect(reply.fields?.every((x) => [...x.value].length <= 200)).toBe(true);
      expect(reply.footer).toContain("15 more fields not shown");
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

describe("upstream failures", () => {
  afterEach(async () => {
    await t.close();
  });

  const lines: [string, (f: RuntimeSetup["sim"]["fixtures"]) => string, number][] = [
    ["behaviors", (f) => `/behaviors ${f.wallet}`, 1],
    ["contracts", () => "/contracts", 1],
    ["wallet", (f) => `/wallet ${f.wallet}`, 1],
    ["owners", (f) => `/owners ${f.collection}`, 2],
    ["common", (f) => `/common ${f.collection} 30d`, 1],
    ["stats", (f) => `/stats ${f.collection}`, 1],
    ["walletstats", (f) => `/walletstats ${f.wallet}`, 1],
    ["profile", (f) => `/profile ${f.collection}`, 1],
    ["segment", (f) => `/segment ${f.collection}`, 1],
  ];

  it.each(lines)("/%s: unavailable, busy and unreadable answers", async (_name, line, calls) => {
    t = await startRuntime({ API_RETRIES: "0" });
    const command = line(t.sim.fixtures);
    const times = <T>(value: T) => Array.from({ length: calls }, () => value);

    t.sim.script(times({ status: 503 }));
    expect((await t.say(command)).text).toContain("unavailable");
    t.sim.script(times({ status: 429, retryAfterSeconds: 120 }));
    expect((await t.say(command)).text).toContain("busy, try again in 120 s");
    t.sim.script(times({ status: 200, body: "<html>502 Bad Gateway</html>" }));
    expect((await t.say(command)).text).toContain("could not read");
  });

  it("unavailable once the retries of a 503 burst are spent", async () => {
    t = await startRuntime({ API_RETRIES: "3" });
    t.sim.script([{ status: 503 }, { status: 503 }, { status: 503 }, { status: 503 }]);
    const reply = await t.say(`/segment ${t.sim.fixtures.collection}`);
    expect(reply.text).toContain("unavailable");
    expect(reply.tone).toBe("error");
    expect(t.sim.countRequests()).toBe(4);
  });

  it("a failure in the middle of a CSV export gives the message, not a partial file", async () => {
    t = await startRuntime({ API_RETRIES: "0" });
    const f = t.sim.fixtures;
    // This segment is longer than one export page of 500, so the export asks twice.
    const first = await t.say(`/segment ${f.collection} ${f.erc1155Collection} condition:any`);
    t.sim.script([{ status: 200 }, { status: 503 }]);
    const exported = await t.press(button(first, "Export CSV"));
    expect(exported.files).toBeUndefined();
    expect(exported.text).toContain("unavailable");
  });
});
