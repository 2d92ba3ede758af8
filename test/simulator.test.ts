import { privateKeyToAccount } from "viem/accounts";
import { afterAll, afterEach, beforeAll, describe, expect, it } from "vitest";
import {
  BUILT_CONTRACTS_MIN_AGE_SEC,
  buildPopulation,
  buildWorld,
  populationWorld,
} from "../src/simulator/data.ts";
import {
  type AggregatedBehaviorJson,
  CAST_AIRDROP,
  CAST_COLLECTIONS,
  type Contract,
  DEMO_WALLET,
  type EnsEntityJson,
  type FinancialStatsJson,
  type NftJson,
  NICK,
  type SaleJson,
  type Simulator,
  startSimulator,
  VITALIK,
  type WalletBehaviorJson,
} from "../src/simulator/index.ts";

interface Reply<T> {
  status: number;
  headers: Headers;
  text: string;
  json: T;
}

interface CallOptions {
  method?: string;
  body?: unknown;
  /** null sends no key at all. */
  key?: string | null;
}

async function call<T = unknown>(
  sim: Simulator,
  path: string,
  options: CallOptions = {},
): Promise<Reply<T>> {
  const headers: Record<string, string> = { accept: "application/json" };
  if (options.key !== null) headers["x-api-key"] = options.key ?? sim.apiKey;
  const init: RequestInit = { method: options.method ?? "GET", headers };
  if (options.body !== undefined) {
    headers["content-type"] = "application/json";
    init.method = options.method ?? "POST";
    init.body = typeof options.body === "string" ? options.body : JSON.stringify(options.body);
  }
  const response = await fetch(`${sim.url}${path}`, init);
  const text = await response.text();
  let json: unknown;
  try {
    json = JSON.parse(text);
  } catch {
    json = undefined;
  }
  return { status: response.status, headers: response.headers, text, json: json as T };
}

const sum = (values: readonly number[]) => values.reduce((total, value) => total + value, 0);
const isSortedDescending = (values: readonly number[]) =>
  values.every((value, index) => index === 0 || (values[index - 1] ?? value) >= value);
const DECIMAL = /^\d+(\.\d+)?$/;
const INT64 = /^-?\d+$/;
const ADDRESS = /^0x[0-9a-f]{40}$/;
const TIMESTAMP = /^\d{4}-\d{2}-\d{2}T\d{2}:\d{2}:\d{2}(\.\d+)?Z$/;

let sim: Simulator;

beforeAll(async () => {
  sim = await startSimulator({ seed: 1 });
});

afterAll(async () => {
  await sim.close();
});

afterEach(() => {
  sim.clearFaults();
});

describe("authentication", () => {
  it("answers 401 without the key or with a wrong one, before looking at the path", async () => {
    const missing = await call<{ code: number; message: string }>(sim, "/no/such/path", {
      key: null,
    });
    const wrong = await call(sim, `/wallets/v1beta2/ens/by_name/${sim.fixtures.walletEns}`, {
      key: "nope",
    });
    expect(missing.status).toBe(401);
    expect(missing.json).toEqual({ code: 16, message: expect.any(String) });
    expect(wrong.status).toBe(401);
    expect(sim.requests.at(-1)?.apiKey).toBe("nope");
  });
});

