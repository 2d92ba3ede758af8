/**
 * Issue 12, item 14: one budget of requests to the data service for the whole process. Real
 * upstream requests take from it (retries too); cache hits and single-flight joins do not.
 */
import { afterEach, describe, expect, it } from "vitest";
import { BudgetExceededError, UpstreamBudget } from "../src/api/budget.ts";
import { ApiError } from "../src/api/errors.ts";
import { failure, type RuntimeSetup, startClient, startRuntime } from "./helpers.ts";

const BUSY = /^The data service is busy, try again in \d+ s\.$/;

describe("the upstream budget", () => {
  let t: RuntimeSetup | Awaited<ReturnType<typeof startClient>> | undefined;
  afterEach(async () => {
    await t?.close();
    t = undefined;
  });

  it("many distinct commands at once: upstream stays within burst + rate, the rest hear 'busy', cached repeats are served", async () => {
    const rate = 5;
    const burst = 5;
    const runtime = await startRuntime({
      API_BUDGET_PER_SECOND: String(rate),
      API_BUDGET_BURST: String(burst),
      API_BUDGET_MAX_WAIT_MS: "300",
    });
    t = runtime;
    const lines = ["1d", "7d", "30d", "365d"].flatMap((duration) =>
      Array.from({ length: 10 }, (_, i) => `/top volume ${duration} ${i + 1}`),
    );
    const started = performance.now();
    const replies = await Promise.all(lines.map((line) => runtime.say(line)));
    const seconds = (performance.now() - started) / 1000;

    // At most the burst at once, then the rate (one more for a token refilled at the edge).
    expect(runtime.sim.countRequests()).toBeLessThanOrEqual(burst + Math.ceil(rate * seconds) + 1);
    const answered = lines.filter((_, i) => /^Top collections/.test(replies[i]?.title ?? ""));
    const busy = replies.filter((reply) => BUSY.test(reply.text ?? ""));
    expect(answered.length).toBeGreaterThanOrEqual(burst);
    expect(busy.length).toBeGreaterThan(0);
    expect(answered.length + busy.length).toBe(lines.length);

    // The budget is spent, yet what is cached is still answered, without asking upstream.
    const before = runtime.sim.countRequests();
    for (const line of answered) {
      expect((await runtime.say(line)).title, line).toMatch(/^Top collections/);
    }
    expect(runtime.sim.countRequests()).toBe(before);
  });

  it("retries take from the budget too", async () => {
    const client = await startClient({
      API_BUDGET_PER_SECOND: "1",
      API_BUDGET_BURST: "3",
      API_BUDGET_MAX_WAIT_MS: "100",
      API_RETRIES: "5",
    });
    t = client;
    client.sim.script(Array.from({ length: 6 }, () => ({ status: 503 })));
    const error = (await failure(
      client.api.collections.top("METRIC_SALES_VOLUME", "DURATION_1_DAY"),
    )) as ApiError;
    expect(error).toBeInstanceOf(ApiError);
    expect(error.kind).toBe("rate_limited");
    expect(error.retryAfter).toBeGreaterThan(0);
    expect(client.sim.countRequests()).toBe(3);
  });

  it("the alert poller goes ahead of waiting commands, so a busy bot never starves it", async () => {
    const client = await startClient({
      API_BUDGET_PER_SECOND: "10",
      API_BUDGET_BURST: "1",
      API_BUDGET_MAX_WAIT_MS: "2000",
      CACHE_TTL_TOP_S: "0",
    });
    t = client;
    const order: string[] = [];
    // The first takes the only token; three commands queue behind it, then the poller arrives.
    const calls = [1, 2, 3, 4].map((limit) =>
      client.api.collections
        .top("METRIC_SALES_VOLUME", "DURATION_1_DAY", { limit })
        .then(() => order.push(`command ${limit}`)),
    );
    await new Promise((resolve) => setTimeout(resolve, 20));
    calls.push(
      client.api.foundational
        .contracts({ limit: 1 }, { fresh: true, background: true })
        .then(() => order.push("poller")),
    );
    await Promise.all(calls);
    expect(order.indexOf("poller")).toBeLessThanOrEqual(1);
  });
});

describe("UpstreamBudget", () => {
  it("a waiter who gives up leaves the line and takes no token; one past the wait is refused at once", async () => {
    const budget = new UpstreamBudget({ perSecond: 20, burst: 1, maxWaitMs: 120 });
    await budget.take();
    const controller = new AbortController();
    const gaveUp = budget.take({ signal: controller.signal });
    const next = budget.take();
    controller.abort(new Error("gave up"));
    await expect(gaveUp).rejects.toThrow("gave up");
    // The token the leaver would have had goes to the next in line.
    await expect(next).resolves.toBeUndefined();
    // Two ahead at 20 a second is 100 ms; three would be 150 ms, past the 120 ms wait.
    const waiting = [budget.take(), budget.take()];
    const refused = await budget.take().catch((error: unknown) => error);
    expect(refused).toBeInstanceOf(BudgetExceededError);
    expect((refused as BudgetExceededError).retryAfterMs).toBeGreaterThan(120);
    await Promise.all(waiting);
  });
});
