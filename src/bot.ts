import { allCommands } from "../commands/index.ts";
import { ConsoleAdapter } from "./adapters/console/index.ts";
import type { DiscordAdapter } from "./adapters/discord/index.ts";
import type { TelegramAdapter } from "./adapters/telegram/index.ts";
import { type AlertSender, DeliveryWorker } from "./alerts/delivery.ts";
import { leaseHolderName, NewContractPoller } from "./alerts/poller.ts";
import { type ApiClient, createApiClient } from "./api/client.ts";
import type { Config } from "./config.ts";
import type { Platform } from "./core/command.ts";
import { KnownCollections } from "./core/known-collections.ts";
import { Runtime } from "./core/runtime.ts";
import { StartupError } from "./errors.ts";
import type { Logger } from "./log.ts";
import { createMetrics, type Metrics } from "./ops/metrics.ts";
import { type Health, startOpsServer } from "./ops/server.ts";
import { ReportRetryWorker } from "./reports/submit.ts";
import type { Simulator } from "./simulator/index.ts";
import { type Db, openSqliteStore } from "./store/sqlite/index.ts";
import type { Store } from "./store/types.ts";
import { SourceUpdateDedup } from "./store/updates.ts";

export interface BotDeps {
  logger: Logger;
  /** Console chat streams (default stdin/stdout). */
  input?: NodeJS.ReadableStream;
  output?: NodeJS.WritableStream;
  /** Monotonic clock in ms for elapsed times (default performance.now), injectable for tests. */
  monotonic?: () => number;
  /** Where the logs go when that is a file (the console chat's), told at the chat's start. */
  logFile?: string;
}

export interface Bot {
  runtime: Runtime;
  api: ApiClient;
  store: Store;
  /** The SQLite database under the store, for checks of its tables. */
  db: Db;
  simulator: Simulator | undefined;
  console: ConsoleAdapter | undefined;
  telegram: TelegramAdapter | undefined;
  discord: DiscordAdapter | undefined;
  poller: NewContractPoller;
  delivery: DeliveryWorker;
  metrics: Metrics;
  health: () => Promise<Health>;
  /** Resolves when the console's input has ended and every reply is out (console mode only). */
  finished: Promise<void>;
  stop(): Promise<void>;
}

/**
 * Wires the parts from the settings and starts them: the embedded simulator when no data-service
 * URL is set, the client, the store, the runtime, the chat adapters whose tokens are set (the
 * console when there are none), and the new-collection poller and alert delivery. When a step
 * fails, what was already opened is closed again (so nothing keeps the process alive) and the
 * failure is thrown, as a StartupError saying what and where when it is one the operator can fix.
 */
export async function createBot(config: Config, deps: BotDeps): Promise<Bot> {
  const opened: (() => unknown)[] = [];
  try {
    return await assemble(config, deps, opened);
  } catch (error) {
    for (const close of opened.reverse()) {
      try {
        await close();
      } catch (closeError) {
        deps.logger.warn({ err: closeError }, "could not close a part after a failed start");
      }
    }
    throw error;
  }
}

/** How often the database's write-ahead log is copied back into it (see `wal_autocheckpoint`). */
const CHECKPOINT_EVERY_MS = 1_000;
const DISCORD_API_URL = "https://discord.com/api";
const TELEGRAM_API_ROOT = "https://api.telegram.org";

/** A network error's code (ECONNREFUSED, ENOTFOUND…) from an error or its causes; else undefined. */
function networkCode(error: unknown): string | undefined {
  let current = error;
  for (let depth = 0; depth < 5 && typeof current === "object" && current !== null; depth++) {
    const {
      code,
      cause,
      error: inner,
    } = current as { code?: unknown; cause?: unknown; error?: unknown };
    if (typeof code === "string" && /^E[A-Z_]+$/.test(code)) return code;
    // grammY keeps the underlying failure in `error`, fetch in `cause`.
    current = cause ?? inner;
  }
  return undefined;
}

/**
 * Starts a platform connection; a failure says which platform, at which URL, and why. A platform
 * that has not connected within `timeoutMs` fails too: some clients retry network errors for ever
 * (grammY's auto-retry), and a bot that never connects must not sit there looking alive.
 */