describe("audience insights", () => {
  it("1: aggregates behaviors of addresses and ENS names, counting a wallet once", async () => {
    const { wallet, walletEns, unknownAddress, multiNameWallet } = sim.fixtures;
    const reply = await call<{ aggregatedBehaviors: AggregatedBehaviorJson[] }>(
      sim,
      "/audiences/v1beta1/behaviors/by_wallets",
      {
        body: {
          walletAddresses: [wallet, walletEns.toUpperCase(), multiNameWallet, unknownAddress],
        },
      },
    );
    expect(reply.status).toBe(200);
    const items = reply.json.aggregatedBehaviors;
    expect(sum(items.map((item) => Number(item.walletsCount)))).toBe(3);
    expect(sum(items.map((item) => item.walletsPercentage))).toBeCloseTo(100, 1);
    expect(items.some((item) => item.behavior === "BEHAVIOR_UNSPECIFIED")).toBe(true);
    expect(items.every((item) => item.walletsCountChange30d === undefined)).toBe(true);
  });

  it("2, 3, 6, 17: a collection's summary, details, stats and owner count agree", async () => {
    const { collection } = sim.fixtures;
    const summary = await call<{ aggregatedBehaviors: AggregatedBehaviorJson[] }>(
      sim,
      `/audiences/v1beta1/behaviors/by_collection/${collection}`,
    );
    const details = await call<{ walletBehaviors: WalletBehaviorJson[] }>(
      sim,
      `/audiences/v1beta1/behaviors/by_collection/${collection}/details`,
    );
    const stats = await call<FinancialStatsJson>(
      sim,
      `/audiences/v1beta1/financial_stats/by_collection/${collection}`,
    );
    const year = await call<{ dataPoints: { timestamp: string; count: string }[] }>(
      sim,
      `/collections/v1beta2/${collection}/owners_count/DURATION_365_DAYS/GROUP_BY_PERIOD_1_DAY`,
    );
    const items = summary.json.aggregatedBehaviors;
    const owners = Number(stats.json.walletsCount);
    expect(owners).toBeGreaterThan(300);
    expect(sum(items.map((item) => Number(item.walletsCount)))).toBe(owners);
    expect(sum(items.map((item) => item.walletsPercentage))).toBeCloseTo(100, 1);
    expect(isSortedDescending(items.map((item) => Number(item.walletsCount)))).toBe(true);
    for (const item of items) expect(item.walletsCountChange30d).toMatch(INT64);
    const counts = year.json.dataPoints.map((point) => Number(point.count));
    expect(counts.at(-1)).toBe(owners);
    // The categories' 30-day changes add up to the change of the whole audience.
    expect(sum(items.map((item) => Number(item.walletsCountChange30d)))).toBe(
      owners - (counts.at(-31) ?? 0),
    );
    expect(details.json.walletBehaviors).toHaveLength(owners);
    const first = details.json.walletBehaviors[0];
    expect(Object.keys(first ?? {}).sort()).toEqual(
      [
        "address",
        "automation",
        "behavior",
        "experience",
        "holding",
        "influence",
        "selling",
        "spendIntent",
        "taste",
      ].sort(),
    );
    expect(stats.json).toMatchObject({
      collectionsOwnedCountAvg: expect.any(Number),
      nftsPurchasesCountAvg: expect.any(Number),
      nftsPurchasesVolumeAvg: expect.any(Number),
      nftsPurchasesPriceAvg: expect.any(Number),
      nftsFifoHoldingSpanAvg: expect.any(Number),
      walletAgeMin: expect.stringMatching(INT64),
      walletAgeMax: expect.stringMatching(INT64),
    });
  });

  it("2: some collection summaries carry BEHAVIOR_OTHER", async () => {
    const reply = await call<{ aggregatedBehaviors: AggregatedBehaviorJson[] }>(
      sim,
      `/audiences/v1beta1/behaviors/by_collection/${sim.fixtures.otherBehaviorCollection}`,
    );
    const behaviors = reply.json.aggregatedBehaviors.map((item) => item.behavior);
    expect(behaviors).toContain("BEHAVIOR_OTHER");
    expect(sum(reply.json.aggregatedBehaviors.map((item) => item.walletsPercentage))).toBeCloseTo(
      100,
      1,
    );
  });

  it("4: serves an (invented) financial profile whose buckets add up", async () => {
    const reply = await call<{
      financialProfile: {
        walletsCount: string;
        spendDistribution: { walletsCount: string; walletsPercentage: number }[];
      };
    }>(sim, `/audiences/v1beta1/financial_profiles/by_collection/${sim.fixtures.collection}`);
    const profile = reply.json.financialProfile;
    expect(reply.status).toBe(200);
    expect(sum(profile.spendDistribution.map((bucket) => Number(bucket.walletsCount)))).toBe(
      Number(profile.walletsCount),
    );
    expect(sum(profile.spendDistribution.map((b) => b.walletsPercentage))).toBeCloseTo(100, 1);
  });

  it("5: applies the filters from the JSON body", async () => {
    const owners = await call<{ owner: { address: string }[] }>(
      sim,
      `/collections/v1beta2/${sim.fixtures.collection}/owners_list?limit=200`,
    );
    const walletAddresses = owners.json.owner.map((owner) => owner.address);
    const path = "/audiences/v1beta1/financial_stats/by_wallets";
    const all = await call<FinancialStatsJson>(sim, path, { body: { walletAddresses } });
    const big = await call<FinancialStatsJson>(sim, path, {
      body: { walletAddresses, nftsPurchasesVolumeGte: "10", collectionsOwnedCountGte: "2" },
    });
    expect(all.json.walletsCount).toBe("200");
    expect(Number(big.json.walletsCount)).toBeGreaterThan(0);
    expect(Number(big.json.walletsCount)).toBeLessThan(200);
    expect(big.json.nftsPurchasesVolumeAvg).toBeGreaterThanOrEqual(10);
    const bad = await call(sim, path, { body: { walletAddresses, nftsPurchasesVolumeGte: "-1" } });
    expect(bad.status).toBe(400);
  });

  it("7, 8: collections in common: at most 30, sorted, spam and self excluded", async () => {
    const { collection, spamCollection } = sim.fixtures;
    const common = await call<{
      collections: {
        contractAddress: string;
        minterAddress: string;
        commonOwnersCount: string;
        ownersCount: string;
      }[];
    }>(sim, `/audiences/v1beta1/common/collections/${collection}`);
    const trends = await call<{
      collections: {
        contractAddress: string;
        ownersCountChange: string;
        commonOwnersCount: string;
      }[];
    }>(sim, `/audiences/v1beta1/common/collections/${collection}/trends?duration=DURATION_7_DAYS`);
    const items = common.json.collections;
    expect(items).toHaveLength(30);
    expect(isSortedDescending(items.map((item) => Number(item.commonOwnersCount)))).toBe(true);
    for (const item of items) {
      expect(Number(item.commonOwnersCount)).toBeLessThanOrEqual(Number(item.ownersCount));
      expect(item.minterAddress).toMatch(ADDRESS);
    }
    const addresses = items.map((item) => item.contractAddress);
    expect(addresses).not.toContain(collection);
    expect(addresses).not.toContain(spamCollection);
    expect(trends.json.collections.map((item) => item.contractAddress)).toEqual(addresses);
    for (const item of trends.json.collections) expect(item.ownersCountChange).toMatch(INT64);
    const missing = await call(sim, `/audiences/v1beta1/common/collections/${collection}/trends`);
    const unknown = await call(
      sim,
      `/audiences/v1beta1/common/collections/${collection}/trends?duration=DURATION_2_DAYS`,
    );
    expect([missing.status, unknown.status]).toEqual([400, 400]);
  });

  it("9: segments an audience: ANY contains ALL, sorted by spend, paged", async () => {
    const { collection, erc1155Collection, walletEns } = sim.fixtures;
    const path = "/audiences/v1beta1/segmented_audience";
    const collections = [{ contractAddress: collection }, { contractAddress: erc1155Collection }];
    type Wallets = { wallets: { walletAddress: string; totalSpend: string }[] };
    const filter = { nftsPurchasesVolumeGte: "20" };
    const all = await call<Wallets>(sim, path, {
      body: { collections, collectionsCondition: "CONDITION_ALL", limit: 500, ...filter },
    });
    const any = await call<Wallets>(sim, path, {
      body: { collections, collectionsCondition: "CONDITION_ANY", limit: "500", ...filter },
    });
    expect(any.json.wallets.length).toBeLessThan(500);
    const anyAddresses = new Set(any.json.wallets.map((wallet) => wallet.walletAddress));
    expect(all.json.wallets.length).toBeGreaterThan(0);
    expect(any.json.wallets.length).toBeGreaterThan(all.json.wallets.length);
    for (const wallet of all.json.wallets)
      expect(anyAddresses.has(wallet.walletAddress)).toBe(true);
    for (const wallet of any.json.wallets) expect(wallet.totalSpend).toMatch(DECIMAL);
    expect(isSortedDescending(any.json.wallets.map((wallet) => Number(wallet.totalSpend)))).toBe(
      true,
    );
    const second = await call<Wallets>(sim, path, {
      body: { collections, collectionsCondition: "CONDITION_ANY", limit: 5, offset: 5, ...filter },
    });
    expect(second.json.wallets).toEqual(any.json.wallets.slice(5, 10));

    const three = [...collections, { contractAddress: collection }];
    const statuses = await Promise.all([
      call(sim, path, { body: { collections: three } }),
      call(sim, path, { body: { collections: [] } }),
      call(sim, path, { body: { collections, collectionsCondition: "CONDITION_SOME" } }),
      call(sim, path, { body: { collections: [{ contractAddress: "nobody-here.eth" }] } }),
      call(sim, path, { body: { collections: [{ contractAddress: walletEns }] } }),
    ]);
    // walletEns resolves to a wallet, which is no contract: 404.
    expect(statuses.map((reply) => reply.status)).toEqual([400, 400, 400, 400, 404]);
  });
});

