import { afterEach, beforeEach, describe, expect, it } from "vitest";
import { ApiError } from "../src/api/errors.ts";
import { InvalidInputError } from "../src/api/validate.ts";
import { type ClientSetup, failure, startClient } from "./helpers.ts";

let t: ClientSetup;
afterEach(async () => {
  await t?.close();
});

const lower = (s: string) => s.toLowerCase();

describe("every endpoint against the simulator", () => {
  beforeEach(async () => {
    t = await startClient();
  });

  it("audiences: 1 to 9", async () => {
    const { fixtures: f } = t.sim;
    const byWallets = await t.api.audiences.behaviorsByWallets([f.wallet, f.walletEns]);
    expect(byWallets.aggregatedBehaviors.length).toBeGreaterThan(0);
    expect(
      byWallets.aggregatedBehaviors.every((row) => row.walletsCountChange30d === undefined),
    ).toBe(true);

    const byCollection = await t.api.audiences.behaviorsByCollection(f.collection);
    const share = byCollection.aggregatedBehaviors.reduce(
      (sum, row) => sum + row.walletsPercentage,
      0,
    );
    expect(share).toBeCloseTo(100, 0);
    expect(typeof byCollection.aggregatedBehaviors[0]?.walletsCount).toBe("string");
    expect(
      byCollection.aggregatedBehaviors.some((row) => row.walletsCountChange30d !== undefined),
    ).toBe(true);

    const details = await t.api.audiences.behaviorDetailsByCollection(f.collection);
    expect(details.walletBehaviors[0]).toMatchObject({
      spendIntent: expect.stringMatching(/^SCORE_/),
    });

    const profile = await t.api.audiences.financialProfileByCollection(f.collection);
    expect(typeof profile).toBe("object");

    const stats = await t.api.audiences.financialStatsByWallets([f.wallet], {
      collectionsOwnedCountGte: "1",
    });
    expect(typeof stats.walletsCount).toBe("string");
    expect(typeof stats.nftsPurchasesPriceAvg).toBe("number");
    const body = t.sim.requests.find((r) => r.path.endsWith("/financial_stats/by_wallets"))?.body;
    expect(body).toMatchObject({
      walletAddresses: [expect.any(String)],
      collectionsOwnedCountGte: "1",
    });

    const collectionStats = await t.api.audiences.financialStatsByCollection(f.collection);
    expect(typeof collectionStats.walletAgeMax).toBe("string");

    const common = await t.api.audiences.commonCollections(f.collection);
    expect(common.collections.length).toBeLessThanOrEqual(30);
    for (const c of common.collections)
      expect(BigInt(c.commonOwnersCount) <= BigInt(c.ownersCount)).toBe(true);

    const trends = await t.api.audiences.commonCollectionTrends(f.collection, "DURATION_7_DAYS");
    expect(trends.collections.length).toBeLessThanOrEqual(30);
    expect(t.sim.requests.at(-1)?.query.duration).toBe("DURATION_7_DAYS");

    const segment = await t.api.audiences.segmentedAudience({
      collections: [{ contractAddress: f.collection, nftsOwnedCountGte: "1" }],
      collectionsCondition: "CONDITION_ANY",
      limit: 5,
    });
    expect(segment.wallets.length).toBeLessThanOrEqual(5);
    expect(typeof segment.wallets[0]?.totalSpend).toBe("string");
  });

  it("foundational: 10 to 14, with 78-digit token ids kept as strings", async () => {
    const { fixtures: f } = t.sim;
    const contracts = await t.api.foundational.contracts({
      contractTypes: ["TYPE_ERC721", "TYPE_ERC1155"],
      sortDirection: "SORT_DIRECTION_DESC",
      limit: 5,
    });
    expect(contracts.contracts).toHaveLength(5);
    const times = contracts.contracts.map((c) => Date.parse(c.mintEvent?.blockTimestamp ?? ""));
    expect([...times].sort((a, b) => b - a)).toEqual(times);

    const huge = await t.api.foundational.nftDetails(f.hugeTokenId.contract, f.hugeTokenId.tokenId);
    expect(huge.nft.tokenId).toBe(f.hugeTokenId.tokenId);
    expect(huge.nft.tokenId).toHaveLength(78);

    const details = await t.api.foundational.nftDetails(f.token.contract, f.token.tokenId);
    expect(details.lastSale?.recipientPaid.totalNative).toMatch(/^\d+\.\d+$/);
    expect(details.lastSale?.recipientPaid.fungibleTotals.length).toBeGreaterThan(0);

    const raw = await t.api.foundational.rawMetadata(f.token.contract, f.token.tokenId);
    expect(() => JSON.parse(raw.metadata.raw)).not.toThrow();

    const owned = await t.api.foundational.nftsByOwner(f.wallet, { limit: 3 });
    expect(owned.tokens.length).toBeLessThanOrEqual(3);

    const owners = await t.api.foundational.tokenOwners(
      f.multiOwnerToken.contract,
      f.multiOwnerToken.tokenId,
    );
    expect(owners.owners.length).toBeGreaterThan(1);
  });

  it("collections: 15 to 17", async () => {
    const { fixtures: f } = t.sim;
    const top = await t.api.collections.top("METRIC_SALES_QUANTITY", "DURATION_30_DAYS", {
      limit: 5,
    });
    expect(top.collections.length).toBeGreaterThan(0);
    expect(
      top.collections.every((c) => c.salesCount !== undefined && c.salesVolume === undefined),
    ).toBe(true);

    const owners = await t.api.collections.ownersList(f.collection, {
      sortDirection: "SORT_DIRECTION_DESC",
      limit: 10,
    });
    expect(owners.owner.length).toBe(10);

    const history = await t.api.collections.ownersCount(
      f.collection,
      "DURATION_30_DAYS",
      "GROUP_BY_PERIOD_1_DAY",
    );
    expect(history.dataPoints).toHaveLength(30);
  });

  it("wallets: 18 to 22, with ENS names and DNS names", async () => {
    const { fixtures: f } = t.sim;
    const nfts = await t.api.wallets.nfts(f.wallet, { spam: "SPAM_FILTER_ONLY" });
    expect(nfts.nfts.length).toBeGreaterThan(0);
    expect(nfts.nfts.every((item) => item.spam)).toBe(true);

    await t.api.wallets.reportSpam({
      wallet: f.wallet,
      contract: f.spamCollection,
      tokenId: "1",
      feedback: "airdrop scam",
    });
    const spamRequest = t.sim.requests.at(-1);
    expect(spamRequest?.path).toContain("/report_spam/");
    expect(spamRequest?.query).toMatchObject({ tokenId: "1", feedback: "airdrop scam" });

    await t.api.wallets.reportNotSpam({ wallet: f.wallet, contract: f.collection });
    expect(t.sim.requests.at(-1)?.path).toMatch(
      /^\/wallets\/v1beta2\/0x[0-9a-fA-F]{40}\/report_not_spam\/0x/,
    );
    expect(t.sim.reports.map((r) => r.kind)).toEqual(["spam", "not_spam"]);

    const forward = await t.api.wallets.ensByName(f.walletEns.toUpperCase());
    expect(lower(forward.entity.resolvedAddress)).toBe(lower(f.wallet));

    const dns = await t.api.wallets.ensByName(f.dnsName);
    expect(dns.entity.validTillTimestamp).toBeNull();

    const sub = await t.api.wallets.ensByName(f.subdomain);
    expect(sub.entity.parentName).toBe(f.subdomainParent);

    const reverse = await t.api.wallets.ensByAddress(f.multiNameWallet);
    expect(reverse.entities.map((e) => e.name).sort()).toEqual([...f.multiNameWalletNames].sort());
  });

  it("URL-encodes path segments (unicode ENS names)", async () => {
    await t.api.wallets.ensByName(t.sim.fixtures.emojiEnsName);
    expect(t.sim.requests.at(-1)?.path).toMatch(/\/ens\/by_name\/(%[0-9A-F]{2})+\.eth$/);
  });

  it("checks input before any request", async () => {
    const { fixtures: f } = t.sim;
    const bad = [
      t.api.foundational.nftDetails(f.collection, "1".repeat(79)),
      t.api.foundational.nftDetails(f.collection, "-1"),
      t.api.foundational.nftDetails("0x123", "1"),
      t.api.wallets.ensByName("bad_name.eth"),
      t.api.audiences.behaviorsByWallets([]),
      t.api.audiences.behaviorsByWallets(
        Array.from({ length: 501 }, (_, i) => `0x${(i + 1).toString(16).padStart(40, "0")}`),
      ),
      t.api.audiences.segmentedAudience({ collections: [] }),
      t.api.audiences.segmentedAudience({
        collections: [
          { contractAddress: f.collection },
          { contractAddress: f.collection },
          { contractAddress: f.collection },
        ],
      }),
      t.api.collections.top("METRIC_AVERAGE_PRICE" as never, "DURATION_1_DAY"),
      t.api.collections.top("METRIC_SALES_VOLUME", "DURATION_1_HOUR" as never),
      t.api.wallets.nfts(f.wallet, { spam: "SPAM_FILTER_ALL" as never }),
      t.api.foundational.contracts({ contractTypes: ["TYPE_ERC20"] }),
    ];
    for (const call of bad) expect(await failure(call)).toBeInstanceOf(InvalidInputError);
    expect(t.sim.countRequests()).toBe(0);
  });
});