async function connect(
  platform: string,
  url: string,
  timeoutMs: number,
  start: () => Promise<void>,
): Promise<void> {
  let timer: NodeJS.Timeout | undefined;
  const starting = start();
  // A start that fails after the deadline has nobody to tell: never an unhandled rejection.
  starting.catch(() => {});
  try {
    await Promise.race([
      starting,
      new Promise<never>((_, reject) => {
        timer = setTimeout(
          () =>
            reject(
              new StartupError(
                `Cannot reach ${platform} at ${url}: not connected after ${timeoutMs / 1000} s (STARTUP_CONNECT_TIMEOUT_S)`,
              ),
            ),
          timeoutMs,
        );
      }),
    ]);
  } catch (error) {
    if (error instanceof StartupError) throw error;
    const code = networkCode(error);
    throw new StartupError(
      code
        ? `Cannot reach ${platform} at ${url}: ${code}`
        : `Cannot log in to ${platform} at ${url}: ${(error as Error).message}`,
      { cause: error },
    );
  } finally {
    clearTimeout(timer);
  }
}

/** Listens with a part's server; a failure says which address and why. */
async function listen<T>(what: string, address: string, start: () => Promise<T>): Promise<T> {
  try {
    return await start();
  } catch (error) {
    const reason = networkCode(error) ?? (error as Error).message;
    throw new StartupError(`Cannot listen on ${address} for ${what}: ${reason}`, {
      cause: error,
    });
  }
}

/**
 * The console chat's first words: why it is the console, what data it shows, where the logs are,
 * how to leave. A URL is shown without any user name or password in it (the API key never is).
 */
function consoleGreeting(dataUrl: string, simulated: boolean, logFile: string | undefined): string {
  const url = new URL(dataUrl);
  url.username = "";
  url.password = "";
  const shown = url.href.replace(/\/$/, "");
  return [
    "NFT audience bot: the console chat (no DISCORD_TOKEN or TELEGRAM_BOT_TOKEN is set; set one to serve that chat instead).",
    simulated
      ? `Data: the embedded simulator at ${shown}, synthetic (set API_BASE_URL and API_KEY for the real service).`
      : `Data: the data service at ${shown}.`,
    ...(logFile ? [`Logs: ${logFile}`] : []),
    "Type a command, like /help or /top volume 1d. Leave with /quit, Ctrl+D or Ctrl+C.",
  ].join("\n");
}