describe("foundational data", () => {
  it("10: lists contracts ascending by mint time, of every type, paged", async () => {
    type Contracts = { contracts: Contract[] };
    const first = await call<Contracts>(sim, "/foundational/v1beta2/contracts");
    const big = await call<Contracts>(sim, "/foundational/v1beta2/contracts?limit=500");
    const desc = await call<Contracts>(
      sim,
      "/foundational/v1beta2/contracts?limit=5&sortDirection=SORT_DIRECTION_DESC",
    );
    const page2 = await call<Contracts>(sim, "/foundational/v1beta2/contracts?limit=5&offset=5");
    expect(first.json.contracts).toHaveLength(20);
    const all = big.json.contracts;
    const times = all.map((contract) => Date.parse(contract.mintEvent.blockTimestamp));
    expect(times.every((time, i) => i === 0 || (times[i - 1] ?? time) <= time)).toBe(true);
    expect(page2.json.contracts).toEqual(all.slice(5, 10));
    expect(desc.json.contracts).toEqual(all.slice(-5).reverse());
    const types = new Set(all.flatMap((contract) => contract.types));
    for (const type of [
      "TYPE_ERC721",
      "TYPE_ERC1155",
      "TYPE_ERC721_LEGACY",
      "TYPE_CRYPTOPUNKS",
      "TYPE_ERC20",
      "TYPE_ERC404",
    ]) {
      expect(types.has(type)).toBe(true);
    }
    const contract = all[0];
    expect(contract?.address).toMatch(ADDRESS);
    expect(contract?.mintEvent.blockTimestamp).toMatch(TIMESTAMP);
    expect(contract?.mintEvent.minterAddress).toMatch(ADDRESS);
    expect(all.some((c) => c.name === "")).toBe(true);
    expect(all.find((c) => c.types.includes("TYPE_ERC20"))?.decimals).toBeGreaterThan(0);
  });

  it("10: filters by contract types, comma-separated or repeated", async () => {
    type Contracts = { contracts: Contract[] };
    const comma = await call<Contracts>(
      sim,
      "/foundational/v1beta2/contracts?limit=500&contractTypes=TYPE_CRYPTOPUNKS,TYPE_ERC721_LEGACY",
    );
    const repeated = await call<Contracts>(
      sim,
      "/foundational/v1beta2/contracts?limit=500&contractTypes=TYPE_CRYPTOPUNKS&contractTypes=TYPE_ERC721_LEGACY",
    );
    expect(comma.json.contracts.length).toBe(4);
    expect(repeated.json).toEqual(comma.json);
    const bad = await Promise.all(
      [
        "contractTypes=TYPE_ERC404",
        "limit=501",
        "limit=-1",
        "sortDirection=DOWN",
        "blockTimestampGt=yesterday",
      ].map((query) => call(sim, `/foundational/v1beta2/contracts?${query}`)),
    );
    expect(bad.map((reply) => reply.status)).toEqual([400, 400, 400, 400, 400]);
  });

  it("11: NFT details with metrics and a last sale carrying fungible totals", async () => {
    const { token, tokenWithoutSale } = sim.fixtures;
    const reply = await call<{
      nft: NftJson;
      metrics: { quantity: string; ownerCount: string };
      lastSale: SaleJson;
    }>(sim, `/foundational/v1beta2/nfts/${token.contract}/${token.tokenId}/details`);
    expect(reply.status).toBe(200);
    const { nft, metrics, lastSale } = reply.json;
    expect(nft).toMatchObject({
      contractAddress: token.contract,
      tokenId: token.tokenId,
      type: "TYPE_ERC721",
      metadata: { metadataUri: { mimeType: "application/json" } },
      mintEvent: { logIndex: expect.stringMatching(INT64) },
    });
    expect(nft.metadata.image.uri).toMatch(/^https:/);
    expect(metrics).toEqual({ quantity: "1", ownerCount: "1" });
    const paid = lastSale.recipientPaid;
    expect(paid.totalNative).toBe("1.234567890123456789");
    expect(paid.totalUsd).toMatch(/^\d+\.\d{1,2}$/);
    expect(paid.attributedBy).toBe("ATTRIBUTED_BY_SINGLE_TRANSFER");
    expect(paid.fungibleTotals).toEqual([
      {
        contractAddress: sim.fixtures.fungibleContract,
        totalNormalized: paid.fungibleTransfersTotal,
      },
    ]);
    const native = BigInt(paid.nativeTransfersTotal.replace(".", "").padEnd(19, "0"));
    expect(native).toBeGreaterThan(0n);
    expect(lastSale.blockchainEvent.blockNumber).toMatch(INT64);
    expect(lastSale.blockchainEvent.blockTimestamp).toMatch(TIMESTAMP);

    const unsold = await call<Record<string, unknown>>(
      sim,
      `/foundational/v1beta2/nfts/${tokenWithoutSale.contract}/${tokenWithoutSale.tokenId}/details`,
    );
    expect(unsold.status).toBe(200);
    expect(unsold.json.lastSale).toBeUndefined();
  });

  it("11: token ids up to 78 digits; 79 digits, signs, hex and decimals are refused", async () => {
    const { hugeTokenId, collection } = sim.fixtures;
    expect(hugeTokenId.tokenId).toMatch(/^\d{78}$/);
    const huge = await call<{ nft: NftJson }>(
      sim,
      `/foundational/v1beta2/nfts/${hugeTokenId.contract}/${hugeTokenId.tokenId}/details`,
    );
    expect(huge.json.nft.tokenId).toBe(hugeTokenId.tokenId);
    const base = `/foundational/v1beta2/nfts/${collection}`;
    const statuses = await Promise.all(
      [`9${hugeTokenId.tokenId}`, "-1", "0x1", "1.5"].map(
        async (id) => (await call(sim, `${base}/${encodeURIComponent(id)}/details`)).status,
      ),
    );
    expect(statuses).toEqual([400, 400, 400, 400]);
    expect((await call(sim, `${base}/99999999/details`)).status).toBe(404);
    expect(
      (await call(sim, `/foundational/v1beta2/nfts/${"0x".padEnd(42, "1")}/1/details`)).status,
    ).toBe(404);
    expect((await call(sim, "/foundational/v1beta2/nfts/0x1234/1/details")).status).toBe(400);
  });

  it("12: raw metadata is JSON text for JSON documents, plain text otherwise", async () => {
    const { token, tokenWithTextMetadata } = sim.fixtures;
    type Raw = { metadata: { raw: string; indexedAt: string } };
    const json = await call<Raw>(
      sim,
      `/foundational/v1beta2/nfts/${token.contract}/${token.tokenId}/raw_metadata`,
    );
    const text = await call<Raw>(
      sim,
      `/foundational/v1beta2/nfts/${tokenWithTextMetadata.contract}/${tokenWithTextMetadata.tokenId}/raw_metadata`,
    );
    const textDetails = await call<{ nft: NftJson }>(
      sim,
      `/foundational/v1beta2/nfts/${tokenWithTextMetadata.contract}/${tokenWithTextMetadata.tokenId}/details`,
    );
    expect(JSON.parse(json.json.metadata.raw)).toMatchObject({ name: expect.any(String) });
    expect(json.json.metadata.indexedAt).toMatch(/\.\d{6}Z$/);
    expect(() => JSON.parse(text.json.metadata.raw)).toThrow();
    expect(textDetails.json.nft.metadata.metadataUri.mimeType).toBe("text/plain");
  });

  it("13: NFTs by owner accepts an ENS name, filters and pages", async () => {
    const { wallet, walletEns, collection } = sim.fixtures;
    type Tokens = {
      tokens: { contractAddress: string; tokenId: string; type: string; quantity: string }[];
    };
    const all = await call<Tokens>(sim, `/foundational/v1beta2/nfts/by_owner/${wallet}?limit=500`);
    const byName = await call<Tokens>(
      sim,
      `/foundational/v1beta2/nfts/by_owner/${walletEns}?limit=500`,
    );
    const paged = await call<Tokens>(
      sim,
      `/foundational/v1beta2/nfts/by_owner/${wallet}?limit=3&offset=3`,
    );
    const one = await call<Tokens>(
      sim,
      `/foundational/v1beta2/nfts/by_owner/${wallet}?limit=500&contractAddress=${collection.toUpperCase().replace("0X", "0x")}`,
    );
    const multi = await call<Tokens>(
      sim,
      `/foundational/v1beta2/nfts/by_owner/${wallet}?limit=500&tokenTypes=TYPE_ERC1155`,
    );
    expect(all.json.tokens.length).toBeGreaterThan(10);
    expect(byName.json).toEqual(all.json);
    expect(paged.json.tokens).toEqual(all.json.tokens.slice(3, 6));
    expect(one.json.tokens.length).toBeGreaterThan(0);
    expect(one.json.tokens.every((t) => t.contractAddress === collection)).toBe(true);
    expect(multi.json.tokens.length).toBeGreaterThan(0);
    expect(multi.json.tokens.every((t) => t.type === "TYPE_ERC1155")).toBe(true);
    expect(
      (await call(sim, `/foundational/v1beta2/nfts/by_owner/${wallet}?tokenTypes=NFT`)).status,
    ).toBe(400);
    expect((await call(sim, "/foundational/v1beta2/nfts/by_owner/nobody-here.eth")).status).toBe(
      404,
    );
  });

  it("14: a token with several owners, by quantity descending", async () => {
    const { multiOwnerToken } = sim.fixtures;
    const path = `/foundational/v1beta2/nfts/${multiOwnerToken.contract}/${multiOwnerToken.tokenId}/owners`;
    type Owners = { owners: { address: string; quantity: string }[] };
    const all = await call<Owners>(sim, `${path}?limit=500`);
    const page = await call<Owners>(sim, `${path}?limit=2&offset=1`);
    expect(all.json.owners.length).toBeGreaterThanOrEqual(3);
    expect(isSortedDescending(all.json.owners.map((owner) => Number(owner.quantity)))).toBe(true);
    expect(page.json.owners).toEqual(all.json.owners.slice(1, 3));
  });
});

