/**
 * A start whose migrations wait for room (a full disk): the features' migrations wait too instead
 * of failing the start, the background jobs start once they have run, a failed late start is
 * tried again, and /healthz says why the jobs have not started meanwhile. The features' figures
 * never hold or fail /healthz.
 */
import { describe, expect, it } from "vitest";
import type { Job } from "../src/jobs/job.ts";
import { healthOf } from "../src/kernel/health.ts";
import { featuresMigratedAtStart, lateStart } from "../src/kernel/late-start.ts";
import { silentLogger } from "../src/log.ts";
import type { Store } from "../src/store/types.ts";

const MIGRATIONS = { "tally/001": { up: async () => {} } };

/** A store whose features' migrations fail as told (then run), and that may say its disk is full. */
function fakeStore(failures: Error[], disk?: string) {
  const ran: number[] = [];
  const store = {
    sql: {
      migrate: async () => {
        const failure = failures.shift();
        if (failure) throw failure;
        ran.push(Date.now());
        return ["tally/001"];
      },
    },
    ready: async () => {},
    waiting: () => undefined,
    diskFull: () => disk,
    healthy: async () => true,
  } as unknown as Store;
  return { store, ran };
}

describe("the features' migrations at start", () => {
  it("run at once; on a full disk they wait (false); any other failure fails the start", async () => {
    expect(await featuresMigratedAtStart(fakeStore([]).store, MIGRATIONS, silentLogger())).toBe(
      true,
    );
    const full = fakeStore([new Error("SQLITE_FULL")], "disk full: no room");
    expect(await featuresMigratedAtStart(full.store, MIGRATIONS, silentLogger())).toBe(false);
    await expect(
      featuresMigratedAtStart(fakeStore([new Error("bad DDL")]).store, MIGRATIONS, silentLogger()),
    ).rejects.toThrow("bad DDL");
    // The store's own migrations wait: the features' are not even tried.
    const waiting = fakeStore([new Error("never asked")]);
    (waiting.store as { waiting: () => string }).waiting = () => "migrations wait for room";
    expect(await featuresMigratedAtStart(waiting.store, MIGRATIONS, silentLogger())).toBe(false);
    expect(waiting.ran).toEqual([]);
  });
});

describe("a late start", () => {
  it("says why the jobs wait, tries again after a failure, and starts them once it can", async () => {
    const { store, ran } = fakeStore([new Error("SQLITE_FULL: database or disk is full")]);
    const started: string[] = [];
    const job = { name: "alerts" } as Job;
    const late = lateStart({
      store,
      migrations: MIGRATIONS,
      jobs: [job],
      start: async (jobs) => {
        started.push(...jobs.map((each) => each.name));
      },
      stopped: () => false,
      logger: silentLogger(),
      retryMs: 300,
    });
    expect(late.notStarted()).toBeUndefined();
    late.begin();
    await expect
      .poll(() => late.notStarted(), { interval: 5 })
      .toMatch(/could not start: SQLITE_FULL/);
    expect(started).toEqual([]);
    await expect.poll(() => started).toEqual(["alerts"]);
    expect(ran).toHaveLength(1);
    expect(late.notStarted()).toBeUndefined();
    late.stop();
  });

  it("a stopped bot is not tried again", async () => {
    const { store, ran } = fakeStore([new Error("SQLITE_FULL")]);
    let stopped = false;
    const late = lateStart({
      store,
      migrations: MIGRATIONS,
      jobs: [],
      start: async () => {},
      stopped: () => stopped,
      logger: silentLogger(),
      retryMs: 300,
    });
    late.begin();
    await expect.poll(() => late.notStarted(), { interval: 5 }).toMatch(/could not start/);
    stopped = true;
    await new Promise((resolve) => setTimeout(resolve, 500));
    expect(ran).toEqual([]);
    late.stop();
  });
});

describe("/healthz", () => {
  it("fails while the jobs of a late start have not started, and a feature's slow or failing figures are left out", async () => {
    const { store } = fakeStore([]);
    let why: string | undefined = "the background jobs could not start: SQLITE_FULL";
    const health = healthOf({
      adapters: [],
      store,
      logState: undefined,
      jobs: [],
      features: [
        { figures: () => new Promise(() => {}) },
        { figures: async () => Promise.reject(new Error("count failed")) },
        { figures: async () => ({ gates: { gates: 2 } as never }) },
      ],
      shared: undefined,
      jobsNotStarted: () => why,
    });
    // A figure that never answers does not hold /healthz (the test would time out).
    const sick = await health();
    expect(sick.ok).toBe(false);
    expect(sick.checks).toContainEqual({
      name: "background jobs",
      ok: false,
      reason: "the background jobs could not start: SQLITE_FULL",
    });
    expect(sick).toMatchObject({ gates: { gates: 2 } });
    why = undefined;
    expect((await health()).ok).toBe(true);
  });
});
