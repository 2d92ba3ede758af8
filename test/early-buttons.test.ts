/**
 * Issue 34, item 11: /nft's buttons are stored while its three reads are in flight, not after the
 * last answer arrives, and they still work the moment the reply is out: on SQLite, and on
 * PostgreSQL from another instance.
 */
import { mkdtempSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { PassThrough } from "node:stream";
import { afterEach, describe, expect, it } from "vitest";
import nft from "../commands/nft.ts";
import type { ApiClient } from "../src/api/client.ts";
import { type Bot, createBot } from "../src/bot.ts";
import { parseConfig } from "../src/config.ts";
import { type ActionStore, MemoryActionStore } from "../src/core/actions.ts";
import type { OutcomeEvent } from "../src/core/outcome.ts";
import type { RenderableReply } from "../src/core/reply.ts";
import { silentLogger } from "../src/log.ts";
import { capturingLogger, runtimeWith, startClient, testInvocation } from "./helpers.ts";
import { POSTGRES_URL, postgresAvailable } from "./services.ts";
import { dropSchema, freshSchemaName } from "./store/backends.ts";
import { startTestSimulator } from "./test-simulator.ts";

const cleanups: (() => unknown)[] = [];
afterEach(async () => {
  for (const cleanup of cleanups.splice(0).reverse()) await cleanup();
});

const rawButton = (reply: RenderableReply) =>
  reply.buttons?.find((button) => button.label === "Raw metadata")?.id ?? "";

/**
 * The client, its three /nft reads each held after its answer arrived until `release()`: the
 * command cannot finish before.
 */
function heldReads(api: ApiClient): { api: ApiClient; release(): void; held(): number } {
  let release = () => {};
  const released = new Promise<void>((resolve) => {
    release = resolve;
  });
  let held = 0;
  const hold =
    <A extends unknown[], R>(read: (...args: A) => Promise<R>) =>
    async (...args: A): Promise<R> => {
      const result = await read(...args);
      held++;
      await released;
      return result;
    };
  const real = api.foundational;
  const foundational: ApiClient["foundational"] = Object.create(real);
  foundational.nftDetails = hold(real.nftDetails.bind(real));
  foundational.tokenOwners = hold(real.tokenOwners.bind(real));
  foundational.rawMetadata = hold(real.rawMetadata.bind(real));
  const wrapped: ApiClient = Object.create(api, { foundational: { value: foundational } });
  return { api: wrapped, release, held: () => held };
}

describe("/nft's buttons", () => {
  it("are stored while the reads are in flight: the reply waits for no store after them", async () => {
    const setup = await startClient();
    cleanups.push(() => setup.close());
    const reads = heldReads(setup.api);
    const memory = new MemoryActionStore();
    const stores: number[] = [];
    const actions: ActionStore = {
      putMany: (batch) => {
        // How many reads had answered when the buttons were stored; then the reads may finish.
        stores.push(reads.held());
        reads.release();
        return memory.putMany(batch);
      },
      get: (id) => memory.get(id),
      prune: (now) => memory.prune(now),
    };
    // Stored only after the reads (as before), the reads would wait for ever: the deadline ends it.
    const runtime = runtimeWith(setup, [nft], { api: reads.api, actions, deadlineMs: 2000 });
    const { contract, tokenId } = setup.sim.fixtures.token;
    const reply = await runtime.runText(testInvocation(), "nft", `${contract} ${tokenId}`);
    expect(reply.text ?? "").not.toMatch(/took longer/);
    expect(reply.footer).toBe("NFT details");
    expect(stores).toHaveLength(1);
    expect(stores[0]).toBeLessThan(3);
    const raw = await runtime.click(testInvocation(), rawButton(reply));
    expect(raw.title).toMatch(/^Raw metadata of #/);
  });

  it("work when storing them ahead failed: the reply stores them itself", async () => {
    const setup = await startClient();
    cleanups.push(() => setup.close());
    const memory = new MemoryActionStore();
    let calls = 0;
    const actions: ActionStore = {
      putMany: async (batch) => {
        calls++;
        if (calls === 1) throw new Error("SQLITE_FULL: database or disk is full");
        return memory.putMany(batch);
      },
      get: (id) => memory.get(id),
      prune: (now) => memory.prune(now),
    };
    const runtime = runtimeWith(setup, [nft], { actions });
    const { contract, tokenId } = setup.sim.fixtures.token;
    const reply = await runtime.runText(testInvocation(), "nft", `${contract} ${tokenId}`);
    expect(calls).toBe(2);
    expect(reply.footer).toBe("NFT details");
    const raw = await runtime.click(testInvocation(), rawButton(reply));
    expect(raw.title).toMatch(/^Raw metadata of #/);
    // Pressed in another chat, the stored action says whose it is.
    const elsewhere = await runtime.click(
      testInvocation({ chat: { id: "chat-2", kind: "group" } }),
      rawButton(reply),
    );
    expect(elsewhere.text).toMatch(/belongs to another chat/);
  });
});

describe("after /nft's answer", () => {
  it("its log line, its count and its bookkeeping come after the answer, and they come", async () => {
    const setup = await startClient();
    cleanups.push(() => setup.close());
    const { logger, lines } = capturingLogger();
    const runtime = runtimeWith(setup, [nft], { logger });
    const counted: OutcomeEvent[] = [];
    runtime.onOutcome = (event) => counted.push(event);
    const { contract, tokenId } = setup.sim.fixtures.token;
    const { nft: token } = await setup.api.foundational.nftDetails(contract, tokenId);
    const name = token.collection?.name ?? "";
    expect(name).not.toBe("");
    const known = () => runtime.collections.name(token.contractAddress) === name;
    const answered = () => lines.filter((line) => line.includes('"invocation answered"'));

    const reply = await runtime.runText(testInvocation(), "nft", `${contract} ${tokenId}`);
    expect(reply.footer).toBe("NFT details");
    // The answer is back; nothing of what it does not need has been done yet.
    expect(counted).toEqual([]);
    expect(answered()).toEqual([]);
    expect(known()).toBe(false);

    await runtime.settled();
    expect(counted.map((event) => [event.command, event.kind, event.outcome])).toEqual([
      ["nft", "command", "ok"],
    ]);
    expect(answered()).toHaveLength(1);
    expect(JSON.parse(answered()[0] ?? "{}")).toMatchObject({ command: "nft", outcome: "ok" });
    expect(known()).toBe(true);
  });

  it("what an answer put off is done before the next command starts, even in the same turn", async () => {
    const setup = await startClient();
    cleanups.push(() => setup.close());
    const runtime = runtimeWith(setup, [nft]);
    const counted: OutcomeEvent[] = [];
    runtime.onOutcome = (event) => counted.push(event);
    const { contract, tokenId } = setup.sim.fixtures.token;
    await runtime.runText(testInvocation(), "nft", `${contract} ${tokenId}`);
    expect(counted).toEqual([]);
    // Started before the loop turns: the first answer's work is done as the second begins.
    const second = runtime.runText(testInvocation(), "nft", `${contract} ${tokenId}`);
    expect(counted).toHaveLength(1);
    await second;
    await runtime.settled();
    expect(counted).toHaveLength(2);
  });
});

/** Bots as `main` builds them, on the test simulator; each with its own DATA_DIR. */
async function bots(
  count: number,
  env: Record<string, string>,
): Promise<{ made: Bot[]; token: { contract: string; tokenId: string } }> {
  const sim = await startTestSimulator();
  cleanups.push(() => sim.close());
  const made: Bot[] = [];
  for (let i = 0; i < count; i++) {
    const dataDir = mkdtempSync(join(tmpdir(), "bot-early-"));
    cleanups.push(() => rmSync(dataDir, { recursive: true, force: true }));
    const bot = await createBot(
      parseConfig({
        API_BASE_URL: sim.url,
        API_KEY: sim.apiKey,
        DATA_DIR: dataDir,
        // One person presses many times here: no rate limit is met.
        RATE_LIMIT_BURST: "1000",
        RATE_LIMIT_PER_MINUTE: "100000",
        RATE_LIMIT_CHAT_BURST: "1000",
        RATE_LIMIT_CHAT_PER_MINUTE: "100000",
        ...env,
      }),
      { logger: silentLogger(), input: new PassThrough(), output: new PassThrough() },
    );
    cleanups.push(() => bot.stop());
    made.push(bot);
  }
  return { made, token: sim.fixtures.token };
}

/** /nft on `asked`, its Raw metadata pressed on `pressed` as soon as the answer is back. */
async function pressedAtOnce(
  asked: Bot,
  pressed: Bot,
  token: { contract: string; tokenId: string },
): Promise<void> {
  for (let i = 0; i < 20; i++) {
    const answer = await asked.runtime.answerText(
      testInvocation(),
      "nft",
      `${token.contract} ${token.tokenId}`,
    );
    expect(answer.outcome).toBe("ok");
    const raw = await pressed.runtime.answerButton(testInvocation(), rawButton(answer.reply));
    expect(raw.outcome).toBe("ok");
    expect(raw.reply.title).toMatch(/^Raw metadata of #/);
  }
}

const postgres = await postgresAvailable();

describe("a button pressed the moment its answer is out", () => {
  it("finds its action on SQLite", async () => {
    const {
      made: [bot],
      token,
    } = await bots(1, {});
    if (!bot) throw new Error("a bot expected");
    await pressedAtOnce(bot, bot, token);
  });

  it.runIf(postgres)(
    "finds its action on PostgreSQL, on the same instance and on another",
    async () => {
      const schema = freshSchemaName();
      cleanups.push(() => dropSchema(schema));
      const {
        made: [a, b],
        token,
      } = await bots(2, { DATABASE_URL: POSTGRES_URL, DATABASE_SCHEMA: schema });
      if (!a || !b) throw new Error("two bots expected");
      expect(a.db).toBeUndefined();
      await pressedAtOnce(a, a, token);
      await pressedAtOnce(a, b, token);
    },
  );
});
