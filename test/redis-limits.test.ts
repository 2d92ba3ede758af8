import { afterEach, describe, expect, it } from "vitest";
import { BudgetExceededError } from "../src/api/budget.ts";
import { SharedBudget, SharedPacing, sharedLimiters } from "../src/cache/limits.ts";
import { RedisLink } from "../src/cache/redis.ts";
import { Admission } from "../src/core/admission.ts";
import type { Invocation } from "../src/core/command.ts";
import { silentLogger } from "../src/log.ts";
import { deleteKeys, testPrefix } from "./redis-helpers.ts";
import { REDIS_URL, redisAvailable } from "./services.ts";

function invocation(user: string, chat: string): Invocation {
  return {
    id: "inv",
    platform: "telegram",
    user: { id: user, name: user },
    chat: { id: chat, kind: "group" },
    canManageChannel: async () => false,
  };
}

describe.runIf(await redisAvailable())("rate limits shared over Redis", () => {
  let links: RedisLink[] = [];
  let prefix = "";
  const link = async () => {
    const one = new RedisLink({ url: REDIS_URL, prefix, logger: silentLogger() });
    expect(await one.ready(2_000)).toBe(true);
    links.push(one);
    return one;
  };
  afterEach(async () => {
    for (const one of links) await one.close();
    links = [];
    await deleteKeys(prefix);
  });

  it("a person's limit of 3 allows 3 in total across two instances, not 6", async () => {
    prefix = testPrefix("limits-person");
    const limit = { burst: 3, perMinute: 3 };
    const a = new Admission(limit, undefined, undefined, sharedLimiters(await link()));
    const b = new Admission(limit, undefined, undefined, sharedLimiters(await link()));
    const answers = [];
    for (let i = 0; i < 10; i++)
      answers.push(await (i % 2 === 0 ? a : b).admit(invocation("42", `chat-${i}`)));
    expect(answers.filter((refusal) => refusal === undefined)).toHaveLength(3);
    // Each instance says "slow down" once, then refuses quietly
    const loud = answers.filter((refusal) => refusal !== undefined && refusal.quiet !== true);
    expect(loud).toHaveLength(2);
    // Another person is not held up
    expect(await b.admit(invocation("43", "chat-x"))).toBeUndefined();
  });

  it("a chat's limit holds across instances, whoever asks in it", async () => {
    prefix = testPrefix("limits-chat");
    const person = { burst: 100, perMinute: 100 };
    const chat = { telegram: { burst: 4, perMinute: 4 } };
    const a = new Admission(person, chat, undefined, sharedLimiters(await link()));
    const b = new Admission(person, chat, undefined, sharedLimiters(await link()));
    let allowed = 0;
    for (let i = 0; i < 12; i++)
      if ((await (i % 2 === 0 ? a : b).admit(invocation(`user-${i}`, "group-1"))) === undefined)
        allowed++;
    expect(allowed).toBe(4);
  });

  it("a group's command is admitted in one round trip to Redis, the person's and the chat's limits both counted", async () => {
    prefix = testPrefix("limits-one-trip");
    const shared = await link();
    const admission = new Admission(
      { burst: 2, perMinute: 2 },
      { telegram: { burst: 3, perMinute: 3 } },
      undefined,
      sharedLimiters(shared),
    );
    let trips = 0;
    const run = shared.run.bind(shared);
    shared.run = (commands) => {
      trips++;
      return run(commands);
    };
    expect(await admission.admit(invocation("a", "group-1"))).toBeUndefined();
    expect(trips).toBe(1);
    // Both were counted: a's second passes, a's third is refused by the person's limit; b's
    // first passes (the chat's third), b's second is refused by the chat's.
    expect(await admission.admit(invocation("a", "group-1"))).toBeUndefined();
    expect((await admission.admit(invocation("a", "group-1")))?.text).toMatch(
      /sending commands quickly/,
    );
    expect(await admission.admit(invocation("b", "group-1"))).toBeUndefined();
    expect((await admission.admit(invocation("b", "group-1")))?.text).toMatch(
      /chat is sending me many/,
    );
    expect(trips).toBe(5);
  });

  it("a person refused takes nothing from the chat's allowance", async () => {
    prefix = testPrefix("limits-refused-person");
    const admission = new Admission(
      { burst: 1, perMinute: 1 },
      { telegram: { burst: 3, perMinute: 3 } },
      undefined,
      sharedLimiters(await link()),
    );
    const answers = [];
    for (let i = 0; i < 5; i++) answers.push(await admission.admit(invocation("a", "group-2")));
    expect(answers.filter((refusal) => refusal === undefined)).toHaveLength(1);
    // a's four refusals left the chat two of its three: b and c are answered, d is refused.
    expect(await admission.admit(invocation("b", "group-2"))).toBeUndefined();
    expect(await admission.admit(invocation("c", "group-2"))).toBeUndefined();
    expect((await admission.admit(invocation("d", "group-2")))?.text).toMatch(
      /chat is sending me many/,
    );
  });

  it("the upstream budget is one budget: a burst of 5 lets 5 through over two instances, refuses the rest", async () => {
    prefix = testPrefix("limits-budget");
    const options = { perSecond: 5, burst: 5, maxWaitMs: 0 };
    const budgets = [
      new SharedBudget(await link(), options),
      new SharedBudget(await link(), options),
    ];
    const results = await Promise.allSettled(
      Array.from({ length: 10 }, (_, i) => budgets[i % 2]?.take()),
    );
    expect(results.filter((result) => result.status === "fulfilled")).toHaveLength(5);
    const refused = results.filter((result) => result.status === "rejected");
    expect(refused).toHaveLength(5);
    expect((refused[0] as PromiseRejectedResult).reason).toBeInstanceOf(BudgetExceededError);
    // Background work is never refused: it waits for the next window, which may be any part of
    // a second away (the burst may have come late in its window: 197 ms was seen).
    const started = performance.now();
    await expect(budgets[0]?.take({ background: true })).resolves.toBeUndefined();
    const waited = performance.now() - started;
    expect(waited).toBeGreaterThan(0);
    expect(waited).toBeLessThan(1_500);
  });

  it("a platform limit of 10 a second paces two instances' sends as one: 30 sends take 3 windows", async () => {
    prefix = testPrefix("limits-pace");
    const window = { "discord:global": { limit: 10, windowMs: 1000 } };
    const pacers = [new SharedPacing(await link(), window), new SharedPacing(await link(), window)];
    const started = performance.now();
    const times = await Promise.all(
      Array.from({ length: 30 }, async (_, i) => {
        await pacers[i % 2]?.acquire("discord:global");
        return performance.now() - started;
      }),
    );
    // At most 10 start in the first window (two instances alone would let 20 through)
    expect(times.filter((ms) => ms < 900).length).toBeLessThanOrEqual(10);
    expect(Math.max(...times)).toBeGreaterThan(1_000);
  });
});
