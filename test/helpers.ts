import { mkdtempSync, rmSync } from "node:fs";
import { createServer } from "node:net";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { Writable } from "node:stream";
import type { PrivateKeyAccount } from "viem/accounts";
import { allCommands } from "../commands/index.ts";
import { alertStoresOf } from "../src/alerts/store/index.ts";
import type { SubscriptionStore } from "../src/alerts/store/types.ts";
import { type ApiClient, createApiClient } from "../src/api/client.ts";
import { apiClientSettings } from "../src/bot.ts";
import type { Chain } from "../src/chains.ts";
import { type Config, parseConfig } from "../src/config.ts";
import { MemoryActionStore } from "../src/core/actions.ts";
import type { AnyCommand, Invocation } from "../src/core/command.ts";
import type { RenderableReply } from "../src/core/reply.ts";
import { newInvocationId, Runtime, type RuntimeOptions } from "../src/core/runtime.ts";
import type { ErrorCode } from "../src/error-codes.ts";
import { createLogger, type Logger, silentLogger } from "../src/log.ts";
import { CachedChartDrawer } from "../src/render/chart-drawer.ts";
import { renderConsole } from "../src/render/console.ts";
import type { Simulator, SimulatorOptions } from "../src/simulator/index.ts";
import {
  type Db,
  openMemorySqliteStore,
  openSqliteStore,
  type SqliteStore,
} from "../src/store/sqlite/index.ts";
import { createVerifyService } from "../src/verify/service.ts";
import type { VerifiedNotifier, VerifyService } from "../src/verify/types.ts";
import { buildRuntime, openStores } from "../src/wiring.ts";
import { startTestSimulator } from "./test-simulator.ts";

/** A logger whose JSON lines are kept for assertions. */
export function capturingLogger(secrets: string[] = []): { logger: Logger; lines: string[] } {
  const lines: string[] = [];
  const destination = new Writable({
    write(chunk, _encoding, callback) {
      lines.push(String(chunk));
      callback();
    },
  });
  return { logger: createLogger({ level: "debug", secrets, destination }), lines };
}

export interface ClientSetup {
  sim: Simulator;
  api: ApiClient;
  config: Config;
  lines: string[];
  close(): Promise<void>;
}

/** The simulator on loopback and a client for it, with fast retries for tests. */
export async function startClient(
  env: Record<string, string> = {},
  simOptions: SimulatorOptions = {},
  overrides: { apiKey?: string } = {},
): Promise<ClientSetup> {
  const sim = await startTestSimulator({ apiKey: "test-key-8c1f0e", ...simOptions });
  const config = parseConfig({
    API_TIMEOUT_MS: "2000",
    API_RETRIES: "3",
    API_RETRY_MIN_DELAY_MS: "10",
    API_RETRY_MAX_DELAY_MS: "50",
    API_RETRY_MAX_TOTAL_MS: "5000",
    // Tests that are not about the upstream budget must not meet it.
    API_BUDGET_PER_SECOND: "100000",
    API_BUDGET_BURST: "100000",
    ...env,
  });
  const apiKey = overrides.apiKey ?? sim.apiKey;
  const { logger, lines } = capturingLogger([apiKey]);
  const api = createApiClient(apiClientSettings(config, sim.url, apiKey), logger);
  return {
    sim,
    api,
    config,
    lines,
    async close() {
      await api.close();
      await sim.close();
    },
  };
}

/** Runs a promise expected to fail and returns its error. */
export async function failure(promise: Promise<unknown>): Promise<Error> {
  try {
    await promise;
  } catch (error) {
    return error as Error;
  }
  throw new Error("expected the call to fail, but it succeeded");
}

export interface RuntimeSetup extends ClientSetup {
  /** The chains the runtime serves: ethereum alone unless the test set CHAINS. */
  chains: readonly Chain[];
  /** Each chain's client (the first is `api`). */
  apis: Map<string, ApiClient>;
  runtime: Runtime;
  /** The runtime's chart drawer, with its cache's hits and misses. */
  charts: CachedChartDrawer;
  /** SQLite in a temp directory, removed on close. */
  db: Db;
  /** The store over `db`. */
  store: SqliteStore;
  dataDir: string;
  subscriptions: SubscriptionStore;
  /** Runs "/top volume 1d" (or without the slash) as a text command and returns the reply. */
  say(line: string, who?: Partial<Invocation>): Promise<RenderableReply>;
  /** Presses a button by id. */
  press(id: string, who?: Partial<Invocation>): Promise<RenderableReply>;
  /**
   * Runs a text command as `say` does and returns its refusal code (undefined when it was not
   * refused): what a test of behaviour checks, rather than the wording.
   */
  refusal(line: string, who?: Partial<Invocation>): Promise<ErrorCode | undefined>;
  /** Presses a button as `press` does and returns its refusal code (undefined when none). */
  pressRefusal(id: string, who?: Partial<Invocation>): Promise<ErrorCode | undefined>;
  /** Renders a reply as the console would, for readable assertions. */
  text(reply: RenderableReply): string;
  /** The runtime's verification service, on `store` (links at http://127.0.0.1:9/verify/…). */
  verify: VerifyService;
  /** Where `verify` tells a proof (an adapter's notifyVerified); none until a test sets it. */
  onVerified: VerifiedNotifier | undefined;
  /**
   * Proves a wallet for the person as the page would: /verify's link, a challenge, the message
   * signed by `account` (a new key unless given), the proof. Returns the account.
   */
  prove(
    who?: Partial<Invocation>,
    account?: PrivateKeyAccount,
    chain?: string,
  ): Promise<PrivateKeyAccount>;
}