describe("collections", () => {
  it("15: ranks by each metric, descending, with only that metric's field", async () => {
    const fields = {
      METRIC_SALES_VOLUME: "salesVolume",
      METRIC_SALES_QUANTITY: "salesCount",
      METRIC_MAX_PRICE: "maxPrice",
    } as const;
    for (const [metric, field] of Object.entries(fields)) {
      const reply = await call<{ collections: Record<string, string>[] }>(
        sim,
        `/collections/v1beta2/top/${metric}/DURATION_7_DAYS?limit=50`,
      );
      const items = reply.json.collections;
      expect(items.length).toBeGreaterThan(5);
      for (const item of items) {
        expect(Object.keys(item).sort()).toEqual(["contractAddress", "contractName", field].sort());
      }
      expect(isSortedDescending(items.map((item) => Number(item[field])))).toBe(true);
    }
    const day = await call<{ collections: unknown[] }>(
      sim,
      "/collections/v1beta2/top/METRIC_SALES_QUANTITY/DURATION_1_DAY",
    );
    expect(day.json.collections.length).toBeGreaterThan(0);
    expect(
      (await call(sim, "/collections/v1beta2/top/METRIC_AVG_PRICE/DURATION_1_DAY")).status,
    ).toBe(400);
    expect(
      (await call(sim, "/collections/v1beta2/top/METRIC_MAX_PRICE/DURATION_1_HOUR")).status,
    ).toBe(400);
  });

  it("16: the owners list uses the key `owner`, sorted by owned count", async () => {
    const path = `/collections/v1beta2/${sim.fixtures.erc1155Collection}/owners_list`;
    type Owners = { owner: { address: string; ownedCount: string }[] };
    const desc = await call<Owners>(sim, `${path}?limit=50`);
    const asc = await call<Owners>(sim, `${path}?limit=50&sortDirection=SORT_DIRECTION_ASC`);
    expect(desc.json.owner).toHaveLength(50);
    expect(isSortedDescending(desc.json.owner.map((o) => Number(o.ownedCount)))).toBe(true);
    expect(Number(asc.json.owner[0]?.ownedCount)).toBeLessThanOrEqual(
      Number(asc.json.owner.at(-1)?.ownedCount),
    );
  });

  it("17: N daily points for N days, consecutive UTC days, oldest first", async () => {
    const base = `/collections/v1beta2/${sim.fixtures.collection}/owners_count`;
    type Points = { dataPoints: { timestamp: string; count: string }[] };
    const month = await call<Points>(sim, `${base}/DURATION_30_DAYS/GROUP_BY_PERIOD_1_DAY`);
    const year = await call<Points>(sim, `${base}/DURATION_365_DAYS/GROUP_BY_PERIOD_1_DAY`);
    const past = await call<Points>(
      sim,
      `${base}/DURATION_7_DAYS/GROUP_BY_PERIOD_1_DAY?timestampLt=2020-01-08T00:00:00Z`,
    );
    expect(month.json.dataPoints).toHaveLength(30);
    expect(year.json.dataPoints).toHaveLength(365);
    const times = month.json.dataPoints.map((point) => Date.parse(point.timestamp));
    for (const [i, time] of times.entries()) {
      if (i > 0) expect(time - (times[i - 1] ?? 0)).toBe(86_400_000);
    }
    expect(past.json.dataPoints.map((p) => p.timestamp)).toEqual([
      "2020-01-01T00:00:00Z",
      "2020-01-02T00:00:00Z",
      "2020-01-03T00:00:00Z",
      "2020-01-04T00:00:00Z",
      "2020-01-05T00:00:00Z",
      "2020-01-06T00:00:00Z",
      "2020-01-07T00:00:00Z",
    ]);
    expect((await call(sim, `${base}/DURATION_30_DAYS/GROUP_BY_PERIOD_1_WEEK`)).status).toBe(400);
    expect(
      (await call(sim, `${base}/DURATION_30_DAYS/GROUP_BY_PERIOD_1_DAY?timestampLt=x`)).status,
    ).toBe(400);
  });
});

describe("wallets", () => {
  it("18: labels spam NFTs; the two filters partition the list", async () => {
    type Nfts = { nfts: { nft: NftJson; quantity: string; spam: boolean }[] };
    const base = `/wallets/v1beta2/${sim.fixtures.wallet}/nfts`;
    const all = await call<Nfts>(sim, base);
    const only = await call<Nfts>(sim, `${base}?spam=SPAM_FILTER_ONLY`);
    const exclude = await call<Nfts>(sim, `${base}?spam=SPAM_FILTER_EXCLUDE`);
    expect(only.json.nfts.length).toBeGreaterThan(0);
    expect(only.json.nfts.every((item) => item.spam)).toBe(true);
    expect(exclude.json.nfts.every((item) => !item.spam)).toBe(true);
    expect(only.json.nfts.length + exclude.json.nfts.length).toBe(all.json.nfts.length);
    expect(only.json.nfts.map((item) => item.nft.contractAddress)).toContain(
      sim.fixtures.spamCollection,
    );
    expect((await call(sim, `${base}?spam=SPAM_FILTER_MAYBE`)).status).toBe(400);
  });

  it("19, 20: reports answer {} and are recorded; tokenId and feedback in the query", async () => {
    const { wallet, walletEns, spamCollection, token } = sim.fixtures;
    const spam = await call(
      sim,
      `/wallets/v1beta2/${walletEns}/report_spam/${spamCollection}?feedback=${encodeURIComponent("free ETH? no")}`,
    );
    const notSpam = await call(
      sim,
      `/wallets/v1beta2/${wallet}/report_not_spam/${token.contract}?tokenId=${token.tokenId}`,
    );
    expect([spam.status, spam.json, notSpam.status, notSpam.json]).toEqual([200, {}, 200, {}]);
    expect(sim.reports.slice(-2)).toEqual([
      {
        kind: "spam",
        walletAddress: wallet,
        contractAddress: spamCollection,
        feedback: "free ETH? no",
        at: expect.any(Number),
      },
      {
        kind: "not_spam",
        walletAddress: wallet,
        contractAddress: token.contract,
        tokenId: token.tokenId,
        at: expect.any(Number),
      },
    ]);
    const unknownToken = await call(
      sim,
      `/wallets/v1beta2/${wallet}/report_spam/${token.contract}?tokenId=123456789`,
    );
    expect(unknownToken.status).toBe(404);
  });

  it("21: forward lookup of .eth, DNS, subdomain and emoji names", async () => {
    const { dnsName, subdomain, subdomainParent, walletEns, wallet, emojiEnsName } = sim.fixtures;
    const lookup = (name: string) =>
      call<{ entity: EnsEntityJson }>(
        sim,
        `/wallets/v1beta2/ens/by_name/${encodeURIComponent(name)}`,
      );
    const [eth, dns, sub, emoji, upper] = await Promise.all(
      [walletEns, dnsName, subdomain, emojiEnsName, walletEns.toUpperCase()].map(lookup),
    );
    expect(eth?.json.entity).toMatchObject({ name: walletEns, resolvedAddress: wallet });
    expect(eth?.json.entity.validTillTimestamp).toMatch(TIMESTAMP);
    expect(eth?.json.entity.validFromTimestamp).toMatch(TIMESTAMP);
    expect(dns?.json.entity.validTillTimestamp).toBeNull();
    expect(sub?.json.entity.parentName).toBe(subdomainParent);
    expect(emoji?.status).toBe(200);
    expect(upper?.json).toEqual(eth?.json);
    expect((await lookup("nobody-here.eth")).status).toBe(404);
    expect((await lookup("bad..eth")).status).toBe(400);
    expect((await lookup("no-tld")).status).toBe(400);
  });

  it("22: reverse lookup lists every name of an address", async () => {
    const { multiNameWallet, multiNameWalletNames, unknownAddress } = sim.fixtures;
    type Entities = { entities: EnsEntityJson[] };
    const many = await call<Entities>(
      sim,
      `/wallets/v1beta2/ens/by_address/${multiNameWallet.toUpperCase().replace("0X", "0x")}`,
    );
    const none = await call<Entities>(sim, `/wallets/v1beta2/ens/by_address/${unknownAddress}`);
    expect(multiNameWalletNames.length).toBeGreaterThanOrEqual(3);
    expect(many.json.entities.map((entity) => entity.name)).toEqual(multiNameWalletNames);
    expect(many.json.entities.some((entity) => entity.validTillTimestamp === null)).toBe(true);
    expect(none.json).toEqual({ entities: [] });
    expect((await call(sim, "/wallets/v1beta2/ens/by_address/0xnothex")).status).toBe(400);
  });
});