async function assemble(config: Config, deps: BotDeps, opened: (() => unknown)[]): Promise<Bot> {
  const { logger } = deps;
  let simulator: Simulator | undefined;
  let baseUrl = config.api.baseUrl;
  let apiKey = config.api.apiKey;
  if (baseUrl === undefined) {
    // Loaded only when used: the simulator's world is large, and the real service needs none of it.
    const { startSimulator } = await import("./simulator/index.ts");
    const started = await listen(
      "the embedded simulator (SIMULATOR_PORT)",
      `127.0.0.1:${config.simulator.port}`,
      () =>
        startSimulator({
          port: config.simulator.port,
          apiKey: config.simulator.apiKey,
          seed: config.simulator.seed,
          mintIntervalMs: config.simulator.mintIntervalMs,
        }),
    );
    simulator = started;
    opened.push(() => started.close());
    baseUrl = simulator.url;
    apiKey = simulator.apiKey;
    logger.info({ url: simulator.url }, "no API_BASE_URL: using the embedded simulator");
  }
  const api = createApiClient(config, baseUrl, apiKey, logger.child({ part: "api" }));
  opened.push(() => api.close());
  // SQLite's automatic checkpoint runs inside whichever commit crosses 1,000 WAL pages, with its
  // fsyncs: one command in a few hundred waited milliseconds for it. A timer checkpoints instead.
  const store = openSqliteStore(config.dataDir, {
    maxButtonsPerUser: config.buttonMaxPerUser,
    checkpointEveryMs: CHECKPOINT_EVERY_MS,
  });
  opened.push(() => store.close());
  const { actions, subscriptions, reports, wallets } = store;
  const collections = new KnownCollections({
    store: store.collections,
    logger: logger.child({ part: "collection-index" }),
  });
  try {
    await collections.load();
  } catch (error) {
    // Not fatal: the refresh below fills the index again.
    logger.warn({ err: error }, "could not read the collection index; it is filled anew");
  }
  const runtime = new Runtime({
    commands: allCommands(),
    api,
    actions,
    store: { subscriptions, wallets, reports },
    logger: logger.child({ part: "runtime" }),
    settings: {
      explorerUrl: config.explorerUrl,
      reportsPerHour: config.reportsPerHour,
      ipfsGateway: config.ipfsGateway,
    },
    deadlineMs: config.commandDeadlineMs,
    rateLimit: config.rateLimit,
    // Discord's interaction replies do not share a per-channel budget; Telegram groups do.
    chatRateLimit: { telegram: config.chatRateLimit },
    buttonTtlSeconds: config.buttonTtlSeconds,
    collections,
    collectionRefreshMs: config.collectionIndexRefreshMs,
  });

  let discord: DiscordAdapter | undefined;
  if (config.discord.token !== undefined) {
    // A platform's library (discord.js, grammY) loads only when its token is set: it costs start
    // time and memory for nothing otherwise.
    const { DiscordAdapter } = await import("./adapters/discord/index.ts");
    const adapter = new DiscordAdapter({
      token: config.discord.token,
      runtime,
      logger: logger.child({ part: "discord" }),
      apiUrl: config.discord.apiUrl,
      guildId: config.discord.guildId,
      registerOnStart: config.discord.registerOnStart,
      maxInFlight: config.alerts.deliveryConcurrency,
      globalPerSecond: config.discord.globalPerSecond,
    });
    discord = adapter;
    opened.push(() => adapter.stop());
    await connect(
      "Discord",
      config.discord.apiUrl ?? DISCORD_API_URL,
      config.connectTimeoutMs,
      () => adapter.start(),
    );
  }

  let telegram: TelegramAdapter | undefined;
  let telegramUpdates: SourceUpdateDedup | undefined;
  if (config.telegram.token !== undefined) {
    // Update ids are the bot's own: the bot id before the token's colon keeps two bots apart
    // (and nothing of the secret part is stored).
    const botId = /^(\d+):/.exec(config.telegram.token)?.[1] ?? "bot";
    telegramUpdates = new SourceUpdateDedup(store.updates, { source: `telegram:${botId}` });
    const { TelegramAdapter } = await import("./adapters/telegram/index.ts");
    const adapter = new TelegramAdapter({
      token: config.telegram.token,
      apiRoot: config.telegram.apiRoot,
      runtime,
      logger: logger.child({ part: "telegram" }),
      onChatMigrated: async (from, to) => {
        const moved = await subscriptions.moveChat("telegram", from, to);
        logger.info(
          { part: "telegram", chat: from, newChat: to, subscription: moved?.id },
          "group upgraded to a supergroup; its subscription follows",
        );
      },
      updates: telegramUpdates,
      webhook:
        config.telegram.webhookUrl && config.telegram.webhookSecret
          ? {
              url: config.telegram.webhookUrl,
              secret: config.telegram.webhookSecret,
              port: config.telegram.webhookPort,
            }
          : undefined,
    });
    telegram = adapter;
    opened.push(() => adapter.stop());
    await connect(
      "Telegram",
      config.telegram.apiRoot ?? TELEGRAM_API_ROOT,
      config.connectTimeoutMs,
      () => adapter.start(),
    );
  }

  let consoleAdapter: ConsoleAdapter | undefined;
  if (!discord && !telegram) {
    const adapter = new ConsoleAdapter({
      runtime,
      logger: logger.child({ part: "console" }),
      greeting: consoleGreeting(baseUrl, simulator !== undefined, deps.logFile),
      ...(deps.input ? { input: deps.input } : {}),
      ...(deps.output ? { output: deps.output } : {}),
    });
    consoleAdapter = adapter;
    opened.push(() => adapter.stop());
    adapter.start();
  }

  const senders: Partial<Record<Platform, AlertSender>> = {
    ...(discord ? { discord } : {}),
    ...(telegram ? { telegram } : {}),
    ...(consoleAdapter ? { console: consoleAdapter } : {}),
  };
  const alerts = store.outbox;
  const delivery = new DeliveryWorker({
    alerts,
    subscriptions,
    senders,
    materialize: (platform, chatId, reply) =>
      runtime.materialize(reply, { platform, chat: { id: chatId, kind: "group" } }),
    // Called only once delivery has started, after the poller below exists.
    isLeader: () => poller.isLeader,
    onDelivered: (delivered) =>
      metrics.onDelivered(
        delivered.length,
        delivered.map((alert) => alert.contract.mintedAt),
        Date.now(),
      ),
    onDropped: (dropped) => metrics.onAlertsDropped(dropped.length),
    logger: logger.child({ part: "delivery" }),
    settings: {
      digestThreshold: config.alerts.digestThreshold,
      maxAttempts: config.alerts.maxAttempts,
      batch: 500,
      tickMs: config.alerts.deliveryTickMs,
      explorerUrl: config.explorerUrl,
    },
  });
  const poller = new NewContractPoller({
    api,
    alerts,
    kv: store.kv,
    leases: store.leases,
    logger: logger.child({ part: "poller" }),
    settings: {
      intervalMs: config.alerts.pollIntervalMs,
      overlapMs: config.alerts.overlapMs,
      limit: config.alerts.pollLimit,
      maxPages: config.alerts.maxPages,
      maxClockSkewMs: config.alerts.maxClockSkewMs,
    },
    holder: leaseHolderName(),
    ...(deps.monotonic ? { monotonic: deps.monotonic } : {}),
    onEnqueued: () => delivery.poke(),
    // Called only once polling has started, after the metrics below exist.
    onFutureMints: (count) => metrics.onFutureMints(count),
    onContracts: (contracts) => collections.remember(contracts, "contracts"),
  });
  const metrics = createMetrics({
    cache: () => api.cacheStats,
    outboxDepth: () => alerts.depth(),
    pollerLagSeconds: () => poller.health().lagSeconds ?? undefined,
    pollerGaps: () => poller.stats.gaps,
  });
  runtime.onOutcome = metrics.onCommand;
  api.observeRequests(metrics.onUpstream);
  const health = async (): Promise<Health> => {
    const adapters: Record<string, boolean> = {};
    if (discord) adapters.discord = discord.client.isReady();
    if (telegram) adapters.telegram = telegram.connected;
    if (consoleAdapter) adapters.console = true;
    const database = await store.healthy();
    const pollerHealth = poller.health();
    return {
      ok: database && pollerHealth.healthy && Object.values(adapters).every(Boolean),
      adapters,
      database,
      poller: pollerHealth,
    };
  };
  const opsServer =
    config.ops.port > 0
      ? await listen(
          "health and metrics (METRICS_PORT)",
          `${config.ops.host}:${config.ops.port}`,
          () =>
            startOpsServer({
              port: config.ops.port,
              host: config.ops.host,
              metrics,
              health,
              logger: logger.child({ part: "ops" }),
            }),
        )
      : undefined;

  const reportRetries = new ReportRetryWorker({
    api,
    reports,
    logger: logger.child({ part: "reports" }),
    isLeader: () => poller.isLeader,
    intervalMs: 5_000,
  });
  delivery.start();
  poller.start();
  await reportRetries.start();
  // In the background: the first command need not wait, and a name it misses joins this refresh.
  runtime.refresher.start();
  const pruneTimer = setInterval(() => {
    void actions.prune(Date.now());
    void telegramUpdates?.prune();
  }, 3_600_000);
  pruneTimer.unref();

  let stopped = false;
  return {
    runtime,
    api,
    store,
    db: store.db,
    simulator,
    console: consoleAdapter,
    telegram,
    discord,
    poller,
    delivery,
    metrics,
    health,
    finished: consoleAdapter ? consoleAdapter.done : new Promise<void>(() => {}),
    async stop() {
      if (stopped) return;
      stopped = true;
      clearInterval(pruneTimer);
      runtime.refresher.stop();
      // No new alerts, and the send in flight finishes; then no new commands, and the replies
      // in flight finish; then the connections and the database close.
      await poller.stop();
      await delivery.stop();
      await reportRetries.stop();
      await consoleAdapter?.stop();
      await telegram?.stop();
      await discord?.stop();
      await runtime.drain();
      if (opsServer) {
        // close() alone waits for idle keep-alive connections (scrapers keep them open).
        opsServer.closeAllConnections();
        await new Promise<void>((resolve) => opsServer.close(() => resolve()));
      }
      await api.close();
      await collections.flush();
      await store.close();
      await simulator?.close();
    },
  };
}
