/**
 * The background jobs' building blocks (src/jobs): the loop every job runs on, and the lease that
 * elects one instance per job.
 */
import { afterEach, describe, expect, it } from "vitest";
import { Lease } from "../src/jobs/lease.ts";
import { startLoop } from "../src/jobs/loop.ts";
import { PeriodicJob } from "../src/jobs/periodic.ts";
import { silentLogger } from "../src/log.ts";
import type { LeaseStore } from "../src/store/types.ts";

const sleep = (ms: number) => new Promise((resolve) => setTimeout(resolve, ms));

/** A promise and the function that resolves it. */
function gate(): { promise: Promise<void>; open: () => void } {
  let open = () => {};
  const promise = new Promise<void>((resolve) => {
    open = resolve;
  });
  return { promise, open };
}

const stops: (() => Promise<void>)[] = [];
afterEach(async () => {
  for (const stop of stops.splice(0)) await stop();
});

describe("startLoop", () => {
  it("runs one round at a time, and pokes during a round merge into one more round", async () => {
    let rounds = 0;
    let inFlight = 0;
    let most = 0;
    let hold = gate();
    const loop = startLoop({
      name: "test",
      everyMs: 60_000,
      logger: silentLogger(),
      round: async () => {
        rounds++;
        inFlight++;
        most = Math.max(most, inFlight);
        await hold.promise;
        inFlight--;
      },
    });
    stops.push(() => loop.stop());
    await expect.poll(() => rounds).toBe(1);
    const first = hold;
    hold = gate();
    for (let i = 0; i < 5; i++) loop.poke();
    first.open();
    await expect.poll(() => rounds).toBe(2);
    hold.open();
    await sleep(100);
    // Five pokes, one more round; never two at once; then it waits for its interval.
    expect(rounds).toBe(2);
    expect(most).toBe(1);
  });

  it("an idle loop runs at once when poked, not at its next interval", async () => {
    let rounds = 0;
    const loop = startLoop({
      name: "test",
      everyMs: 60_000,
      logger: silentLogger(),
      round: async () => {
        rounds++;
      },
    });
    stops.push(() => loop.stop());
    await expect.poll(() => rounds).toBe(1);
    loop.poke();
    await expect.poll(() => rounds).toBe(2);
  });

  it("a round that reports a full batch runs again at once", async () => {
    let batches = 3;
    let rounds = 0;
    const loop = startLoop({
      name: "test",
      everyMs: 60_000,
      logger: silentLogger(),
      round: async () => {
        rounds++;
        return batches-- > 0;
      },
    });
    stops.push(() => loop.stop());
    // Three full batches, then the round that found less: four rounds without waiting.
    await expect.poll(() => rounds).toBe(4);
    await sleep(100);
    expect(rounds).toBe(4);
  });

  it("stop() waits for the round in flight, tells it through its signal, and no round follows", async () => {
    const hold = gate();
    let signal: AbortSignal | undefined;
    let ended = false;
    let rounds = 0;
    const loop = startLoop({
      name: "test",
      everyMs: 0,
      logger: silentLogger(),
      round: async (s) => {
        rounds++;
        signal = s;
        await hold.promise;
        ended = true;
      },
    });
    await expect.poll(() => rounds).toBe(1);
    let stopped = false;
    const stopping = loop.stop().then(() => {
      stopped = true;
    });
    expect(loop.isRunning).toBe(false);
    expect(signal?.aborted).toBe(true);
    await sleep(50);
    expect(stopped).toBe(false);
    hold.open();
    await stopping;
    expect(ended).toBe(true);
    loop.poke();
    await sleep(50);
    expect(rounds).toBe(1);
  });

  it("a failed round is reported and the loop goes on; a good round is recorded for health", async () => {
    const errors: unknown[] = [];
    let rounds = 0;
    const loop = startLoop({
      name: "flaky",
      everyMs: 10,
      logger: silentLogger(),
      onError: (error) => errors.push(error),
      round: async () => {
        rounds++;
        if (rounds <= 2) throw new Error(`round ${rounds} failed`);
      },
    });
    stops.push(() => loop.stop());
    expect(loop.liveness.lastGoodAt).toBeUndefined();
    await expect.poll(() => rounds).toBeGreaterThanOrEqual(3);
    expect(errors.map((error) => (error as Error).message)).toEqual([
      "round 1 failed",
      "round 2 failed",
    ]);
    expect(loop.liveness.lastGoodAt).toBeDefined();
    expect(loop.liveness.check(60_000, 0)).toMatchObject({ name: "flaky", ok: true });
  });
});

