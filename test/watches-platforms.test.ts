import { mkdtempSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { type Bot, createBot } from "../src/bot.ts";
import { parseConfig } from "../src/config.ts";
import { silentLogger } from "../src/log.ts";
import type { Simulator } from "../src/simulator/index.ts";
import { type FakeTelegram, groupChat, startFakeTelegram, user } from "./fakes/telegram/index.ts";
import { startTestSimulator } from "./test-simulator.ts";

const admin = user(3001, "Ada", "ada");
const member = user(3002, "Max", "max");
const group = groupChat(-7001, "Watchers");

/** The bot as `npm start` builds it, on Telegram: a watch's post goes through the adapter. */
describe("watches on Telegram", () => {
  let sim: Simulator;
  let telegram: FakeTelegram;
  let dataDir: string;
  let bot: Bot | undefined;

  const start = async () => {
    const config = parseConfig({
      API_BASE_URL: sim.url,
      API_KEY: sim.apiKey,
      DATA_DIR: dataDir,
      TELEGRAM_BOT_TOKEN: telegram.token,
      TELEGRAM_API_ROOT: telegram.apiRoot,
      WATCH_TICK_MS: "100",
      WATCHES_PER_CHAT: "2",
    });
    bot = await createBot(config, { logger: silentLogger() });
    await bot.start();
  };

  async function says(from: typeof admin, text: string): Promise<string> {
    const before = telegram.sent.length;
    telegram.pushUpdate(telegram.message(group, from, text));
    const call = await telegram.waitFor(
      (c) => c.seq > before && c.ok && c.method === "sendMessage",
      10_000,
    );
    return String(call.params.text);
  }

  beforeAll(async () => {
    sim = await startTestSimulator();
    telegram = await startFakeTelegram();
    telegram.setMemberStatus(group.id, admin.id, "administrator");
    telegram.setMemberStatus(group.id, member.id, "member");
    dataDir = mkdtempSync(join(tmpdir(), "bot-watches-"));
    await start();
  });
  afterAll(async () => {
    await bot?.stop();
    await telegram?.close();
    await sim?.close();
    rmSync(dataDir, { recursive: true, force: true });
  });

  it("an owner jump over the threshold is posted in the group once, and not again after a restart", async () => {
    const { collection } = sim.fixtures;
    expect(await says(member, `/watch collection ${collection} owners 5`)).toContain(
      "Only people who can manage this channel",
    );
    sim.bumpOwners(collection, 40);
    const before = telegram.sent.length;
    expect(await says(admin, `/watch collection ${collection} owners 5`)).toContain("Watching #1");
    const post = await telegram.waitFor(
      (c) =>
        c.seq > before &&
        c.ok &&
        c.method === "sendMessage" &&
        String(c.params.text).includes("Owner count rose"),
      10_000,
    );
    expect(post.params.chat_id).toBe(group.id);
    // Anyone may list; the cap holds.
    expect(await says(member, "/watch list")).toContain("#1");
    expect(await says(admin, `/watch wallet ${sim.fixtures.wallet}`)).toContain("Watching #2");
    expect(await says(admin, `/watch collection ${sim.fixtures.erc1155Collection}`)).toContain(
      "the most it may have (2)",
    );

    await bot?.stop();
    const afterStop = telegram.sent.length;
    await start();
    // A few checker rounds after the restart (it ticks every 100 ms).
    await new Promise((resolve) => setTimeout(resolve, 600));
    const posts = telegram.sent
      .slice(afterStop)
      .filter((c) => c.method === "sendMessage" && String(c.params.text).includes("Owner count"));
    expect(posts).toEqual([]);
    const all = telegram.sent.filter(
      (c) => c.method === "sendMessage" && String(c.params.text).includes("Owner count rose"),
    );
    expect(all).toHaveLength(1);
  });
});
