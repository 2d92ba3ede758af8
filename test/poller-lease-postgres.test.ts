import { afterEach, describe, expect, it } from "vitest";
import { LEASE_RENEW_MS, LEASE_TTL_MS, NewContractPoller } from "../src/alerts/poller.ts";
import { alertStoresOf } from "../src/alerts/store/index.ts";
import type { ApiClient } from "../src/api/client.ts";
import { silentLogger } from "../src/log.ts";
import { openPostgresStore, type PostgresStore } from "../src/store/postgres/index.ts";
import { POSTGRES_URL, postgresAvailable } from "./services.ts";
import { dropSchema, freshSchemaName } from "./store/backends.ts";

/** A data service with nothing new: these tests are about who polls, not what. */
const quietApi = {
  foundational: { contracts: async () => ({ contracts: [] }) },
} as unknown as ApiClient;

const settings = { intervalMs: 30_000, overlapMs: 0, limit: 10, maxPages: 1, maxClockSkewMs: 0 };

describe.runIf(await postgresAvailable())("poller leadership on PostgreSQL", () => {
  const cleanups: (() => Promise<void>)[] = [];
  afterEach(async () => {
    for (const cleanup of cleanups.splice(0).reverse()) await cleanup();
  });

  const baseDeps = (store: PostgresStore, holder: string) => ({
    api: quietApi,
    alerts: alertStoresOf(store).outbox,
    kv: store.kv,
    leases: store.leases,
    logger: silentLogger(),
    settings,
    holder,
  });

  const instance = (store: PostgresStore, holder: string) =>
    new NewContractPoller(baseDeps(store, holder));

  it("when the leader stops renewing, another instance takes over within 10 s (the default lease)", async () => {
    expect(LEASE_TTL_MS + LEASE_RENEW_MS).toBeLessThan(10_000);
    const schema = freshSchemaName();
    cleanups.push(() => dropSchema(schema));
    const [a, b] = await Promise.all(
      [1, 2].map(() => openPostgresStore({ url: POSTGRES_URL, schema, max: 2 })),
    );
    for (const store of [a, b]) if (store) cleanups.push(() => store.close());
    if (!a || !b) throw new Error("two stores expected");
    // Holders on other hosts: the "dead process on this host" shortcut must not apply.
    const leader = instance(a, "host-a:1:aaaaaa");
    const follower = instance(b, "host-b:1:bbbbbb");
    expect(await leader.pollOnce()).toMatchObject({ kind: "started" });
    // The leader dies right after taking the lease: it never renews (never started, never stops).
    const diedAt = Date.now();
    follower.start();
    cleanups.push(() => follower.stop());
    await new Promise((resolve) => setTimeout(resolve, LEASE_RENEW_MS + 500));
    expect(follower.isLeader).toBe(false);
    await expect.poll(() => follower.isLeader, { timeout: 10_000, interval: 100 }).toBe(true);
    const tookMs = Date.now() - diedAt;
    expect(tookMs).toBeLessThan(10_000);
    expect(tookMs).toBeGreaterThanOrEqual(LEASE_TTL_MS - 500);
    // And it polls at once rather than at its next 30 s interval.
    await expect.poll(() => follower.stats.polls, { timeout: 2_000 }).toBeGreaterThan(0);
    expect(leader.isLeader).toBe(false);
  }, 20_000);

  it("a live leader keeps the lease by renewing it, across many lease lifetimes", async () => {
    const schema = freshSchemaName();
    cleanups.push(() => dropSchema(schema));
    const store = await openPostgresStore({ url: POSTGRES_URL, schema, max: 2 });
    cleanups.push(() => store.close());
    const quick = { ...settings, leaseTtlMs: 600, leaseRenewMs: 150 };
    const a = new NewContractPoller({ ...baseDeps(store, "host-a:1:a"), settings: quick });
    const b = new NewContractPoller({ ...baseDeps(store, "host-b:1:b"), settings: quick });
    a.start();
    await expect.poll(() => a.isLeader, { timeout: 2_000 }).toBe(true);
    b.start();
    cleanups.push(() => b.stop());
    await new Promise((resolve) => setTimeout(resolve, 2_000));
    expect(a.isLeader).toBe(true);
    expect(b.isLeader).toBe(false);
    // A stops (releases): b takes over at its next try.
    await a.stop();
    await expect.poll(() => b.isLeader, { timeout: 1_000 }).toBe(true);
  });
});
