/**
 * Issue 28, start-up: the collection index's first refresh (13 requests to the data service)
 * waits a few seconds after start rather than competing with the first answer, unless a name
 * misses the index first.
 */
import { afterEach, beforeEach, describe, expect, it, vi } from "vitest";
import type { ApiClient } from "../src/api/client.ts";
import { CollectionRefresher } from "../src/core/collection-refresh.ts";
import { KnownCollections } from "../src/core/known-collections.ts";
import { silentLogger } from "../src/log.ts";

const COLLECTION = "0xee921415072882a79213fc969454aad44f2bc2e6";

/** A data service that answers at once and counts what it was asked. */
function countingApi() {
  const asked = { top: 0, contracts: 0 };
  const api = {
    collections: {
      top: async () => {
        asked.top++;
        return { collections: [{ contractAddress: COLLECTION, contractName: "Example" }] };
      },
    },
    foundational: {
      contracts: async () => {
        asked.contracts++;
        return { contracts: [] };
      },
    },
  } as unknown as ApiClient;
  return { api, asked };
}

/** A refresher every minute, over an index of its own unless one is given. */
function refresherOf(api: ApiClient, collections = new KnownCollections()): CollectionRefresher {
  return new CollectionRefresher({ api, collections, logger: silentLogger(), intervalMs: 60_000 });
}

describe("the collection index's first refresh", () => {
  beforeEach(() => {
    vi.useFakeTimers();
  });
  afterEach(() => {
    vi.useRealTimers();
  });

  it("waits the delay it is started with, then refreshes at the interval", async () => {
    const { api, asked } = countingApi();
    const collections = new KnownCollections();
    const refresher = refresherOf(api, collections);
    refresher.start(5_000);
    await vi.advanceTimersByTimeAsync(4_999);
    expect(asked).toEqual({ top: 0, contracts: 0 });
    await vi.advanceTimersByTimeAsync(1);
    expect(asked.contracts).toBe(1);
    expect(asked.top).toBeGreaterThan(0);
    expect(collections.size).toBe(1);
    const tops = asked.top;
    await vi.advanceTimersByTimeAsync(60_000);
    expect(asked).toEqual({ top: 2 * tops, contracts: 2 });
    refresher.stop();
    await vi.advanceTimersByTimeAsync(120_000);
    expect(asked.contracts).toBe(2);
  });

  it("refreshes at once for a name missed before the delay, and not again when it ends", async () => {
    const { api, asked } = countingApi();
    const refresher = refresherOf(api);
    refresher.start(5_000);
    await vi.advanceTimersByTimeAsync(1_000);
    await refresher.refreshForMiss();
    expect(asked.contracts).toBe(1);
    await vi.advanceTimersByTimeAsync(4_000);
    expect(asked.contracts).toBe(1);
    refresher.stop();
  });

  it("is a job with its health: a refresh that reads no list is not a good round", async () => {
    let clock = 0;
    let down = false;
    const { api } = countingApi();
    const failingApi = {
      collections: {
        top: async (...args: Parameters<ApiClient["collections"]["top"]>) => {
          if (down) throw new Error("503");
          return api.collections.top(...args);
        },
      },
      foundational: {
        contracts: async (...args: Parameters<ApiClient["foundational"]["contracts"]>) => {
          if (down) throw new Error("503");
          return api.foundational.contracts(...args);
        },
      },
    } as unknown as ApiClient;
    const refresher = new CollectionRefresher({
      api: failingApi,
      collections: new KnownCollections(),
      logger: silentLogger(),
      intervalMs: 60_000,
      monotonic: () => clock,
      name: "collection refresh ethereum",
    });
    // Not started: not judged.
    expect(refresher.checks()).toEqual([]);
    refresher.start(5_000);
    expect(refresher.checks()).toEqual([
      { name: "collection refresh ethereum", ok: true, lastGoodAgoSeconds: null },
    ]);
    await vi.advanceTimersByTimeAsync(5_000);
    expect(refresher.checks()).toEqual([
      { name: "collection refresh ethereum", ok: true, lastGoodAgoSeconds: 0 },
    ]);
    // The data service down for more than 3 intervals (the bound is at least 5 minutes).
    down = true;
    clock += 301_000;
    await vi.advanceTimersByTimeAsync(301_000);
    expect(refresher.checks()).toEqual([
      {
        name: "collection refresh ethereum",
        ok: false,
        lastGoodAgoSeconds: 301,
        reason: "collection refresh ethereum: no round completed for 301 s (bound 300 s)",
      },
    ]);
    down = false;
    await refresher.refresh();
    expect(refresher.checks()[0]).toMatchObject({ ok: true, lastGoodAgoSeconds: 0 });
    await refresher.stop();
  });

  it("stopped before the delay ends, it asks nothing", async () => {
    const { api, asked } = countingApi();
    const refresher = refresherOf(api);
    refresher.start(5_000);
    refresher.stop();
    await vi.advanceTimersByTimeAsync(120_000);
    expect(asked).toEqual({ top: 0, contracts: 0 });
  });
});