describe("errors", () => {
  it.each([
    [{ status: 400 }, "bad_request"],
    [{ status: 404 }, "not_found"],
    [{ status: 401 }, "unauthorized"],
  ] as const)("%j becomes %s, not retried", async (scripted, kind) => {
    t = await startClient();
    t.sim.script([scripted]);
    const error = await failure(t.api.collections.top("METRIC_SALES_VOLUME", "DURATION_1_DAY"));
    expect(error).toBeInstanceOf(ApiError);
    expect((error as ApiError).kind).toBe(kind);
    expect((error as ApiError).status).toBe(scripted.status);
    expect(t.sim.countRequests()).toBe(1);
  });

  it("a wrong API key is unauthorized", async () => {
    t = await startClient({}, {}, { apiKey: "wrong-key-123" });
    const error = (await failure(
      t.api.collections.top("METRIC_SALES_VOLUME", "DURATION_1_DAY"),
    )) as ApiError;
    expect(error.kind).toBe("unauthorized");
  });

  it("unknown things are not_found", async () => {
    t = await startClient();
    const error = (await failure(
      t.api.foundational.nftDetails(t.sim.fixtures.unknownAddress, "1"),
    )) as ApiError;
    expect(error.kind).toBe("not_found");
    expect(error.method).toBe("GET");
    expect(error.path).toContain("/details");
    expect(
      ((await failure(t.api.wallets.ensByName("no-such-name-xyz.eth"))) as ApiError).kind,
    ).toBe("not_found");
  });

  it("takes the message from a JSON error body", async () => {
    t = await startClient();
    t.sim.script([
      { status: 400, body: JSON.stringify({ code: 3, message: "walletAddresses is malformed" }) },
    ]);
    const error = (await failure(
      t.api.audiences.behaviorsByWallets([t.sim.fixtures.wallet]),
    )) as ApiError;
    expect(error.message).toBe("walletAddresses is malformed");
  });

  it("retries 5xx on reads, counted on the server, then succeeds", async () => {
    t = await startClient();
    t.sim.script([{ status: 503 }, { status: 502 }, { status: 500 }]);
    const result = await t.api.collections.top("METRIC_SALES_VOLUME", "DURATION_1_DAY", {
      limit: 3,
    });
    expect(result.collections.length).toBe(3);
    expect(t.sim.countRequests()).toBe(4);
  });

  it("retries the read-only POSTs (1, 5, 9)", async () => {
    t = await startClient();
    t.sim.script([{ status: 503 }, { status: 503 }, { status: 503 }]);
    const { fixtures: f } = t.sim;
    await t.api.audiences.behaviorsByWallets([f.wallet]);
    await t.api.audiences.financialStatsByWallets([f.wallet]);
    await t.api.audiences.segmentedAudience({ collections: [{ contractAddress: f.collection }] });
    expect(t.sim.countRequests()).toBe(6);
  });

  it("gives up after the retry bound with unavailable", async () => {
    t = await startClient({ API_RETRIES: "2" });
    t.sim.script([{ status: 503 }, { status: 503 }, { status: 503 }, { status: 503 }]);
    const error = (await failure(
      t.api.collections.top("METRIC_SALES_VOLUME", "DURATION_1_DAY"),
    )) as ApiError;
    expect(error.kind).toBe("unavailable");
    expect(t.sim.countRequests()).toBe(3);
  });

  it("waits out Retry-After before retrying a 429", async () => {
    t = await startClient();
    t.sim.script([{ status: 429, retryAfterSeconds: 1 }]);
    await t.api.collections.top("METRIC_SALES_VOLUME", "DURATION_1_DAY");
    const [first, second] = t.sim.requests;
    expect(t.sim.requests).toHaveLength(2);
    expect(second!.at - first!.at).toBeGreaterThanOrEqual(990);
  });

  it("is rate_limited with retryAfter when the wait would pass the time budget", async () => {
    t = await startClient({ API_RETRY_MAX_TOTAL_MS: "500" });
    t.sim.script([{ status: 429, retryAfterSeconds: 20 }]);
    const error = (await failure(
      t.api.collections.top("METRIC_SALES_VOLUME", "DURATION_1_DAY"),
    )) as ApiError;
    expect(error.kind).toBe("rate_limited");
    expect(error.retryAfter).toBe(20);
    expect(t.sim.countRequests()).toBe(1);
  });

  it("never retries spam reports", async () => {
    t = await startClient();
    t.sim.script([{ status: 503 }]);
    const { fixtures: f } = t.sim;
    const error = (await failure(
      t.api.wallets.reportSpam({ wallet: f.wallet, contract: f.spamCollection }),
    )) as ApiError;
    expect(error.kind).toBe("unavailable");
    t.sim.script([{ status: 503 }]);
    await failure(t.api.wallets.reportNotSpam({ wallet: f.wallet, contract: f.collection }));
    expect(t.sim.countRequests()).toBe(2);
  });

  it("times out a hung request", async () => {
    t = await startClient({ API_TIMEOUT_MS: "200" });
    t.sim.script([{ status: 200, hang: true }]);
    const error = (await failure(
      t.api.collections.top("METRIC_SALES_VOLUME", "DURATION_1_DAY"),
    )) as ApiError;
    expect(error.kind).toBe("timeout");
    expect(t.sim.countRequests()).toBe(1);
  });

  it("stops when the caller's signal aborts", async () => {
    t = await startClient({ API_TIMEOUT_MS: "5000" });
    t.sim.script([{ status: 200, hang: true }]);
    const error = await failure(
      t.api.wallets.reportSpam(
        { wallet: t.sim.fixtures.wallet, contract: t.sim.fixtures.spamCollection },
        { signal: AbortSignal.timeout(100) },
      ),
    );
    expect((error as ApiError).kind).toBe("timeout");
  });

  it("is unavailable when nothing listens", async () => {
    t = await startClient({ API_RETRIES: "1" });
    await t.sim.close();
    const error = (await failure(
      t.api.collections.top("METRIC_SALES_VOLUME", "DURATION_1_DAY"),
    )) as ApiError;
    expect(error.kind).toBe("unavailable");
    expect(error.message).toMatch(/Could not reach/);
  });

  it.each([
    ["not JSON", "<html>oops</html>", "(root)"],
    ["truncated JSON", '{"collections": [{"contractAd', "(root)"],
    [
      "wrong shape",
      JSON.stringify({ collections: [{ contractAddress: 5 }] }),
      "collections.0.contractAddress",
    ],
    [
      "int64 as a number",
      JSON.stringify({ collections: [{ contractAddress: "0x1", salesCount: 12 }] }),
      "collections.0.salesCount",
    ],
  ])("%s is invalid_response naming the field", async (_label, body, field) => {
    t = await startClient();
    t.sim.script([{ status: 200, body }]);
    const error = (await failure(
      t.api.collections.top("METRIC_SALES_QUANTITY", "DURATION_1_DAY"),
    )) as ApiError;
    expect(error.kind).toBe("invalid_response");
    if (field === "(root)") {
      // Nothing parsed, so no field to name: the message says what was wrong instead.
      expect(error.field).toBeUndefined();
      expect(error.message).toMatch(/not JSON/);
    } else {
      expect(error.field).toBe(field);
      expect(error.message).toContain(field);
    }
  });
});