describe("the cast of well-known names", () => {
  const address = (symbol: string) =>
    CAST_COLLECTIONS.find((c) => c.symbol === symbol)?.address.toLowerCase() ?? "";
  type Nfts = { nfts: { nft: NftJson; quantity: string; spam: boolean }[] };

  it("21, 22: vitalik.eth and its other names, nick.eth, and a DNS name that never expires", async () => {
    type Entities = { entities: EnsEntityJson[] };
    const names = await call<Entities>(sim, `/wallets/v1beta2/ens/by_address/${VITALIK}`);
    expect(names.json.entities.map((entity) => entity.name)).toEqual([
      "vitalik.eth",
      "vbuterin.eth",
      "vitalik.ca",
    ]);
    for (const entity of names.json.entities) {
      expect(entity.resolvedAddress).toBe(VITALIK.toLowerCase());
      expect(Date.parse(entity.validFromTimestamp)).toBeLessThan(Date.now());
      if (entity.validTillTimestamp !== null) {
        expect(Date.parse(entity.validTillTimestamp)).toBeGreaterThan(Date.now());
      }
    }
    expect(names.json.entities.find((e) => e.name === "vitalik.ca")?.validTillTimestamp).toBeNull();
    const nick = await call<{ entity: EnsEntityJson }>(
      sim,
      "/wallets/v1beta2/ens/by_name/Nick.eth",
    );
    expect(nick.json.entity.resolvedAddress).toBe(NICK.toLowerCase());
    const behaviors = await call<{ aggregatedBehaviors: AggregatedBehaviorJson[] }>(
      sim,
      "/audiences/v1beta1/behaviors/by_wallets",
      { body: { walletAddresses: ["vitalik.eth", VITALIK, "vbuterin.eth", "nick.eth"] } },
    );
    expect(behaviors.json.aggregatedBehaviors.map((item) => item.behavior).sort()).toEqual([
      "BEHAVIOR_COLLECTOR",
      "BEHAVIOR_INFLUENCER",
    ]);
  });

  it("10, 11: the famous collections at their real addresses, with every token of their supply", async () => {
    type Contracts = { contracts: Contract[] };
    const all = await call<Contracts>(sim, "/foundational/v1beta2/contracts?limit=500");
    const punks = await call<Contracts>(
      sim,
      "/foundational/v1beta2/contracts?limit=500&contractTypes=TYPE_CRYPTOPUNKS",
    );
    expect(punks.json.contracts.map((c) => c.address)).toEqual([address("PUNK")]);
    expect(sim.fixtures.cryptopunksCollection).toBe(address("PUNK"));
    for (const spec of CAST_COLLECTIONS) {
      const contract = all.json.contracts.find((c) => c.address === spec.address.toLowerCase());
      expect(contract).toMatchObject({ name: spec.name, symbol: spec.symbol, types: [spec.type] });
      expect(all.json.contracts.filter((c) => c.name === spec.name)).toHaveLength(1);
      const nft = (id: number) =>
        call<{ nft: NftJson }>(sim, `/foundational/v1beta2/nfts/${spec.address}/${id}/details`);
      const last = spec.firstId + spec.supply - 1;
      const [first, final, beyond, before] = await Promise.all(
        [spec.firstId, last, last + 1, spec.firstId - 1].map(nft),
      );
      expect(first?.json.nft).toMatchObject({ type: spec.type, collection: { name: spec.name } });
      expect(first?.json.nft.metadata.name).toBe(`${spec.name} #${spec.firstId}`);
      expect(final?.status).toBe(200);
      expect(beyond?.status).toBe(404);
      expect(before?.status).toBe(spec.firstId === 0 ? 400 : 404);
    }
  });

  it.each(CAST_COLLECTIONS)(
    "2, 3, 4, 6, 16, 17: the owners of $symbol agree across endpoints",
    async ({ address: mixedCase, supply }) => {
      const contract = mixedCase.toLowerCase();
      const summary = await call<{ aggregatedBehaviors: AggregatedBehaviorJson[] }>(
        sim,
        `/audiences/v1beta1/behaviors/by_collection/${mixedCase}`,
      );
      const details = await call<{ walletBehaviors: WalletBehaviorJson[] }>(
        sim,
        `/audiences/v1beta1/behaviors/by_collection/${contract}/details`,
      );
      const stats = await call<FinancialStatsJson>(
        sim,
        `/audiences/v1beta1/financial_stats/by_collection/${contract}`,
      );
      const profile = await call<{ financialProfile: { walletsCount: string } }>(
        sim,
        `/audiences/v1beta1/financial_profiles/by_collection/${contract}`,
      );
      const year = await call<{ dataPoints: { count: string }[] }>(
        sim,
        `/collections/v1beta2/${contract}/owners_count/DURATION_365_DAYS/GROUP_BY_PERIOD_1_DAY`,
      );
      const owners = Number(stats.json.walletsCount);
      expect(owners).toBeGreaterThan(500);
      const items = summary.json.aggregatedBehaviors;
      expect(sum(items.map((item) => Number(item.walletsCount)))).toBe(owners);
      expect(sum(items.map((item) => Number(item.walletsCountChange30d)))).toBe(
        owners - Number(year.json.dataPoints.at(-31)?.count),
      );
      expect(details.json.walletBehaviors).toHaveLength(owners);
      expect(profile.json.financialProfile.walletsCount).toBe(String(owners));
      const counts = year.json.dataPoints.map((point) => Number(point.count));
      expect(counts).toHaveLength(365);
      expect(counts.at(-1)).toBe(owners);
      expect(counts.every((count) => count > 0)).toBe(true);
      let held = 0;
      let listed = 0;
      for (let offset = 0; offset < owners; offset += 500) {
        const page = await call<{ owner: { ownedCount: string }[] }>(
          sim,
          `/collections/v1beta2/${contract}/owners_list?limit=500&offset=${offset}`,
        );
        listed += page.json.owner.length;
        held += sum(page.json.owner.map((owner) => Number(owner.ownedCount)));
      }
      expect([listed, held]).toEqual([owners, supply]);
    },
  );

  it("15: every famous collection is in the top 10 of every metric and duration", async () => {
    const famous = CAST_COLLECTIONS.map((spec) => spec.address.toLowerCase()).sort();
    for (const metric of ["METRIC_SALES_VOLUME", "METRIC_SALES_QUANTITY", "METRIC_MAX_PRICE"]) {
      for (const duration of ["1_DAY", "7_DAYS", "30_DAYS", "365_DAYS"]) {
        const top = await call<{ collections: { contractAddress: string }[] }>(
          sim,
          `/collections/v1beta2/top/${metric}/DURATION_${duration}?limit=10`,
        );
        const ranked = top.json.collections.map((item) => item.contractAddress);
        expect(
          famous.filter((a) => ranked.includes(a)),
          `${metric} ${duration}`,
        ).toEqual(famous);
      }
    }
  });

  it("7, 9: BAYC's owners hold MAYC most, and both segment together", async () => {
    const common = await call<{ collections: { contractAddress: string }[] }>(
      sim,
      `/audiences/v1beta1/common/collections/${address("BAYC")}`,
    );
    expect(common.json.collections[0]?.contractAddress).toBe(address("MAYC"));
    type Wallets = { wallets: { walletAddress: string }[] };
    const segment = (condition: string) =>
      call<Wallets>(sim, "/audiences/v1beta1/segmented_audience", {
        body: {
          collections: [{ contractAddress: address("BAYC") }, { contractAddress: address("MAYC") }],
          collectionsCondition: condition,
          nftsPurchasesVolumeGte: "100",
          limit: 500,
        },
      });
    const [all, any] = await Promise.all([segment("CONDITION_ALL"), segment("CONDITION_ANY")]);
    expect(all.json.wallets.length).toBeGreaterThan(20);
    expect(any.json.wallets.length).toBeGreaterThan(all.json.wallets.length);
    expect(any.json.wallets.length).toBeLessThan(500);
  });

  it("13, 18: vitalik.eth holds famous NFTs and a spam-flagged airdrop", async () => {
    const base = "/wallets/v1beta2/vitalik.eth/nfts";
    const [all, only, exclude] = await Promise.all([
      call<Nfts>(sim, base),
      call<Nfts>(sim, `${base}?spam=SPAM_FILTER_ONLY`),
      call<Nfts>(sim, `${base}?spam=SPAM_FILTER_EXCLUDE`),
    ]);
    expect(only.json.nfts.map((item) => [item.nft.collection.name, item.spam])).toEqual([
      [CAST_AIRDROP.name, true],
    ]);
    const held = new Set(exclude.json.nfts.map((item) => item.nft.contractAddress));
    expect(held).toEqual(new Set([address("BAYC"), address("MAYC"), address("PPG")]));
    expect(all.json.nfts).toHaveLength(only.json.nfts.length + exclude.json.nfts.length);
    const byOwner = await call<{ tokens: { tokenId: string }[] }>(
      sim,
      `/foundational/v1beta2/nfts/by_owner/${VITALIK}?contractAddress=${address("BAYC")}`,
    );
    expect(byOwner.json.tokens.length).toBeGreaterThan(0);
    const nick = await call<Nfts>(sim, "/wallets/v1beta2/nick.eth/nfts");
    expect(nick.json.nfts.length).toBeGreaterThan(0);
  });

  it("13, 18: the demo wallet's published key is its address's, and it holds BAYC, Azuki and Pudgy Penguins", async () => {
    expect(privateKeyToAccount(DEMO_WALLET.privateKey).address).toBe(DEMO_WALLET.address);
    const held = await call<Nfts>(sim, `/wallets/v1beta2/${DEMO_WALLET.address}/nfts`);
    expect(
      held.json.nfts.map((item) => [item.nft.contractAddress, item.nft.tokenId]).sort(),
    ).toEqual(
      [
        [address("BAYC"), "7495"],
        [address("AZUKI"), "9605"],
        [address("PPG"), "6873"],
      ].sort(),
    );
    const profile = await call<{ aggregatedBehaviors: AggregatedBehaviorJson[] }>(
      sim,
      "/audiences/v1beta1/behaviors/by_wallets",
      { body: { walletAddresses: [DEMO_WALLET.address] } },
    );
    expect(profile.json.aggregatedBehaviors.map((item) => item.behavior)).toEqual([
      "BEHAVIOR_COLLECTOR",
    ]);
  });
});