/** The token at the end of a /verify link. */
export function verifyToken(url: string): string {
  return url.slice(url.lastIndexOf("/") + 1);
}

/** What the page does with a link: a challenge for the account, signed, and the proof. */
export async function proveWithLink(
  service: VerifyService,
  url: string,
  given?: PrivateKeyAccount,
): Promise<PrivateKeyAccount> {
  // viem only in the tests that prove (as the bot loads it only with the first challenge).
  const { generatePrivateKey, privateKeyToAccount } = await import("viem/accounts");
  const account = given ?? privateKeyToAccount(generatePrivateKey());
  const token = verifyToken(url);
  const asked = await service.challenge(token, account.address);
  if (!asked.ok) throw new Error(`challenge refused: ${asked.refusal.message}`);
  const { message } = asked.challenge;
  const proved = await service.prove(token, message, await account.signMessage({ message }));
  if (!proved.ok) throw new Error(`proof refused: ${proved.refusal.message}`);
  return account;
}

export function testInvocation(overrides: Partial<Invocation> = {}): Invocation {
  return {
    id: newInvocationId(),
    platform: "telegram",
    user: { id: "u1", name: "Tester" },
    chat: { id: "chat-1", kind: "group" },
    canManageChannel: async () => true,
    ...overrides,
  };
}

/** The simulator, a client and the runtime with every command, as the bot wires them. */
export async function startRuntime(
  env: Record<string, string> = {},
  simOptions: SimulatorOptions = {},
  extraCommands: AnyCommand[] = [],
  runtimeOverrides: Partial<RuntimeOptions> = {},
): Promise<RuntimeSetup> {
  // With CHAINS (compact form, no URLs), the simulator serves those chains.
  const chainIds = env.CHAINS?.split(",").map((part) => part.split("=")[0]?.trim() ?? "");
  const setup = await startClient(
    env,
    chainIds && !simOptions.chains ? { ...simOptions, chains: chainIds } : simOptions,
  );
  // One chain (ethereum, on the simulator's unprefixed world) unless the test names CHAINS: the
  // replies of most tests are about anything but chains.
  const chains = env.CHAINS ? setup.config.chains : setup.config.chains.slice(0, 1);
  const apis = new Map<string, ApiClient>();
  for (const [index, chain] of chains.entries()) {
    if (index === 0 && !env.CHAINS) apis.set(chain.id, setup.api);
    else
      apis.set(
        chain.id,
        createApiClient(
          apiClientSettings(setup.config, setup.sim.urlOf(chain.id), setup.sim.apiKey),
          silentLogger(),
        ),
      );
  }
  const api = apis.get(chains[0]?.id ?? "") ?? setup.api;
  const dataDir = mkdtempSync(join(tmpdir(), "bot-test-"));
  const store = openSqliteStore(dataDir);
  const { db } = store;
  const { subscriptions } = alertStoresOf(store);
  const stores = openStores(store, undefined, chains);
  const charts = new CachedChartDrawer();
  const verify = createVerifyService({
    store,
    chains,
    baseUrl: () => "http://127.0.0.1:9",
    logger: silentLogger(),
    notify: async (notice) => {
      await ready.onVerified?.(notice);
    },
  });
  // The bot's own wiring, with what tests are not about out of the way: no rate limits to meet.
  const runtime = buildRuntime(
    setup.config,
    {
      api,
      chains,
      apis,
      stores,
      charts,
      logger: silentLogger(),
      commands: [...allCommands(), ...extraCommands],
    },
    {
      rateLimit: { burst: 1000, perMinute: 100_000 },
      chatRateLimit: {},
      collectionRefreshMs: 15 * 60_000,
      ...runtimeOverrides,
      services: { verify, ...runtimeOverrides.services },
    },
  );
  const ready: RuntimeSetup = {
    ...setup,
    onVerified: undefined,
    api,
    chains,
    apis,
    runtime,
    charts,
    db,
    store,
    dataDir,
    subscriptions,
    async close() {
      for (const client of apis.values()) if (client !== setup.api) await client.close();
      await setup.close();
      await store.close();
      rmSync(dataDir, { recursive: true, force: true });
    },
    say(line, who) {
      const match = /^\/?([A-Za-z0-9_]+)(?:\s+([\s\S]*))?$/.exec(line.trim());
      if (!match?.[1]) throw new Error(`not a command line: ${line}`);
      return runtime.runText(testInvocation(who), match[1], match[2] ?? "");
    },
    async refusal(line, who) {
      const match = /^\/?([A-Za-z0-9_]+)(?:\s+([\s\S]*))?$/.exec(line.trim());
      if (!match?.[1]) throw new Error(`not a command line: ${line}`);
      return (await runtime.answerText(testInvocation(who), match[1], match[2] ?? "")).code;
    },
    async pressRefusal(id, who) {
      return (await runtime.answerButton(testInvocation(who), id)).code;
    },
    verify,
    async prove(who, account, chain) {
      const invocation = testInvocation(who);
      const made = await verify.createLink(
        { platform: invocation.platform, userId: invocation.user.id, chatId: invocation.chat.id },
        chain ?? chains[0]?.id ?? "ethereum",
      );
      if (!made.ok) throw new Error(`no link: ${made.refusal.message}`);
      return proveWithLink(verify, made.link.url, account);
    },
    press(id, who) {
      return runtime.click(testInvocation(who), id);
    },
    text(reply) {
      return renderConsole(reply).text;
    },
  };
  return ready;
}

