/**
 * The `gates` lease on real PostgreSQL with two instances (issue 34, item 14): a round longer than
 * the lease keeps it (renewed inside the round), and an instance that can no longer renew it (its
 * database frozen) ends its work before the lease can lapse, so two instances never re-check the
 * same person at once.
 */

import { afterEach, describe, expect, it } from "vitest";
import { counted } from "../src/core/person-wallets.ts";
import { GateRecheck } from "../src/gates/recheck.ts";
import { GateService, RECHECK_EVERY_MS } from "../src/gates/service.ts";
import { gateStoreOf } from "../src/gates/store.ts";
import type { GateEvaluator, GateMembership, GateVerdict } from "../src/gates/types.ts";
import { silentLogger } from "../src/log.ts";
import { openPostgresStore, type PostgresStore } from "../src/store/postgres/index.ts";
import { FaultProxy } from "./fakes/tcp-proxy.ts";
import { POSTGRES_URL, postgresAvailable } from "./services.ts";
import { dropSchema, freshSchemaName } from "./store/backends.ts";

const cleanups: (() => unknown)[] = [];
afterEach(async () => {
  for (const cleanup of cleanups.splice(0).reverse()) await cleanup();
});

const LEASE_TTL_MS = 1_200;
const CLOCK = Date.parse("2026-03-01T12:00:00Z");

const membership: GateMembership = {
  platform: "discord",
  check: async (target) => ({ ok: true, target }),
  grant: async () => ({ ok: true }),
  revoke: async () => ({ ok: true }),
};

/** Who is evaluating whom right now, over both instances, and every overlap seen. */
function tracker() {
  const active = new Map<string, string>();
  const overlaps: string[] = [];
  const evaluated: string[] = [];
  return { active, overlaps, evaluated };
}

/**
 * Passes after `ms` (or when the signal aborts: unknown); `hang` users wait for the signal only.
 * Records on `t` which instance evaluates which wallet (the wallet names the person here).
 */
function slowEvaluator(
  t: ReturnType<typeof tracker>,
  instance: string,
  ms: number,
  hang: Set<string> = new Set(),
): GateEvaluator {
  return {
    async evaluate(criteria, wallets, signal?: AbortSignal): Promise<GateVerdict> {
      const who = counted(wallets).wallets[0]?.address ?? "";
      for (const [other, by] of t.active) if (by !== instance) t.overlaps.push(`${who}/${other}`);
      t.active.set(who, instance);
      t.evaluated.push(`${instance}:${who}`);
      try {
        await new Promise<void>((resolve) => {
          const timer = hang.has(who) ? undefined : setTimeout(resolve, ms);
          const stopAt = hang.has(who) ? setTimeout(resolve, 15_000) : undefined;
          signal?.addEventListener("abort", () => {
            clearTimeout(timer);
            clearTimeout(stopAt);
            resolve();
          });
        });
      } finally {
        t.active.delete(who);
      }
      const outcome = signal?.aborted ? "unknown" : "pass";
      return {
        outcome,
        results: criteria.map((criterion) => ({ criterion, outcome, why: outcome })),
      };
    },
  };
}

async function instance(store: PostgresStore, holder: string, evaluator: GateEvaluator) {
  const service = new GateService({
    gates: gateStoreOf(store),
    wallets: store.wallets,
    evaluator,
    memberships: [membership],
    tell: async () => true,
    logger: silentLogger(),
    settings: { graceHours: 24 },
    now: () => CLOCK,
  });
  const job = new GateRecheck({
    service,
    leases: store.leases,
    holder,
    logger: silentLogger(),
    settings: { checksPerMinute: 1_000, tickMs: 60_000, leaseTtlMs: LEASE_TTL_MS },
    now: () => CLOCK,
  });
  cleanups.push(() => job.stop());
  return { service, job };
}