describe("bad input", () => {
  const by = "/audiences/v1beta1/behaviors/by_wallets";

  it("refuses malformed wallet lists and bodies with 400 and a JSON error", async () => {
    const wallets = (count: number) =>
      Array.from({ length: count }, (_, i) => `0x${i.toString(16).padStart(40, "0")}`);
    const replies = await Promise.all([
      call(sim, by, { body: { walletAddresses: wallets(501) } }),
      call(sim, by, { body: { walletAddresses: [] } }),
      call(sim, by, { body: { walletAddresses: ["0x123"] } }),
      call(sim, by, { body: { walletAddresses: ["nobody-here.eth"] } }),
      call(sim, by, { body: { walletAddresses: [42] } }),
      call(sim, by, { body: "{not json" }),
      call(sim, by, { body: [] }),
    ]);
    expect(replies.map((reply) => reply.status)).toEqual([400, 400, 400, 400, 400, 400, 400]);
    for (const reply of replies) {
      expect(reply.json).toEqual({ code: 3, message: expect.any(String) });
    }
    const ok = await call(sim, by, { body: { walletAddresses: wallets(500) } });
    expect(ok.status).toBe(200);
  });

  it("answers 404 on unknown paths, contracts and names; 405 on a wrong method", async () => {
    const { unknownAddress } = sim.fixtures;
    const replies = await Promise.all([
      call(sim, "/audiences/v1beta2/behaviors/by_wallets", { body: { walletAddresses: [] } }),
      call(sim, `/audiences/v1beta1/behaviors/by_collection/${unknownAddress}`),
      call(sim, `/wallets/v1beta2/nobody-here.eth/nfts`),
      call(sim, by),
    ]);
    expect(replies.map((reply) => reply.status)).toEqual([404, 404, 404, 405]);
    expect(replies[1]?.json).toEqual({ code: 5, message: expect.any(String) });
  });

  it("survives hostile input and keeps serving", async () => {
    const replies = await Promise.all([
      call(sim, "/wallets/v1beta2/%E0%A4%A/nfts"),
      call(sim, "/wallets/v1beta2/ens/by_name/%00.eth"),
      call(sim, by, { body: "x".repeat(1_100_000) }),
      call(sim, by, { body: { walletAddresses: [{ toString: "0x" }] } }),
      call(sim, "/foundational/v1beta2/contracts?limit=1e3"),
    ]);
    expect(replies.map((reply) => reply.status)).toEqual([400, 400, 413, 400, 400]);
    const after = await call(sim, `/wallets/v1beta2/ens/by_name/${sim.fixtures.walletEns}`);
    expect(after.status).toBe(200);
  });
});