/**
 * A runtime over the given commands with test defaults (buttons in memory, the store a SQLite
 * database in memory); each test overrides what it is about.
 */
export function runtimeWith(
  setup: ClientSetup,
  commands: AnyCommand[],
  overrides: Partial<RuntimeOptions> = {},
): Runtime {
  return new Runtime({
    commands,
    api: setup.api,
    actions: new MemoryActionStore(),
    charts: new CachedChartDrawer(),
    logger: capturingLogger().logger,
    settings: {
      reportsPerHour: 10,
      ipfsGateway: "https://ipfs.io/ipfs/",
    },
    deadlineMs: 5000,
    rateLimit: { burst: 5, perMinute: 60 },
    buttonTtlSeconds: 60,
    ...overrides,
    store: overrides.store ?? openMemorySqliteStore(),
  });
}

/**
 * A loopback port free right now, from the system (a port drawn at random may be one of the
 * system's ephemeral ports, already taken by a connection of another test).
 */
export async function freePort(): Promise<number> {
  const server = createServer();
  await new Promise<void>((resolve) => server.listen(0, "127.0.0.1", resolve));
  const { port } = server.address() as { port: number };
  await new Promise<void>((resolve) => server.close(() => resolve()));
  return port;
}

/** A bot's SQLite database (tests that look at its tables run the bot on SQLite). */
export function sqliteDbOf(bot: { db: Db | undefined }): Db {
  if (!bot.db) throw new Error("this bot's store is not SQLite: it has no SQLite database");
  return bot.db;
}

/**
 * The settings of a bot on the test simulator and the fake platforms given, in `dataDir`: what
 * every bot-level test writes first; `extra` adds or overrides settings.
 */
let portsTaken = 0;

/**
 * A port for a bot that must listen on a set port (Discord HTTP interactions default to 8443,
 * which bots of test files running side by side would all take): a block of 200 below the
 * system's ephemeral range for each of vitest's workers.
 */
export function testListenPort(): number {
  const worker = Number(process.env.VITEST_POOL_ID ?? process.env.VITEST_WORKER_ID ?? 1) % 40;
  return 20_000 + worker * 200 + (portsTaken++ % 200);
}

export function worldEnv(
  parts: {
    sim: { url: string; apiKey: string };
    dataDir: string;
    telegram?: { token: string; apiRoot: string };
    discord?: { token: string; apiBase: string; guildId: string };
  },
  extra: Record<string, string> = {},
): Record<string, string> {
  const { sim, dataDir, telegram, discord } = parts;
  return {
    API_BASE_URL: sim.url,
    API_KEY: sim.apiKey,
    DATA_DIR: dataDir,
    ...(telegram
      ? { TELEGRAM_BOT_TOKEN: telegram.token, TELEGRAM_API_ROOT: telegram.apiRoot }
      : {}),
    ...(discord
      ? {
          DISCORD_TOKEN: discord.token,
          DISCORD_API_URL: discord.apiBase,
          DISCORD_GUILD_ID: discord.guildId,
          DISCORD_REGISTER_ON_START: "true",
        }
      : {}),
    // Called from outside (HTTP interactions): a port of this worker's own, not 8443.
    ...(extra.DISCORD_PUBLIC_KEY && !extra.HTTP_PORT
      ? { HTTP_PORT: String(testListenPort()), HTTP_HOST: "127.0.0.1" }
      : {}),
    ...extra,
  };
}
