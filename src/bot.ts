import { allCommands } from "../commands/index.ts";
import { ConsoleAdapter } from "./adapters/console/index.ts";
import { DiscordAdapter } from "./adapters/discord/index.ts";
import { TelegramAdapter } from "./adapters/telegram/index.ts";
import { type AlertSender, DeliveryWorker } from "./alerts/delivery.ts";
import { leaseHolderName, NewContractPoller } from "./alerts/poller.ts";
import { type ApiClient, createApiClient } from "./api/client.ts";
import type { Config } from "./config.ts";
import type { Platform } from "./core/command.ts";
import { Runtime } from "./core/runtime.ts";
import type { Logger } from "./log.ts";
import { createMetrics, type Metrics } from "./ops/metrics.ts";
import { type Health, startOpsServer } from "./ops/server.ts";
import { ReportRetryWorker } from "./reports/submit.ts";
import { type Simulator, startSimulator } from "./simulator/index.ts";
import { AlertRepository } from "./store/alerts.ts";
import { type Db, openDatabase } from "./store/db.ts";
import { LinkedWalletRepository, ReportRepository } from "./store/reports.ts";
import {
  KeyValueRepository,
  LeaseRepository,
  SqliteActionStore,
  SubscriptionRepository,
} from "./store/repositories.ts";
import { SqliteUpdateDedup } from "./store/updates.ts";

export interface BotDeps {
  logger: Logger;
  /** Console chat streams (default stdin/stdout). */
  input?: NodeJS.ReadableStream;
  output?: NodeJS.WritableStream;
}

export interface Bot {
  runtime: Runtime;
  api: ApiClient;
  db: Db;
  simulator: Simulator | undefined;
  console: ConsoleAdapter | undefined;
  telegram: TelegramAdapter | undefined;
  discord: DiscordAdapter | undefined;
  poller: NewContractPoller;
  delivery: DeliveryWorker;
  metrics: Metrics;
  health: () => Health;
  /** Resolves when the console's input has ended and every reply is out (console mode only). */
  finished: Promise<void>;
  stop(): Promise<void>;
}

/**
 * Wires the parts from the settings and starts them: the embedded simulator when no data-service
 * URL is set, the client, the store, the runtime, the chat adapters whose tokens are set (the
 * console when there are none), and the new-collection poller and alert delivery.
 */