describe("fault injection", () => {
  const path = () => `/wallets/v1beta2/ens/by_name/${sim.fixtures.walletEns}`;

  it("answers 429 with Retry-After, and the configured error statuses", async () => {
    sim.setFaults({ rateLimitRate: 1, retryAfterSeconds: 7 });
    const limited = await call(sim, path());
    sim.setFaults({ rateLimitRate: 0, errorRates: { 503: 1 } });
    const unavailable = await call(sim, path());
    expect(limited.status).toBe(429);
    expect(limited.headers.get("retry-after")).toBe("7");
    expect(limited.json).toEqual({ code: 8, message: expect.any(String) });
    expect(unavailable.status).toBe(503);
    sim.clearFaults();
    expect((await call(sim, path())).status).toBe(200);
  });

  it("faults come after authentication", async () => {
    sim.setFaults({ errorRates: { 500: 1 } });
    expect((await call(sim, path(), { key: "wrong" })).status).toBe(401);
  });

  it("serves truncated and malformed JSON with status 200", async () => {
    sim.setFaults({ truncatedJsonRate: 1 });
    const truncated = await call(sim, path());
    sim.setFaults({ truncatedJsonRate: 0, malformedJsonRate: 1 });
    const malformed = await call<unknown>(sim, path());
    expect(truncated.status).toBe(200);
    expect(truncated.json).toBeUndefined();
    expect(truncated.text.length).toBeGreaterThan(10);
    expect(malformed.status).toBe(200);
    expect((malformed.json as { entity?: unknown } | undefined)?.entity).toBeUndefined();
  });

  it("adds latency", async () => {
    sim.setFaults({ latencyMs: 120 });
    const started = Date.now();
    await call(sim, path());
    expect(Date.now() - started).toBeGreaterThanOrEqual(110);
  });

  it("plays scripted responses first, in order, and counts requests", async () => {
    const before = sim.countRequests("/wallets/v1beta2/ens/");
    sim.setFaults({ errorRates: { 502: 1 } });
    sim.script([
      { status: 503, retryAfterSeconds: 2 },
      { status: 429 },
      { status: 200, body: '{"entity": 5}' },
      { status: 200 },
    ]);
    const replies = [];
    for (let i = 0; i < 5; i++) replies.push(await call(sim, path()));
    expect(replies.map((reply) => reply.status)).toEqual([503, 429, 200, 200, 502]);
    expect(replies[0]?.headers.get("retry-after")).toBe("2");
    expect(replies[1]?.headers.get("retry-after")).toBeNull();
    expect(replies[2]?.json).toEqual({ entity: 5 });
    expect(replies[3]?.json).toMatchObject({ entity: { name: sim.fixtures.walletEns } });
    expect(sim.countRequests("/wallets/v1beta2/ens/") - before).toBe(5);
  });

  it("leaves hung requests open until close()", async () => {
    const other = await startSimulator({ faults: { hangRate: 1 } });
    const pending = fetch(`${other.url}/foundational/v1beta2/contracts`, {
      headers: { "x-api-key": other.apiKey },
    });
    const outcome = pending.then(
      () => "answered",
      () => "failed",
    );
    while (other.countRequests() === 0) await new Promise((resolve) => setTimeout(resolve, 10));
    const early = await Promise.race([
      outcome,
      new Promise((resolve) => setTimeout(() => resolve("still hanging"), 100)),
    ]);
    other.clearFaults();
    other.script([{ status: 200, hang: true }]);
    const scripted = fetch(`${other.url}/foundational/v1beta2/contracts`, {
      headers: { "x-api-key": other.apiKey },
    }).then(
      () => "answered",
      () => "failed",
    );
    while (other.countRequests() < 2) await new Promise((resolve) => setTimeout(resolve, 10));
    await other.close();
    expect(early).toBe("still hanging");
    expect(await outcome).toBe("failed");
    expect(await scripted).toBe("failed");
  });
});

describe("minting", () => {
  it("new contracts appear after blockTimestampGt, strictly later than the rest", async () => {
    type Contracts = { contracts: Contract[] };
    const latest = await call<Contracts>(
      sim,
      "/foundational/v1beta2/contracts?limit=1&sortDirection=SORT_DIRECTION_DESC",
    );
    const since = latest.json.contracts[0]?.mintEvent.blockTimestamp ?? "";
    const minted = sim.mint(3);
    const fresh = await call<Contracts>(
      sim,
      `/foundational/v1beta2/contracts?blockTimestampGt=${since}`,
    );
    expect(fresh.json.contracts).toEqual(minted);
    const times = minted.map((contract) => Date.parse(contract.mintEvent.blockTimestamp));
    expect(times[0]).toBeGreaterThan(Date.parse(since));
    expect(times.every((time, i) => i === 0 || time > (times[i - 1] ?? time))).toBe(true);
  });

  it("timed mints follow the injected clock: a contract a slot, at the slot's start", async () => {
    const start = Date.UTC(2030, 0, 1);
    let clock = start;
    const timed = await startSimulator({ seed: 3, mintIntervalMs: 1000, now: () => clock });
    const after = `/foundational/v1beta2/contracts?limit=100&blockTimestampGt=${new Date(start).toISOString()}`;
    try {
      expect((await call<{ contracts: Contract[] }>(timed, after)).json.contracts).toEqual([]);
      clock += 60_000;
      const reply = await call<{ contracts: Contract[] }>(timed, after);
      expect(reply.json.contracts).toHaveLength(60);
      expect(reply.json.contracts[0]?.mintEvent.blockTimestamp).toBe("2030-01-01T00:00:01Z");
      expect(reply.json.contracts.at(-1)?.mintEvent.blockTimestamp).toBe("2030-01-01T00:01:00Z");
      // A clock that stands still brings none.
      expect((await call<{ contracts: Contract[] }>(timed, after)).json.contracts).toHaveLength(60);
    } finally {
      await timed.close();
    }
  });
});

describe("the timed mints across restarts", () => {
  type Contracts = { contracts: Contract[] };
  /** The first `count` contracts after a minute before `atMs`, of a simulator on a clock standing at `atMs`. */
  async function timedMints(atMs: number, count: number, chains = ["ethereum"]) {
    const timed = await startSimulator({ seed: 5, mintIntervalMs: 10, now: () => atMs, chains });
    try {
      const since = new Date(atMs - 60_000).toISOString();
      const minted = async (chain: string) =>
        (
          await call<Contracts>(
            timed,
            `/${chain}/foundational/v1beta2/contracts?limit=${count}&blockTimestampGt=${since}`,
          )
        ).json.contracts.map((contract) => contract.address);
      return Object.fromEntries(
        await Promise.all(timed.chains.map(async (chain) => [chain, await minted(chain)] as const)),
      );
    } finally {
      await timed.close();
    }
  }

  it("a simulator started again later lists the same past and new contracts after it; on the same clock, the same ones", async () => {
    const start = Date.UTC(2030, 0, 1);
    const first = await timedMints(start, 5);
    expect(first.ethereum).toHaveLength(5);
    // Started again ten minutes on: the minute before is new slots.
    const again = await timedMints(start + 600_000, 5);
    expect(again.ethereum?.filter((address) => first.ethereum?.includes(address))).toEqual([]);
    // On the same clock, the same contracts (deterministic for tests).
    expect((await timedMints(start, 5)).ethereum).toEqual(first.ethereum);
  });

  it("each chain mints contracts of its own on a slot", async () => {
    const minted = await timedMints(Date.UTC(2030, 0, 1), 3, ["ethereum", "base"]);
    expect(minted.base).toHaveLength(3);
    expect(minted.base?.filter((address) => minted.ethereum?.includes(address))).toEqual([]);
  });
});

