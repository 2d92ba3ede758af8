import { mkdtempSync, rmSync } from "node:fs";
import { createServer } from "node:net";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { PassThrough } from "node:stream";
import { afterEach, describe, expect, it } from "vitest";
import { type Bot, createBot } from "../src/bot.ts";
import { parseConfig } from "../src/config.ts";
import { StartupError } from "../src/errors.ts";
import { silentLogger } from "../src/log.ts";
import { testInvocation } from "./helpers.ts";
import { POSTGRES_URL, postgresAvailable } from "./services.ts";
import { dropSchema, freshSchemaName } from "./store/backends.ts";
import { startTestSimulator } from "./test-simulator.ts";

const cleanups: (() => Promise<void> | void)[] = [];
afterEach(async () => {
  for (const cleanup of cleanups.splice(0).reverse()) await cleanup();
});

async function closedPort(): Promise<number> {
  const server = createServer();
  await new Promise<void>((resolve) => server.listen(0, "127.0.0.1", resolve));
  const { port } = server.address() as { port: number };
  await new Promise<void>((resolve) => server.close(() => resolve()));
  return port;
}

describe("DATABASE_URL at start", () => {
  it("an unreachable PostgreSQL is a StartupError naming DATABASE_URL and the host, never the password", async () => {
    const dataDir = mkdtempSync(join(tmpdir(), "bot-pg-"));
    cleanups.push(() => rmSync(dataDir, { recursive: true, force: true }));
    const sim = await startTestSimulator();
    cleanups.push(() => sim.close());
    const port = await closedPort();
    const failure = await createBot(
      parseConfig({
        API_BASE_URL: sim.url,
        API_KEY: sim.apiKey,
        DATA_DIR: dataDir,
        DATABASE_URL: `postgres://bot:s3cret-pw@127.0.0.1:${port}/bot`,
      }),
      { logger: silentLogger(), input: new PassThrough(), output: new PassThrough() },
    ).catch((error: unknown) => error);
    expect(failure).toBeInstanceOf(StartupError);
    const message = (failure as Error).message;
    expect(message).toMatch(new RegExp(`^DATABASE_URL: .*127\\.0\\.0\\.1:${port}`));
    expect(message).toMatch(/ECONNREFUSED/);
    expect(message).not.toContain("s3cret-pw");
  });
});

describe.runIf(await postgresAvailable())("bots on one PostgreSQL schema", () => {
  it("a button made on one instance works when pressed on another", async () => {
    const schema = freshSchemaName();
    cleanups.push(() => dropSchema(schema));
    const sim = await startTestSimulator();
    cleanups.push(() => sim.close());
    const bots: Bot[] = [];
    for (const _ of [1, 2]) {
      const dataDir = mkdtempSync(join(tmpdir(), "bot-pg-"));
      cleanups.push(() => rmSync(dataDir, { recursive: true, force: true }));
      const bot = await createBot(
        parseConfig({
          API_BASE_URL: sim.url,
          API_KEY: sim.apiKey,
          DATA_DIR: dataDir,
          DATABASE_URL: POSTGRES_URL,
          DATABASE_SCHEMA: schema,
        }),
        { logger: silentLogger(), input: new PassThrough(), output: new PassThrough() },
      );
      cleanups.push(() => bot.stop());
      bots.push(bot);
    }
    const [a, b] = bots;
    if (!a || !b) throw new Error("two bots expected");
    expect(a.db).toBeUndefined();
    const reply = await a.runtime.runText(testInvocation(), "audience", sim.fixtures.collection);
    const id = reply.buttons?.[0]?.id ?? "";
    expect(id).toMatch(/^[A-Za-z0-9_-]{22}$/);
    const page = await b.runtime.click(testInvocation(), id);
    expect(page.title).toMatch(/Sample wallets/);
    // The chat it belongs to is checked on the other instance too.
    expect(
      (await b.runtime.click(testInvocation({ chat: { id: "other-chat", kind: "group" } }), id))
        .text,
    ).toMatch(/belongs to another chat/);
    expect(await b.health()).toMatchObject({ database: true });
  });
});