/** A gate with `n` members due, each proving a wallet named after them. */
async function members(store: PostgresStore, n: number): Promise<string[]> {
  const added = await gateStoreOf(store).add(
    {
      platform: "discord",
      chatId: "g1",
      target: { platform: "discord", guildId: "g1", roleId: "r1", roleName: "Holders" },
      criteria: [{ kind: "behavior", chain: "ethereum", behaviors: ["X"], not: false }],
      createdBy: "m",
      createdAt: CLOCK,
    },
    10,
  );
  if (added.kind !== "added") throw new Error("no gate");
  const users: string[] = [];
  for (let i = 0; i < n; i++) {
    const userId = `u${i}`;
    users.push(userId);
    await gateStoreOf(store).putMember({
      gateId: added.gate.id,
      userId,
      status: "granted",
      since: CLOCK - 2 * RECHECK_EVERY_MS,
      lastCheckedAt: CLOCK - 2 * RECHECK_EVERY_MS + i,
    });
    await store.wallets.addProved({
      platform: "discord",
      userId,
      address: `0x${String(i).padStart(40, "0")}`,
      chain: "ethereum",
      label: userId,
      message: "m",
      signature: "0x",
      provedAt: CLOCK,
    });
  }
  return users;
}

const sleep = (ms: number) => new Promise((resolve) => setTimeout(resolve, ms));

describe.runIf(await postgresAvailable())("the gates lease on two instances (PostgreSQL)", () => {
  async function twoStores(proxyA = false) {
    const schema = freshSchemaName();
    cleanups.push(() => dropSchema(schema));
    let proxy: FaultProxy | undefined;
    let urlA = POSTGRES_URL;
    if (proxyA) {
      proxy = FaultProxy.forUrl(POSTGRES_URL, 5432);
      await proxy.start();
      urlA = proxy.urlFor(POSTGRES_URL);
    }
    const a = await openPostgresStore({
      url: urlA,
      schema,
      max: 4,
      bounds: { queryTimeoutMs: 3_000, statementTimeoutMs: 3_000, connectTimeoutMs: 1_000 },
    });
    cleanups.push(() => a.close());
    // Cut before the store closes: a frozen connection would hold its close.
    if (proxy) cleanups.push(() => proxy?.close());
    const b = await openPostgresStore({ url: POSTGRES_URL, schema, max: 4 });
    cleanups.push(() => b.close());
    return { a, b, proxy };
  }

  it("a round longer than the lease keeps it: the other instance never re-checks meanwhile", async () => {
    const { a, b } = await twoStores();
    const users = await members(a, 8);
    const t = tracker();
    const one = await instance(a, "host-a:1:a", slowEvaluator(t, "a", 300));
    const two = await instance(b, "host-b:1:b", slowEvaluator(t, "b", 300));
    const round = one.job.tick();
    // Past the lease's lifetime, while the first round still runs (8 × 300 ms).
    await sleep(LEASE_TTL_MS + 300);
    const seconds: (number | false)[] = [];
    for (let i = 0; i < 4; i++) {
      seconds.push(await two.job.tick());
      await sleep(150);
    }
    expect(await round).toBe(users.length);
    expect(t.overlaps).toEqual([]);
    expect(seconds).toEqual([false, false, false, false]);
    expect(t.evaluated.filter((e) => e.startsWith("b:"))).toEqual([]);
  }, 20_000);

  it("an instance that cannot renew (its database frozen) ends its calls before the lease lapses", async () => {
    const { a, b, proxy } = await twoStores(true);
    await members(b, 3);
    const t = tracker();
    const wallet0 = `0x${"0".repeat(40)}`;
    // Instance a's read of the first member hangs; its database freezes meanwhile.
    const one = await instance(a, "host-a:1:a", slowEvaluator(t, "a", 50, new Set([wallet0])));
    const two = await instance(b, "host-b:1:b", slowEvaluator(t, "b", 50));
    const round = one.job.tick().catch(() => "failed");
    await expect.poll(() => t.active.get(wallet0), { timeout: 5_000 }).toBe("a");
    proxy?.freeze();
    // The other instance takes the lease once it lapses, and re-checks the same people.
    let took: number | false = false;
    for (let i = 0; i < 40 && took === false; i++) {
      await sleep(100);
      took = await two.job.tick();
    }
    expect(took).toBeGreaterThan(0);
    expect(t.evaluated).toContain(`b:${wallet0}`);
    // Before: a's read was still running when b's began (no overlap is allowed).
    expect(t.overlaps).toEqual([]);
    proxy?.reset();
    await round;
  }, 30_000);
});