describe("a chain's data set is built when it is first needed", () => {
  it("the pollers' requests (recent contracts, minters' behaviors) need only the population, and answer as the whole world does", async () => {
    const clock = Date.UTC(2030, 0, 1);
    const lazy = await startSimulator({
      seed: 4,
      chains: ["ethereum", "base"],
      mintIntervalMs: 10,
      badActorEvery: 3,
      now: () => clock,
    });
    try {
      expect(lazy.built("ethereum")).toBe("nothing");
      expect(lazy.built("base")).toBe("nothing");
      // The timed mints of the last ten minutes.
      const recent = `/base/foundational/v1beta2/contracts?limit=6&blockTimestampGt=${new Date(clock - 600_000).toISOString()}`;
      expect((await call<{ contracts: Contract[] }>(lazy, recent)).json.contracts).toHaveLength(6);
      const minters = [
        ...new Set(
          (await call<{ contracts: Contract[] }>(lazy, recent)).json.contracts.map(
            (contract) => contract.mintEvent.minterAddress,
          ),
        ),
      ];
      const labels = (
        await call(lazy, "/base/audiences/v1beta1/behaviors/by_wallets", {
          body: { walletAddresses: minters },
        })
      ).json;
      const lightContracts = (await call(lazy, recent)).json;
      expect(lazy.built("base")).toBe("population");
      expect(labels).toMatchObject({
        aggregatedBehaviors: expect.arrayContaining([
          expect.objectContaining({ behavior: "BEHAVIOR_BADACTOR" }),
        ]),
      });
      // Anything else builds the whole world, which has the mints too and answers alike.
      const wallet = lazy.fixturesOf("base").wallet;
      expect(lazy.built("base")).toBe("world");
      expect((await call(lazy, `/base/wallets/v1beta2/${wallet}/nfts`)).status).toBe(200);
      // A timed mint served before is known by its address in the whole world too.
      const served = (lightContracts as { contracts: Contract[] }).contracts[0]?.address;
      expect(
        (await call(lazy, `/base/audiences/v1beta1/behaviors/by_collection/${served}`)).status,
      ).toBe(200);
      expect((await call(lazy, recent)).json).toEqual(lightContracts);
      expect(
        (
          await call(lazy, "/base/audiences/v1beta1/behaviors/by_wallets", {
            body: { walletAddresses: minters },
          })
        ).json,
      ).toEqual(labels);
      // A chain nobody asked about is not built; then a wallet the population does not have
      // builds the whole world.
      expect(lazy.built("ethereum")).toBe("nothing");
      await call(lazy, "/audiences/v1beta1/behaviors/by_wallets", {
        body: { walletAddresses: [VITALIK] },
      });
      expect(lazy.built("ethereum")).toBe("world");
    } finally {
      await lazy.close();
    }
  });

  it("every contract of a built world is older than the population's answers reach", () => {
    const world = buildWorld(1, Date.UTC(2030, 0, 1));
    const newest = Math.max(...world.contracts.map((contract) => contract.mintSec));
    expect(newest).toBeLessThanOrEqual(world.anchorSec - BUILT_CONTRACTS_MIN_AGE_SEC);
  });

  it("the whole world built from a population is the world built at once", () => {
    const at = Date.UTC(2030, 0, 1);
    const population = buildPopulation(2, at);
    populationWorld(population);
    const a = buildWorld(2, at, population);
    const b = buildWorld(2, at);
    expect(a.fixtures).toEqual(b.fixtures);
    expect(a.contracts.map((contract) => contract.address)).toEqual(
      b.contracts.map((contract) => contract.address),
    );
    expect(a.wallets.map((wallet) => [wallet.address, wallet.behavior])).toEqual(
      b.wallets.map((wallet) => [wallet.address, wallet.behavior]),
    );
    expect(a.sales.length).toBe(b.sales.length);
  });
});

describe("minters", () => {
  type Behaviors = { aggregatedBehaviors: { behavior: string; walletsCount: string }[] };
  const behaviorsOf = async (of: Simulator, wallets: string[]) =>
    (
      await call<Behaviors>(of, "/audiences/v1beta1/behaviors/by_wallets", {
        body: { walletAddresses: wallets },
      })
    ).json.aggregatedBehaviors;

  it("a mint asked for by a bad actor reads BEHAVIOR_BADACTOR through endpoint 1; random minters never do", async () => {
    const bad = sim.mint(3, undefined, { minter: "badactor" });
    const minters = [...new Set(bad.map((c) => c.mintEvent.minterAddress))];
    expect(minters).toHaveLength(1);
    expect(await behaviorsOf(sim, minters)).toMatchObject([
      { behavior: "BEHAVIOR_BADACTOR", walletsCount: "1" },
    ]);
    const random = sim.mint(300).map((c) => c.mintEvent.minterAddress);
    const behaviors = await behaviorsOf(sim, [...new Set(random)]);
    expect(behaviors.map((b) => b.behavior)).not.toContain("BEHAVIOR_BADACTOR");
    expect(behaviors.length).toBeGreaterThan(1);
    // A given address mints as itself.
    const own = `0x${"ab".repeat(20)}`;
    expect(sim.mint(1, undefined, { minter: own })[0]?.mintEvent.minterAddress).toBe(own);
    expect(() => sim.mint(1, undefined, { minter: "nobody" })).toThrow(/badactor/);
  });

  it("on the timer, every Nth mint is a bad actor's", async () => {
    const start = Date.UTC(2030, 0, 1);
    let clock = start;
    const timed = await startSimulator({
      seed: 3,
      mintIntervalMs: 10,
      badActorEvery: 2,
      now: () => clock,
    });
    clock += 60_000;
    await new Promise((resolve) => setTimeout(resolve, 150));
    try {
      const reply = await call<{ contracts: Contract[] }>(
        timed,
        `/foundational/v1beta2/contracts?limit=500&blockTimestampGt=${new Date(start).toISOString()}`,
      );
      const contracts = reply.json.contracts;
      expect(contracts.length).toBeGreaterThanOrEqual(2);
      const bad = await behaviorsOf(timed, [
        ...new Set(contracts.map((c) => c.mintEvent.minterAddress)),
      ]);
      const badCount = Number(bad.find((b) => b.behavior === "BEHAVIOR_BADACTOR")?.walletsCount);
      expect(badCount).toBe(1);
    } finally {
      await timed.close();
    }
  });
});

describe("determinism", () => {
  it("the same seed gives the same data; another seed does not", async () => {
    const now = () => Date.UTC(2025, 5, 1);
    const a = await startSimulator({ seed: 1, now });
    const b = await startSimulator({ seed: 1, now, reportNotSpamSupported: false });
    const c = await startSimulator({ seed: 2, now });
    try {
      expect(b.fixtures).toEqual(a.fixtures);
      expect(a.fixtures).toEqual(sim.fixtures);
      expect(c.fixtures.collection).not.toBe(a.fixtures.collection);
      const details = (s: Simulator) =>
        call(
          s,
          `/foundational/v1beta2/nfts/${a.fixtures.token.contract}/${a.fixtures.token.tokenId}/details`,
        );
      expect((await details(a)).text).toBe((await details(b)).text);
      const notSpam = await call(
        b,
        `/wallets/v1beta2/${b.fixtures.wallet}/report_not_spam/${b.fixtures.collection}`,
      );
      expect(notSpam.status).toBe(404);
    } finally {
      await Promise.all([a.close(), b.close(), c.close()]);
    }
  });
});
