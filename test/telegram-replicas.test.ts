import { mkdtempSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { PassThrough } from "node:stream";
import { afterEach, describe, expect, it } from "vitest";
import { type Bot, createBot } from "../src/bot.ts";
import { parseConfig } from "../src/config.ts";
import { silentLogger } from "../src/log.ts";
import { privateChat, startFakeTelegram, user } from "./fakes/telegram/index.ts";
import { freePort } from "./helpers.ts";
import { POSTGRES_URL, postgresAvailable } from "./services.ts";
import { dropSchema, freshSchemaName } from "./store/backends.ts";
import { startTestSimulator } from "./test-simulator.ts";

const cleanups: (() => Promise<void> | void)[] = [];
afterEach(async () => {
  for (const cleanup of cleanups.splice(0).reverse()) await cleanup();
});

/**
 * Several instances behind one webhook URL (issue 16): Telegram re-delivers an update it did not
 * see acknowledged, and a load balancer may hand the second delivery to another replica. The
 * update ids are deduplicated in the shared PostgreSQL store, so it is answered once.
 */
describe.runIf(await postgresAvailable())("Telegram webhook replicas on one store", () => {
  it("an update delivered to two replicas is answered once; each update is answered by the replica that got it", async () => {
    const schema = freshSchemaName();
    cleanups.push(() => dropSchema(schema));
    const sim = await startTestSimulator();
    cleanups.push(() => sim.close());
    const telegram = await startFakeTelegram();
    cleanups.push(() => telegram.close());
    const replicas: { bot: Bot; url: string }[] = [];
    for (const _ of [1, 2, 3]) {
      const dataDir = mkdtempSync(join(tmpdir(), "tg-replica-"));
      cleanups.push(() => rmSync(dataDir, { recursive: true, force: true }));
      const port = await freePort();
      const bot = await createBot(
        parseConfig({
          API_BASE_URL: sim.url,
          API_KEY: sim.apiKey,
          DATA_DIR: dataDir,
          DATABASE_URL: POSTGRES_URL,
          DATABASE_SCHEMA: schema,
          TELEGRAM_BOT_TOKEN: telegram.token,
          TELEGRAM_API_ROOT: telegram.apiRoot,
          TELEGRAM_WEBHOOK_URL: "https://bot.example.com/telegram",
          TELEGRAM_WEBHOOK_SECRET: "replica-webhook-secret",
          HTTP_PORT: String(port),
          HTTP_HOST: "127.0.0.1",
        }),
        { logger: silentLogger(), input: new PassThrough(), output: new PassThrough() },
      );
      cleanups.push(() => bot.stop());
      await bot.start();
      replicas.push({ bot, url: `http://127.0.0.1:${port}/telegram` });
    }
    let nextId = 9_000;
    const post = (url: string, update: object) =>
      fetch(url, {
        method: "POST",
        headers: {
          "content-type": "application/json",
          "x-telegram-bot-api-secret-token": "replica-webhook-secret",
        },
        body: JSON.stringify(update),
      });
    const sends = (chatId: number) =>
      telegram.sent.filter(
        (call) => call.method === "sendMessage" && Number(call.params.chat_id) === chatId,
      ).length;

    // One update, delivered to every replica (Telegram's retry landing elsewhere).
    const alice = user(71);
    const once = { update_id: nextId++, ...telegram.message(privateChat(alice), alice, "/help") };
    const statuses = await Promise.all(replicas.map(({ url }) => post(url, once)));
    expect(statuses.map((response) => response.status)).toEqual([200, 200, 200]);
    await expect.poll(() => sends(alice.id), { timeout: 5_000 }).toBe(1);

    // Distinct updates spread over the replicas: each is answered.
    const people = [72, 73, 74, 75, 76, 77].map((id) => user(id));
    await Promise.all(
      people.map((person, i) =>
        post(replicas[i % replicas.length]?.url ?? "", {
          update_id: nextId++,
          ...telegram.message(privateChat(person), person, "/help"),
        }),
      ),
    );
    for (const person of people)
      await expect.poll(() => sends(person.id), { timeout: 5_000 }).toBe(1);
    // Settled: nothing answered twice after the fact.
    await new Promise((resolve) => setTimeout(resolve, 300));
    expect(sends(alice.id)).toBe(1);
  });
});