describe("unknown enum values", () => {
  it("are kept as strings and logged once", async () => {
    t = await startClient();
    const { fixtures: f } = t.sim;
    const first = await t.api.audiences.behaviorsByCollection(f.otherBehaviorCollection);
    expect(first.aggregatedBehaviors.map((row) => row.behavior)).toContain("BEHAVIOR_OTHER");
    t.sim.script([
      {
        status: 200,
        body: JSON.stringify({
          aggregatedBehaviors: [
            { behavior: "BEHAVIOR_OTHER", walletsCount: "1", walletsPercentage: 100 },
          ],
        }),
      },
    ]);
    await t.api.audiences.behaviorsByWallets([f.wallet]);
    const warnings = t.lines.filter((line) => line.includes("BEHAVIOR_OTHER"));
    expect(warnings).toHaveLength(1);

    const contracts = await t.api.foundational.contracts({ limit: 500 });
    expect(contracts.contracts.flatMap((c) => c.types)).toContain("TYPE_ERC404");
  });
});

describe("cache", () => {
  it("shares one upstream request among concurrent identical reads", async () => {
    t = await startClient({}, { faults: { latencyMs: 100 } });
    const calls = Array.from({ length: 20 }, () =>
      t.api.collections.top("METRIC_SALES_VOLUME", "DURATION_7_DAYS"),
    );
    const results = await Promise.all(calls);
    expect(new Set(results).size).toBe(1);
    expect(t.sim.countRequests()).toBe(1);
    expect(t.api.cacheStats.joins).toBe(19);
  });

  it("serves from cache within the TTL and asks again after it", async () => {
    t = await startClient({ CACHE_TTL_TOP_S: "1" });
    await t.api.collections.top("METRIC_SALES_VOLUME", "DURATION_1_DAY");
    await t.api.collections.top("METRIC_SALES_VOLUME", "DURATION_1_DAY");
    expect(t.sim.countRequests()).toBe(1);
    await new Promise((resolve) => setTimeout(resolve, 1100));
    await t.api.collections.top("METRIC_SALES_VOLUME", "DURATION_1_DAY");
    expect(t.sim.countRequests()).toBe(2);
  });

  it("keys include the query, so different pages are different entries", async () => {
    t = await startClient();
    await t.api.collections.top("METRIC_SALES_VOLUME", "DURATION_1_DAY", { limit: 5, offset: 0 });
    await t.api.collections.top("METRIC_SALES_VOLUME", "DURATION_1_DAY", { limit: 5, offset: 5 });
    expect(t.sim.countRequests()).toBe(2);
  });

  it("at CACHE_MAX_KEYS the least recently used answer makes room; a call never fails for it", async () => {
    t = await startClient({ CACHE_MAX_KEYS: "1" });
    const { fixtures: f } = t.sim;
    await t.api.audiences.behaviorsByCollection(f.collection);
    await t.api.audiences.behaviorsByCollection(f.erc1155Collection);
    await t.api.audiences.behaviorsByCollection(f.erc1155Collection);
    expect(t.sim.countRequests()).toBe(2);
    await t.api.audiences.behaviorsByCollection(f.collection);
    expect(t.sim.countRequests()).toBe(3);
  });

  /** A top-collections answer of about `bytes` bytes of JSON. */
  const topAnswer = (bytes: number, tag: string) =>
    JSON.stringify({
      collections: Array.from({ length: Math.ceil(bytes / 1000) }, (_, i) => ({
        contractAddress: `0x${String(i).padStart(40, "0")}`,
        contractName: `${tag}-${"n".repeat(900)}`,
        salesVolume: "1.5",
      })),
    });

  it("is bounded by bytes: many distinct large answers stay under CACHE_MAX_BYTES, oldest out first", async () => {
    t = await startClient({ CACHE_MAX_BYTES: "200000", CACHE_MAX_ENTRY_BYTES: "60000" });
    for (let offset = 0; offset < 40; offset++) {
      t.sim.script([{ status: 200, body: topAnswer(40_000, `page${offset}`) }]);
      await t.api.collections.top("METRIC_SALES_VOLUME", "DURATION_1_DAY", { offset });
      expect(t.api.cacheBytes).toBeLessThanOrEqual(200_000);
    }
    expect(t.api.cacheBytes).toBeGreaterThan(100_000);
    expect(t.sim.countRequests()).toBe(40);
    // The newest is still cached, the oldest made room long ago.
    await t.api.collections.top("METRIC_SALES_VOLUME", "DURATION_1_DAY", { offset: 39 });
    expect(t.sim.countRequests()).toBe(40);
    await t.api.collections.top("METRIC_SALES_VOLUME", "DURATION_1_DAY", { offset: 0 });
    expect(t.sim.countRequests()).toBe(41);
  });

  it("does not keep an answer above CACHE_MAX_ENTRY_BYTES: the next call goes upstream", async () => {
    t = await startClient({ CACHE_MAX_BYTES: "1000000", CACHE_MAX_ENTRY_BYTES: "30000" });
    const big = topAnswer(40_000, "big");
    t.sim.script([{ status: 200, body: big }]);
    const first = await t.api.collections.top("METRIC_SALES_VOLUME", "DURATION_1_DAY");
    expect(first.collections).toHaveLength(40);
    expect(t.api.cacheStats.full).toBe(1);
    t.sim.script([{ status: 200, body: big }]);
    await t.api.collections.top("METRIC_SALES_VOLUME", "DURATION_1_DAY");
    expect(t.sim.countRequests()).toBe(2);
    // A small answer is still cached.
    await t.api.collections.top("METRIC_SALES_VOLUME", "DURATION_7_DAYS", { limit: 2 });
    await t.api.collections.top("METRIC_SALES_VOLUME", "DURATION_7_DAYS", { limit: 2 });
    expect(t.sim.countRequests()).toBe(3);
  });

  it("does not cache failures", async () => {
    t = await startClient();
    t.sim.script([{ status: 404 }]);
    await failure(t.api.collections.top("METRIC_SALES_VOLUME", "DURATION_1_DAY"));
    await t.api.collections.top("METRIC_SALES_VOLUME", "DURATION_1_DAY");
    expect(t.sim.countRequests()).toBe(2);
  });
});

