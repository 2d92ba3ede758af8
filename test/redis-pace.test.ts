import { afterEach, describe, expect, it } from "vitest";
import { SteadyPace } from "../src/adapters/pace.ts";
import { SharedPacing } from "../src/cache/limits.ts";
import { RedisLink } from "../src/cache/redis.ts";
import { silentLogger } from "../src/log.ts";
import {
  type FakeTelegram,
  groupChat,
  privateChat,
  startFakeTelegram,
  user,
} from "./fakes/telegram/index.ts";
import { type ClientSetup, runtimeWith, startClient } from "./helpers.ts";
import { deleteKeys, testPrefix } from "./redis-helpers.ts";
import { REDIS_URL, redisAvailable } from "./services.ts";
import { telegramAdapterFor } from "./telegram-helpers.ts";

/** When each of the sends finished, in ms from the start. */
async function timed(sends: (() => unknown)[]): Promise<number[]> {
  const started = performance.now();
  return Promise.all(
    sends.map(async (send) => {
      await send();
      return performance.now() - started;
    }),
  );
}

describe.runIf(await redisAvailable())("platform limits counted across instances", () => {
  let links: RedisLink[] = [];
  let prefix = "";
  let fake: FakeTelegram | undefined;
  let setup: ClientSetup | undefined;
  const pacing = async (window: ConstructorParameters<typeof SharedPacing>[1]) => {
    const link = new RedisLink({ url: REDIS_URL, prefix, logger: silentLogger() });
    expect(await link.ready(2_000)).toBe(true);
    links.push(link);
    return new SharedPacing(link, window);
  };
  afterEach(async () => {
    for (const link of links) await link.close();
    links = [];
    await fake?.close();
    await setup?.close();
    fake = undefined;
    setup = undefined;
    await deleteKeys(prefix);
  });

  it("two Telegram instances sending to one group keep to the group's limit together", async () => {
    prefix = testPrefix("pace-telegram");
    fake = await startFakeTelegram();
    const group = groupChat(-100_777, "Shared group");
    fake.addChat(group);
    setup = await startClient();
    const runtime = runtimeWith(setup, []);
    // The group's limit made 3 a second, so the test need not wait minutes
    const window = { "telegram:group": { limit: 3, windowMs: 1000 } };
    const started = fake;
    const adapters = [
      telegramAdapterFor(started, runtime, { sharedPace: await pacing(window) }),
      telegramAdapterFor(started, runtime, { sharedPace: await pacing(window) }),
    ];
    const times = await timed(
      Array.from(
        { length: 9 },
        (_, i) => () => adapters[i % 2]?.sendToChat(String(group.id), { text: `alert ${i}` }),
      ),
    );
    expect(fake.messages(group.id)).toHaveLength(9);
    // Two instances counting alone would send 6 in the first second
    expect(times.filter((ms) => ms < 900).length).toBeLessThanOrEqual(3);
    expect(Math.max(...times)).toBeGreaterThan(1_900);
  });

  it("two Telegram instances sending to one chat keep to its one message a second together", async () => {
    // An answer from one instance and an alert from the leader, to one person, at once.
    prefix = testPrefix("pace-telegram-chat");
    fake = await startFakeTelegram({ rateLimits: true });
    const person = user(4_242);
    fake.addChat(privateChat(person));
    setup = await startClient();
    const runtime = runtimeWith(setup, []);
    const started = fake;
    const adapters = [
      telegramAdapterFor(started, runtime, { sharedPace: await pacing({}) }),
      telegramAdapterFor(started, runtime, { sharedPace: await pacing({}) }),
    ];
    const times = await timed(
      adapters.map((adapter, i) => () => adapter.sendToChat(String(person.id), { text: `${i}` })),
    );
    expect(fake.messages(person.id)).toHaveLength(2);
    expect(fake.sent.filter((call) => !call.ok).map((call) => call.error?.description)).toEqual([]);
    expect(Math.max(...times)).toBeGreaterThan(900);
  });

  it("two instances' steady paces are held to Discord's global limit together", async () => {
    prefix = testPrefix("pace-discord");
    const window = { "discord:global": { limit: 10, windowMs: 1000 } };
    const paces = await Promise.all(
      [1, 2].map(async () => {
        const shared = await pacing(window);
        return new SteadyPace(100, undefined, () => shared.acquire("discord:global"));
      }),
    );
    const times = await timed(
      Array.from({ length: 30 }, (_, i) => () => paces[i % 2]?.run(async () => i)),
    );
    expect(times.filter((ms) => ms < 900).length).toBeLessThanOrEqual(10);
    expect(Math.max(...times)).toBeGreaterThan(1_900);
  });
});