describe("PeriodicJob", () => {
  it("runs its rounds, says in its check when the last good one was, and fails it once none has completed for its bound", async () => {
    let clock = 0;
    let failing = false;
    let rounds = 0;
    const errors: unknown[] = [];
    const job = new PeriodicJob({
      name: "chore",
      everyMs: 10,
      boundMs: 60_000,
      logger: silentLogger(),
      monotonic: () => clock,
      onError: (error) => errors.push(error),
      round: () => {
        rounds++;
        if (failing) throw new Error("no room");
      },
    });
    // Not started: nothing to judge.
    expect(job.checks()).toEqual([]);
    job.start();
    stops.push(() => job.stop());
    await expect.poll(() => rounds).toBeGreaterThan(1);
    expect(job.checks()).toEqual([{ name: "chore", ok: true, lastGoodAgoSeconds: 0 }]);
    failing = true;
    const failedBefore = errors.length;
    await expect.poll(() => errors.length).toBeGreaterThan(failedBefore + 1);
    clock += 61_000;
    expect(job.checks()).toEqual([
      {
        name: "chore",
        ok: false,
        lastGoodAgoSeconds: 61,
        reason: "chore: no round completed for 61 s (bound 60 s)",
      },
    ]);
    failing = false;
    await job.run();
    expect(job.checks()).toEqual([{ name: "chore", ok: true, lastGoodAgoSeconds: 0 }]);
    await job.stop();
    const after = rounds;
    await sleep(50);
    expect(rounds).toBe(after);
    expect(job.isRunning).toBe(false);
  });

  it("run() out of turn never throws: its failure goes where the loop's go", async () => {
    const errors: unknown[] = [];
    const job = new PeriodicJob({
      name: "prune",
      everyMs: 3_600_000,
      logger: silentLogger(),
      onError: (error) => errors.push(error),
      round: async () => {
        throw new Error("disk I/O error");
      },
    });
    await expect(job.run()).resolves.toBeUndefined();
    expect(errors.map((error) => (error as Error).message)).toEqual(["disk I/O error"]);
    expect(job.liveness.lastGoodAt).toBeUndefined();
  });
});

/** A lease store whose every answer can be made to hang (a frozen connection). */
class HangingLeases implements LeaseStore {
  holder: string | undefined;
  hang = false;
  late: (() => void)[] = [];
  async acquire(_name: string, holder: string): Promise<string> {
    if (this.hang) {
      // Answers only when told to, long after: "ours", as the database would have it.
      await new Promise<void>((resolve) => this.late.push(resolve));
      return holder;
    }
    this.holder ??= holder;
    return this.holder;
  }
  async release(_name: string, holder: string): Promise<void> {
    if (this.holder === holder) this.holder = undefined;
  }
}

describe("Lease", () => {
  it("a renewal that hangs drops leadership before the lease could expire; its late answer is ignored", async () => {
    const store = new HangingLeases();
    const ttlMs = 2_000;
    const lease = new Lease({ store, name: "job", holder: "me", ttlMs });
    expect(await lease.attempt()).toBe("me");
    expect(lease.isLeader).toBe(true);
    const confirmed = lease.lastConfirmedAt;

    store.hang = true;
    const startedAt = performance.now();
    const attempt = lease.attempt().catch((error: unknown) => error);
    // The attempt gives up within the lease's life (less the margin), and leadership with it.
    const failure = await attempt;
    const tookMs = performance.now() - startedAt;
    expect(failure).toBeInstanceOf(Error);
    expect((failure as Error).message).toMatch(/not confirmed within 1500 ms/);
    expect(tookMs).toBeLessThan(ttlMs);
    expect(lease.isLeader).toBe(false);
    expect(lease.leaderSince).toBeUndefined();
    expect(lease.lastConfirmedAt).toBe(confirmed);

    // The hung call answers "yours" at last: too late to count.
    for (const answer of store.late.splice(0)) answer();
    await sleep(10);
    expect(lease.isLeader).toBe(false);

    // Health says the attempts fail once none was confirmed within its bound.
    await sleep(50);
    expect(lease.check(50)).toMatchObject({ ok: false, name: "lease job" });
    expect(lease.check(50).reason).toMatch(/^lease job: no attempt confirmed for \d+ s/);

    // The store answers again: the next attempt leads again.
    store.hang = false;
    expect(await lease.attempt()).toBe("me");
    expect(lease.isLeader).toBe(true);
    expect(lease.check(50).ok).toBe(true);
  });

  it("leads only until a little before the lease expires, unless renewed", async () => {
    const store = new HangingLeases();
    const lease = new Lease({ store, name: "job", holder: "me", ttlMs: 200 });
    await lease.attempt();
    expect(lease.isLeader).toBe(true);
    await sleep(200);
    expect(lease.isLeader).toBe(false);
    await lease.attempt();
    expect(lease.isLeader).toBe(true);
  });

  it("another holder's lease: not the leader, but the attempt is confirmed", async () => {
    const store = new HangingLeases();
    store.holder = "them";
    const lease = new Lease({ store, name: "job", holder: "me", ttlMs: 1_000 });
    expect(await lease.attempt()).toBe("them");
    expect(lease.isLeader).toBe(false);
    expect(lease.lastConfirmedAt).toBeDefined();
  });
});

describe("settings", () => {
  it("PostgreSQL waits are bounded by default, and a lease renewed less than twice a TTL is refused", async () => {
    const { parseConfig } = await import("../src/config.ts");
    expect(parseConfig({}).postgres).toEqual({
      statementTimeoutMs: 10_000,
      queryTimeoutMs: 15_000,
      connectTimeoutMs: 5_000,
      keepAliveDelayMs: 10_000,
    });
    expect(parseConfig({}).lease).toEqual({ ttlMs: 6_000, renewMs: 2_000 });
    expect(() => parseConfig({ LEASE_TTL_MS: "1000", LEASE_RENEW_MS: "600" })).toThrow(
      /LEASE_RENEW_MS: must be at most half of LEASE_TTL_MS/,
    );
  });
});