describe("the API key", () => {
  it("goes in X-API-Key and never appears in an error, a stack or a log line", async () => {
    t = await startClient();
    const key = t.sim.apiKey;
    expect(t.sim.requests).toHaveLength(0);
    await t.api.collections.top("METRIC_SALES_VOLUME", "DURATION_1_DAY");
    expect(t.sim.requests[0]?.apiKey).toBe(key);

    const errors: Error[] = [];
    t.sim.script([
      { status: 400, body: JSON.stringify({ message: `key ${key} is not allowed here` }) },
      { status: 401 },
      { status: 404 },
      { status: 200, body: "{" },
      { status: 200, hang: true },
    ]);
    const call = () =>
      t.api.foundational.nftDetails(t.sim.fixtures.token.contract, t.sim.fixtures.token.tokenId);
    for (let i = 0; i < 5; i++) {
      errors.push(await failure(call()));
    }
    await t.sim.close();
    errors.push(await failure(t.api.collections.top("METRIC_MAX_PRICE", "DURATION_1_DAY")));
    expect(errors.map((e) => (e as ApiError).kind)).toEqual([
      "bad_request",
      "unauthorized",
      "not_found",
      "invalid_response",
      "timeout",
      "unavailable",
    ]);
    for (const error of errors) {
      const dump = `${error.message}\n${error.stack}\n${JSON.stringify(error)}\n${JSON.stringify(Object.entries(error))}`;
      expect(dump).not.toContain(key);
    }
    expect(t.lines.length).toBeGreaterThan(0);
    expect(t.lines.join("\n")).not.toContain(key);
  }, 20_000);
});

describe("counting requests", () => {
  beforeEach(async () => {
    t = await startClient();
  });

  it("tells the observer of each request after the turn that got its answer, and of every one", async () => {
    const told: { path: string; status: number | "error"; attempt: number }[] = [];
    t.api.observeRequests(({ path, status, attempt }) => told.push({ path, status, attempt }));
    const { contract, tokenId } = t.sim.fixtures.token;
    const f = t.api.foundational;
    await Promise.all([
      f.nftDetails(contract, tokenId),
      f.tokenOwners(contract, tokenId, { limit: 10 }),
      f.rawMetadata(contract, tokenId),
    ]);
    // The answers are back; the last one's count is not yet: counting is no part of its way to
    // the command (those that came first may have been counted while it was awaited).
    expect(told.length).toBeLessThan(3);
    await new Promise((resolve) => setImmediate(resolve));
    expect(told.map((event) => event.path.split("/").at(-1)).sort()).toEqual([
      "details",
      "owners",
      "raw_metadata",
    ]);
    expect(told.every((event) => event.status === 200 && event.attempt === 1)).toBe(true);
  });
});