export async function createBot(config: Config, deps: BotDeps): Promise<Bot> {
  const { logger } = deps;
  let simulator: Simulator | undefined;
  let baseUrl = config.api.baseUrl;
  let apiKey = config.api.apiKey;
  if (baseUrl === undefined) {
    simulator = await startSimulator({
      port: config.simulator.port,
      apiKey: config.simulator.apiKey,
      seed: config.simulator.seed,
      mintIntervalMs: config.simulator.mintIntervalMs,
    });
    baseUrl = simulator.url;
    apiKey = simulator.apiKey;
    logger.info({ url: simulator.url }, "no API_BASE_URL: using the embedded simulator");
  }
  const api = createApiClient(config, baseUrl, apiKey, logger.child({ part: "api" }));
  const db = openDatabase(config.dataDir);
  const actions = new SqliteActionStore(db);
  const subscriptions = new SubscriptionRepository(db);
  const reports = new ReportRepository(db);
  const runtime = new Runtime({
    commands: allCommands(),
    api,
    actions,
    store: { subscriptions, wallets: new LinkedWalletRepository(db), reports },
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
  });

  let discord: DiscordAdapter | undefined;
  if (config.discord.token !== undefined) {
    discord = new DiscordAdapter({
      token: config.discord.token,
      runtime,
      logger: logger.child({ part: "discord" }),
      apiUrl: config.discord.apiUrl,
      guildId: config.discord.guildId,
      registerOnStart: config.discord.registerOnStart,
      maxInFlight: config.alerts.deliveryConcurrency,
    });
    await discord.start();
  }

  let telegram: TelegramAdapter | undefined;
  let telegramUpdates: SqliteUpdateDedup | undefined;
  if (config.telegram.token !== undefined) {
    // Update ids are the bot's own: the bot id before the token's colon keeps two bots apart
    // (and nothing of the secret part is stored).
    const botId = /^(\d+):/.exec(config.telegram.token)?.[1] ?? "bot";
    telegramUpdates = new SqliteUpdateDedup(db, { source: `telegram:${botId}` });
    telegram = new TelegramAdapter({
      token: config.telegram.token,
      apiRoot: config.telegram.apiRoot,
      runtime,
      logger: logger.child({ part: "telegram" }),
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
    await telegram.start();
  }

  let consoleAdapter: ConsoleAdapter | undefined;
  if (!discord && !telegram) {
    consoleAdapter = new ConsoleAdapter({
      runtime,
      logger: logger.child({ part: "console" }),
      ...(deps.input ? { input: deps.input } : {}),
      ...(deps.output ? { output: deps.output } : {}),
    });
    consoleAdapter.start();
  }

  const senders: Partial<Record<Platform, AlertSender>> = {
    ...(discord ? { discord } : {}),
    ...(telegram ? { telegram } : {}),
    ...(consoleAdapter ? { console: consoleAdapter } : {}),
  };
  const alerts = new AlertRepository(db);
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
    logger: logger.child({ part: "delivery" }),
    settings: {
      digestThreshold: config.alerts.digestThreshold,
      batch: 500,
      tickMs: config.alerts.deliveryTickMs,
      explorerUrl: config.explorerUrl,
    },
  });
  const poller = new NewContractPoller({
    api,
    subscriptions,
    alerts,
    kv: new KeyValueRepository(db),
    leases: new LeaseRepository(db),
    logger: logger.child({ part: "poller" }),
    settings: {
      intervalMs: config.alerts.pollIntervalMs,
      overlapMs: config.alerts.overlapMs,
      limit: config.alerts.pollLimit,
      maxPages: config.alerts.maxPages,
    },
    holder: leaseHolderName(),
    onEnqueued: () => delivery.poke(),
  });
  const metrics = createMetrics({
    cache: () => api.cacheStats,
    outboxDepth: () => alerts.depth(),
    pollerLagSeconds: () =>
      poller.isLeader && poller.stats.lastSuccessAt !== undefined
        ? (Date.now() - poller.stats.lastSuccessAt) / 1000
        : undefined,
    pollerGaps: () => poller.stats.gaps,
  });
  runtime.onOutcome = metrics.onCommand;
  api.observeRequests(metrics.onUpstream);
  const health = (): Health => {
    const adapters: Record<string, boolean> = {};
    if (discord) adapters.discord = discord.client.isReady();
    if (telegram) adapters.telegram = telegram.connected;
    if (consoleAdapter) adapters.console = true;
    let database = false;
    try {
      database = db.open && db.prepare("SELECT 1 AS ok").get() !== undefined;
    } catch {
      database = false;
    }
    const lagSeconds =
      poller.isLeader && poller.stats.lastSuccessAt !== undefined
        ? (Date.now() - poller.stats.lastSuccessAt) / 1000
        : undefined;
    // A leader whose polls have failed for three intervals is not keeping alerts fresh.
    const pollerHealthy =
      lagSeconds === undefined || lagSeconds < (config.alerts.pollIntervalMs * 3) / 1000 + 30;
    return {
      ok: database && pollerHealthy && Object.values(adapters).every(Boolean),
      adapters,
      database,
      poller: { leader: poller.isLeader, lagSeconds },
    };
  };
  const opsServer =
    config.ops.port > 0
      ? await startOpsServer({
          port: config.ops.port,
          host: config.ops.host,
          metrics,
          health,
          logger: logger.child({ part: "ops" }),
        })
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
  reportRetries.start();
  const pruneTimer = setInterval(() => {
    void actions.prune(Date.now());
    telegramUpdates?.prune();
  }, 3_600_000);
  pruneTimer.unref();

  let stopped = false;
  return {
    runtime,
    api,
    db,
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
      db.close();
      await simulator?.close();
    },
  };
}
