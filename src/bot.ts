import { configuredAdapters } from "./adapters/index.ts";
import type { ChatAdapter } from "./adapters/types.ts";
import { DeliveryWorker } from "./alerts/delivery.ts";
import { NewContractPoller, pollerLeaseName } from "./alerts/poller.ts";
import { UpstreamBudget } from "./api/budget.ts";
import { ResponseCache } from "./api/cache.ts";
import { type ApiClient, type ApiClientSettings, createApiClient } from "./api/client.ts";
import type { Shared } from "./cache/index.ts";
import type { Chain } from "./chains.ts";
import type { Config } from "./config.ts";
import type { Platform } from "./core/command.ts";
import { SIMULATED_DATA_MARK } from "./core/materialize.ts";
import type { Reply } from "./core/reply.ts";
import type { Runtime } from "./core/runtime.ts";
import { DigestScheduler } from "./digests/scheduler.ts";
import { ApiGateEvaluator } from "./gates/evaluate.ts";
import { GateRecheck } from "./gates/recheck.ts";
import { GateService } from "./gates/service.ts";
import type { GateMembership } from "./gates/types.ts";
import { HttpHost } from "./http/host.ts";
import { type Health, opsRoutes } from "./http/ops.ts";
import { boundedProbe, type Job, ledBy, stopJobs } from "./jobs/job.ts";
import { isDeadLocalHolder, Lease, leaseHolderName } from "./jobs/lease.ts";
import type { Check } from "./jobs/liveness.ts";
import type { Logger } from "./log.ts";
import type { LogDestinationState } from "./log-destination.ts";
import { createMetrics, type Metrics } from "./ops/metrics.ts";
import { Outbound } from "./outbound/outbound.ts";
import type { ChatSender } from "./outbound/types.ts";
import { CachedChartDrawer } from "./render/chart-drawer.ts";
import { chartPainter } from "./render/charts.ts";
import { ReportRetryWorker } from "./reports/submit.ts";
import type { Simulator } from "./simulator/index.ts";
import { connect, listen } from "./startup.ts";
import { chatMover } from "./store/move-chat.ts";
import { openStore } from "./store/open.ts";
import type { Db } from "./store/sqlite/index.ts";
import type { Store } from "./store/types.ts";
import { upkeepJobs } from "./upkeep.ts";
import { walletMovedText } from "./verify/notice.ts";
import { verifyBaseUrl, verifyRoutes } from "./verify/routes.ts";
import { createVerifyService } from "./verify/service.ts";
import type { VerifyService } from "./verify/types.ts";
import { WatchChecker } from "./watches/checker.ts";
import { buildRuntime, openStores } from "./wiring.ts";
import { settledBy, within } from "./within.ts";

export interface BotDeps {
  logger: Logger;
  /** Console chat streams (default stdin/stdout). */
  input?: NodeJS.ReadableStream;
  output?: NodeJS.WritableStream;
  /** Monotonic clock in ms for elapsed times (default performance.now), injectable for tests. */
  monotonic?: () => number;
  /** Where the logs go when that is a file (the console chat's), told at the chat's start. */
  logFile?: string;
  /**
   * The logs' destination as it stands (main.ts's): one that cannot be written (a full disk) makes
   * /healthz 503 saying why, and /metrics counts its failed writes and dropped lines.
   */
  logState?: () => LogDestinationState;
  /**
   * Wall clock in epoch ms for scheduled digests and the commands' "now" (default Date.now),
   * injectable so tests can cross a slot's time.
   */
  now?: () => number;
  /**
   * Told at once, in one line, of a start-up failure the bot waits out (a platform that times
   * out): main.ts prints it, so the cause shows long before the start gives up.
   */
  notice?: (line: string) => void;
}

export interface Bot {
  runtime: Runtime;
  /** The first (default) chain's client. */
  api: ApiClient;
  /** The chains served, the default first, with their data-service URLs resolved. */
  chains: readonly Chain[];
  /** Each chain's client, by chain id (one cache and one upstream budget between them). */
  apis: ReadonlyMap<string, ApiClient>;
  /** The store (SQLite, or PostgreSQL with DATABASE_URL). */
  store: Store;
  /** The SQLite database, when the store is SQLite's: for operators' checks and tests. */
  db: Db | undefined;
  simulator: Simulator | undefined;
  /** The chat platforms configured (the console when none is). */
  adapters: readonly ChatAdapter[];
  http: HttpHost;
  /**
   * Proved wallets (issue 27): /verify's links, and the page's challenges and proofs (the routes
   * on `http` call it). The commands get the same service as `ctx.verify`.
   */
  verify: VerifyService;
  /** The default chain's poller (its lease also decides who delivers and retries reports). */
  poller: NewContractPoller;
  /** One poller per chain, by chain id: each with its own client, cursor, lease and gap count. */
  pollers: ReadonlyMap<string, NewContractPoller>;
  delivery: DeliveryWorker;
  /** Posts the channels' scheduled digests (on the default chain's lease holder). */
  digests: DigestScheduler;
  /** Checks the channels' watches (under its own lease, `watches`) and posts what moved. */
  watches: WatchChecker;
  /**
   * Gates (/gate): roles and group entry for proved wallets that pass, decided at a proof, an
   * unlink and a join request; `gateRecheck` re-checks members under its own lease (`gates`).
   */
  gates: GateService;
  gateRecheck: GateRecheck;
  metrics: Metrics;
  health: () => Promise<Health>;
  /** Resolves when the console's input has ended and every reply is out (console mode only). */
  finished: Promise<void>;
  /**
   * Listens on HTTP_PORT, connects every adapter, then starts polling and delivery. When a step
   * fails, everything is closed again (nothing keeps the process alive) and the failure is
   * thrown, as a StartupError saying what and where when it is one the operator can fix.
   */
  start(): Promise<void>;
  stop(): Promise<void>;
  /**
   * Deletes what has expired (button actions, old update ids); start() runs it hourly. A failure
   * is logged and waits for the next hour: it must never take the bot down.
   */
  prune(): Promise<void>;
}

/** How long start() waits for Redis to answer before serving without it. */
const REDIS_READY_WAIT_MS = 3_000;

/**
 * How long stop() may take in all (main.ts exits by force after 10 s), and the part of it the
 * jobs' rounds in flight get.
 */
const STOP_WITHIN_MS = 8_000;
const JOBS_STOP_WITHIN_MS = 4_000;
/** /healthz answers within 1 s: the store's SELECT 1 gets half of it. */
const STORE_PROBE_MS = 500;
/** How often queued spam reports are looked at. */
const REPORT_RETRY_MS = 5_000;
/**
 * The collection index's first refresh waits this long after start: its 13 requests, their
 * validation and the index's writes took some 40 ms from the first answer (issue 28). A name the
 * index misses before then refreshes it at once.
 */
const FIRST_COLLECTION_REFRESH_MS = 5_000;
/**
 * How long the leader's delivery may go without completing a round before health fails: a round
 * of 500 alerts at the platforms' pace takes well under this.
 */
const DELIVERY_BOUND_MS = 120_000;
/** The same for the slower jobs (digests and watches read the data service per item). */
const SLOW_JOB_BOUND_MS = 300_000;
/**
 * How often the gate re-check job looks for due members and expired join requests: a join
 * request is declined within this of its 10 minutes.
 */
const GATE_TICK_MS = 30_000;

/**
 * Closes what was opened, last first; a failure to close is logged, not thrown. With a deadline
 * (monotonic ms), a part not closed by then is logged and left behind.
 */
async function closeAll(
  closers: (() => unknown)[],
  logger: Logger,
  deadline = Number.POSITIVE_INFINITY,
): Promise<void> {
  for (const close of closers.splice(0).reverse()) {
    const closing = (async () => close())().catch((error: unknown) => {
      logger.warn({ err: error }, "could not close a part");
    });
    if (deadline === Number.POSITIVE_INFINITY) await closing;
    else if (!(await settledBy(closing, deadline)))
      logger.warn("a part did not close in time at shutdown; going on");
  }
}

/**
 * A platform's gate membership whose private notices (a gate passed, failed, a join request's
 * way in) say that the holdings they were decided on are the simulator's made-up data.
 */
function markedNotices(membership: GateMembership): GateMembership {
  const marked: GateMembership = Object.create(membership);
  marked.tell = (userId, text, userChatId, signal) =>
    membership.tell(userId, `${text}\n\n(${SIMULATED_DATA_MARK})`, userChatId, signal);
  return marked;
}

/**
 * Builds the bot from the settings and starts nothing: `bot.start()` does (main.ts, tests). The
 * one thing running after it is the embedded simulator when no data-service URL is set: it is the
 * data service, and the client is built with its address. When building fails, what was already
 * opened is closed again and the failure is thrown.
 */
export async function createBot(config: Config, deps: BotDeps): Promise<Bot> {
  const opened: (() => unknown)[] = [];
  try {
    return await build(config, deps, opened);
  } catch (error) {
    await closeAll(opened, deps.logger);
    throw error;
  }
}

/**
 * Each chain's data service: the configured ones, or the embedded simulator started for them all
 * (one server, a path prefix per chain).
 */
async function dataServices(
  config: Config,
  logger: Logger,
  opened: (() => unknown)[],
): Promise<{ chains: Chain[]; simulator: Simulator | undefined }> {
  if (!config.simulated) return { chains: config.chains, simulator: undefined };
  // Loaded only when used: the simulator's world is large, and the real service needs none of it.
  const { startSimulator } = await import("./simulator/index.ts");
  const simulator = await listen(
    "the embedded simulator (SIMULATOR_PORT)",
    `127.0.0.1:${config.simulator.port}`,
    () =>
      startSimulator({
        port: config.simulator.port,
        apiKey: config.simulator.apiKey,
        seed: config.simulator.seed,
        mintIntervalMs: config.simulator.mintIntervalMs,
        badActorEvery: config.simulator.badActorEvery,
        chains: config.chains.map((chain) => chain.id),
      }),
  );
  opened.push(() => simulator.close());
  logger.info(
    { url: simulator.url, chains: simulator.chains },
    "no API_BASE_URL: using the embedded simulator",
  );
  const chains = config.chains.map((chain) => ({
    ...chain,
    baseUrl: simulator.urlOf(chain.id),
    apiKey: simulator.apiKey,
  }));
  return { chains, simulator };
}

/** The data-service client's settings, taken from the bot's (src/api knows nothing of Config). */
export function apiClientSettings(
  config: Pick<Config, "api" | "cache">,
  baseUrl: string,
  apiKey: string | undefined,
): ApiClientSettings {
  const { api } = config;
  return {
    baseUrl,
    apiKey,
    timeoutMs: api.timeoutMs,
    retries: api.retries,
    retryMinDelayMs: api.retryMinDelayMs,
    retryMaxDelayMs: api.retryMaxDelayMs,
    retryMaxTotalMs: api.retryMaxTotalMs,
    maxBodyBytes: api.maxBodyBytes,
    budget: api.budget,
    reportNotSpamPath: api.reportNotSpamPath,
    cache: config.cache,
  };
}

/** With REDIS_URL: the cache, limits and pacing shared with the other instances. */
async function sharedParts(
  config: Config,
  logger: Logger,
  opened: (() => unknown)[],
): Promise<Shared | undefined> {
  const { redis } = config;
  if (redis.url === undefined) return undefined;
  // Loaded only with REDIS_URL: ioredis is some 15 ms of a start that does not use it
  // (test/lazy-load.test.ts).
  const { openShared, redactRedisUrl } = await import("./cache/index.ts");
  const shared = openShared(
    {
      url: redis.url,
      keyPrefix: redis.keyPrefix,
      commandTimeoutMs: redis.commandTimeoutMs,
      coolingMs: redis.breakerCoolingMs,
      local: { ttlSeconds: redis.localTtlSeconds, maxBytes: redis.localMaxBytes },
      cache: config.cache,
      budget: config.api.budget,
      discordPerSecond: config.discord.globalPerSecond,
    },
    logger.child({ part: "redis" }),
  );
  opened.push(() => shared.link.close());
  logger.info(
    { redis: redactRedisUrl(redis.url), prefix: redis.keyPrefix },
    "REDIS_URL set: answer cache and rate limits are shared with the bot's other instances",
  );
  return shared;
}

async function build(config: Config, deps: BotDeps, opened: (() => unknown)[]): Promise<Bot> {
  const { logger } = deps;
  const { chains, simulator } = await dataServices(config, logger, opened);
  const shared = await sharedParts(config, logger, opened);
  // One client per chain, all on one answer cache (its keys hold the base URL) and one upstream
  // budget: more chains never mean more memory or more requests a second.
  const cache = shared?.cache ?? new ResponseCache(config.cache);
  const budget = shared?.budget ?? new UpstreamBudget(config.api.budget);
  const apis = new Map<string, ApiClient>();
  for (const chain of chains) {
    const client = createApiClient(
      apiClientSettings(config, chain.baseUrl ?? "", chain.apiKey),
      logger.child({ part: "api", ...(chains.length > 1 ? { chain: chain.id } : {}) }),
      { cache, budget },
    );
    opened.push(() => client.close());
    apis.set(chain.id, client);
  }
  const api = apis.get(chains[0]?.id ?? "") as ApiClient;
  const { store, db } = await openStore(config);
  opened.push(() => store.close());
  const diskFull = store.diskFull?.();
  if (diskFull)
    logger.warn(
      `starting on a full disk (${diskFull}): commands answer, alerts wait${store.waiting?.() ? "; the background jobs start once the migrations have run" : ""}`,
    );
  const stores = openStores(store, logger, chains);
  for (const [chain, index] of stores.collectionIndexes) {
    try {
      await index.load();
    } catch (error) {
      // Not fatal: the refresh at start fills the index again.
      logger.warn({ err: error, chain }, "could not read the collection index; it is filled anew");
    }
  }
  const charts = new CachedChartDrawer();
  // A hung painter costs its chart, not the answer: it gives up well within the command's time.
  chartPainter.limitTime(config.commandDeadlineMs / 2);
  opened.push(() => charts.close());
  // The adapters and the HTTP host come later; the service reads them when a link is made or a
  // wallet proved, never at build time.
  let notifiers: readonly ChatAdapter[] = [];
  // The adapters register their GateMembership once they exist (below).
  const gates = new GateService({
    gates: store.gates,
    wallets: store.wallets,
    evaluator: new ApiGateEvaluator({ apis, logger: logger.child({ part: "gates" }) }),
    freshEvaluator: new ApiGateEvaluator({
      apis,
      fresh: true,
      logger: logger.child({ part: "gates" }),
    }),
    logger: logger.child({ part: "gates" }),
    // Each call of a gate (a read, a grant, a message) is bounded like a command (issue 34).
    settings: { graceHours: config.gates.graceHours, callTimeoutMs: config.commandDeadlineMs },
    ...(deps.now ? { now: deps.now } : {}),
  });
  let listeningOn = (): number | undefined => config.http.port;
  const pageBase = () => verifyBaseUrl(config.http.publicUrl, listeningOn() ?? 0);
  const verify = createVerifyService({
    store,
    chains,
    baseUrl: pageBase,
    limiters: shared?.limiters,
    notify: async (notice) => {
      // The person's gates are decided at once; it never throws, and the chat's notice need not
      // wait for it.
      void gates.onProved(notice.origin.platform, notice.origin.userId, {
        chatId: notice.origin.chatId,
      });
      const adapter = notifiers.find((each) => each.platform === notice.origin.platform);
      await adapter?.notifyVerified?.(notice);
    },
    // Another account of the platform proved a wallet (issue 34): its former holder is told
    // privately through the gates' bounded calls, then its gates are decided again.
    moved: (notice) =>
      gates.onWalletMoved(notice.platform, notice.userId, walletMovedText(notice)),
    ...(deps.now ? { now: deps.now } : {}),
    logger: logger.child({ part: "verify" }),
  });
  const runtime = buildRuntime(
    config,
    { api, chains, apis, stores, charts, logger: logger.child({ part: "runtime" }) },
    {
      ...(shared ? { limiters: shared.limiters } : {}),
      ...(deps.now ? { now: () => new Date((deps.now as () => number)()) } : {}),
      verify,
      gates,
      // The embedded simulator's holders and sales are made up: every reply and alert says so.
      ...(simulator ? { dataMark: SIMULATED_DATA_MARK } : {}),
    },
  );
  /** Where the /verify page is reached, once the HTTP host listens. */
  let pageUrl = (): string | undefined => undefined;
  const { adapters, prune } = await configuredAdapters(config, {
    runtime,
    logger,
    store,
    sharedPace: shared?.pace,
    console: {
      // The simulator's own address (each chain has a path under it), else the first chain's.
      dataUrl: simulator?.url ?? chains[0]?.baseUrl ?? "",
      simulated: simulator !== undefined,
      chains: chains.map((chain) => chain.id),
      logFile: deps.logFile,
      pageUrl: () => pageUrl(),
      input: deps.input,
      output: deps.output,
    },
  });

  notifiers = adapters;
  // Each platform that enforces gates gives its membership to the service, and Telegram its
  // groups' join requests.
  for (const adapter of adapters) {
    if (!adapter.gateMembership) continue;
    gates.register(simulator ? markedNotices(adapter.gateMembership) : adapter.gateMembership);
    // The invite link the request came through picks its gate (issue 34).
    adapter.onJoinRequest = (chatId, userId, userChatId, inviteLink) =>
      gates
        .onJoinRequest(adapter.platform, chatId, userId, userChatId, inviteLink)
        .catch((error: unknown) => {
          // The request stays with the group's admins; the person may ask again.
          logger.warn({ err: error, part: "gates" }, "could not decide a join request");
        });
  }
  const moveChat = chatMover(store);
  /** A reply posted unasked (an alert, a digest, a watch's post), as it goes to that chat. */
  const materialize = (platform: Platform, chatId: string, reply: Reply) =>
    runtime.materialize(reply, { platform, chat: { id: chatId, kind: "group" } });
  const senders: Partial<Record<Platform, ChatSender>> = {};
  for (const adapter of adapters) senders[adapter.platform] = adapter;
  // The one place that sends to a chat outside an answer: alerts, digests and watches go through it.
  const outbound = new Outbound({
    senders,
    materialize,
    moveChat,
    chatPauses: store.chatPauses,
    waits: store.sendWaits,
  });
  const alerts = store.outbox;
  // One name for this process in every lease and on the alerts and digests it claims.
  const holder = leaseHolderName();
  const several = chains.length > 1;
  // One lease per chain (the leaders may differ). The default chain's also decides who delivers,
  // posts digests and retries reports: built first, so every job below can name it.
  const leases = new Map<string, Lease>();
  for (const chain of chains)
    leases.set(
      chain.id,
      new Lease({
        store: store.leases,
        name: pollerLeaseName(chain.id),
        holder,
        ttlMs: config.lease.ttlMs,
        isDead: isDeadLocalHolder,
        ...(deps.monotonic ? { monotonic: deps.monotonic } : {}),
      }),
    );
  const leader = leases.get(chains[0]?.id ?? "") as Lease;
  const watches = new WatchChecker({
    watches: store.watches,
    apis,
    chains,
    outbound,
    leases: store.leases,
    holder,
    logger: logger.child({ part: "watches" }),
    settings: {
      tickMs: config.watches.tickMs,
      checksPerMinute: config.watches.checksPerMinute,
    },
  });
  const gateRecheck = new GateRecheck({
    service: gates,
    leases: store.leases,
    holder,
    logger: logger.child({ part: "gates" }),
    settings: { checksPerMinute: config.gates.checksPerMinute, tickMs: GATE_TICK_MS },
    ...(deps.now ? { now: deps.now } : {}),
    ...(deps.monotonic ? { monotonic: deps.monotonic } : {}),
  });
  // Filled below, once metrics exist: metrics read the pollers at scrape time only.
  const pollers = new Map<string, NewContractPoller>();
  const pollerOf = (chain: string) => pollers.get(chain) as NewContractPoller;
  const metrics = createMetrics({
    cache: () => api.cacheStats,
    outboxDepth: () => alerts.depth(),
    pollerLagSeconds: () => pollerOf(chains[0]?.id ?? "").health().lagSeconds ?? undefined,
    pollerGaps: () => pollerOf(chains[0]?.id ?? "").stats.gaps,
    ...(several
      ? {
          pollers: () =>
            [...pollers.values()].map((p) => ({
              chain: p.chain,
              lagSeconds: p.health().lagSeconds ?? undefined,
              gaps: p.stats.gaps,
            })),
        }
      : {}),
    charts: () => ({ hits: charts.hits, misses: charts.misses }),
    watches: () => watches.stats,
    gates: { counters: () => gates.counters, counts: () => store.gates.counts() },
    ...(deps.logState ? { log: deps.logState } : {}),
  });
  runtime.onOutcome = metrics.onCommand;
  for (const client of apis.values()) client.observeRequests(metrics.onUpstream);
  const delivery = new DeliveryWorker({
    alerts,
    reports: stores.reports,
    outbound,
    // One worker delivers every chain's alerts: the holder of the default chain's lease.
    isLeader: () => leader.isLeader,
    holder,
    isDeadHolder: isDeadLocalHolder,
    onDelivered: (delivered) =>
      metrics.onDelivered(
        delivered.length,
        delivered.map((alert) => alert.contract.mintedAt),
        Date.now(),
      ),
    onDropped: (dropped) => metrics.onAlertsDropped(dropped.length),
    onSuppressed: (suppressed) => metrics.onAlertsSuppressed(suppressed.length),
    logger: logger.child({ part: "delivery" }),
    settings: {
      digestThreshold: config.alerts.digestThreshold,
      maxAttempts: config.alerts.maxAttempts,
      suppressReports: config.alerts.suppressReports,
      batch: 500,
      tickMs: config.alerts.deliveryTickMs,
      explorerUrl: config.explorerUrl,
      chains,
    },
  });
  // One poller per chain, on that chain's client: a chain whose data service is down stops only
  // its own alerts. Each has its own cursor, gap note and lease.
  for (const chain of chains) {
    pollers.set(
      chain.id,
      new NewContractPoller({
        chain: chain.id,
        api: apis.get(chain.id) as ApiClient,
        alerts,
        kv: store.kv,
        leases: store.leases,
        lease: leases.get(chain.id) as Lease,
        logger: logger.child({ part: "poller", ...(several ? { chain: chain.id } : {}) }),
        settings: {
          intervalMs: config.alerts.pollIntervalMs,
          overlapMs: config.alerts.overlapMs,
          limit: config.alerts.pollLimit,
          maxPages: config.alerts.maxPages,
          maxClockSkewMs: config.alerts.maxClockSkewMs,
          leaseTtlMs: config.lease.ttlMs,
          leaseRenewMs: config.lease.renewMs,
        },
        holder,
        ...(deps.monotonic ? { monotonic: deps.monotonic } : {}),
        onEnqueued: () => delivery.poke(),
        onFutureMints: (count) => metrics.onFutureMints(count, several ? chain.id : undefined),
        onHidden: (count) => metrics.onAlertsHidden(count),
        // New contracts' names join their own chain's collection index.
        onContracts: (contracts) =>
          stores.collectionIndexes.get(chain.id)?.remember(contracts, "contracts"),
      }),
    );
  }
  const poller = pollerOf(chains[0]?.id ?? "");
  const digests = new DigestScheduler({
    digests: store.digests,
    apis,
    chains,
    collectionIndexes: stores.collectionIndexes,
    outbound,
    // Only the leader looks; the run's claim in the store is what makes a slot post once.
    isLeader: () => leader.isLeader,
    holder,
    onOutcome: (outcome) => metrics.onDigest(outcome),
    logger: logger.child({ part: "digests" }),
    settings: {
      tickMs: config.digests.tickMs,
      lateAfterMs: config.digests.lateAfterMs,
      maxAttempts: config.alerts.maxAttempts,
    },
    ...(deps.now ? { now: deps.now } : {}),
  });
  const reportRetries = new ReportRetryWorker({
    api,
    apis,
    reports: stores.reports,
    logger: logger.child({ part: "reports" }),
    isLeader: () => leader.isLeader,
    intervalMs: REPORT_RETRY_MS,
    // Every attempt's timeout and the waits between them, and a second of slack.
    callMaxMs: config.api.retryMaxTotalMs + config.api.timeoutMs + 1_000,
  });

  // The collection index refreshes, the store's checkpoint and the hourly prune of expired rows.
  const upkeep = upkeepJobs({
    refreshers: runtime.refreshers,
    lazyRefresh: config.simulated,
    firstRefreshAfterMs: FIRST_COLLECTION_REFRESH_MS,
    store,
    prune: [
      { what: "button actions", run: () => stores.actions.prune(Date.now()) },
      { what: "verify links", run: () => verify.prune() },
      ...prune,
    ],
    logger,
    monotonic: deps.monotonic,
  });

  /**
   * The background jobs, started in this order and stopped in the reverse: what feeds another
   * comes after it (the pollers poke delivery), so it stops first and nothing new is produced once
   * shutdown begins. Each says, without I/O, whether its rounds complete within their bound.
   */
  const jobs: Job[] = [
    {
      name: "delivery",
      start: () => delivery.start(),
      stop: () => delivery.stop(),
      checks: () =>
        delivery.liveness.flatMap((lane) =>
          ledBy(leader, lane, Math.max(3 * config.alerts.deliveryTickMs, DELIVERY_BOUND_MS)),
        ),
    },
    {
      name: "report retries",
      start: () => reportRetries.start(),
      stop: () => reportRetries.stop(),
      checks: () =>
        ledBy(leader, reportRetries.liveness, Math.max(3 * REPORT_RETRY_MS, SLOW_JOB_BOUND_MS)),
    },
    {
      name: "digests",
      start: () => digests.start(),
      stop: () => digests.stop(),
      checks: () =>
        ledBy(leader, digests.liveness, Math.max(3 * config.digests.tickMs, SLOW_JOB_BOUND_MS)),
    },
    {
      name: "watches",
      start: () => watches.start(),
      stop: () => watches.stop(),
      checks: () => watches.checks(Math.max(3 * config.watches.tickMs, SLOW_JOB_BOUND_MS)),
    },
    {
      name: "gates",
      start: () => gateRecheck.start(),
      stop: () => gateRecheck.stop(),
      checks: () => gateRecheck.checks(Math.max(3 * GATE_TICK_MS, SLOW_JOB_BOUND_MS)),
    },
    ...[...pollers.values()].map(
      (p): Job => ({
        name: `poller ${p.chain}`,
        start: () => p.start(),
        stop: () => p.stop(),
        checks: () => p.checks(),
      }),
    ),
    ...upkeep.jobs,
  ];

  const databaseAnswers = boundedProbe(() => store.healthy(), STORE_PROBE_MS);
  const health = async (): Promise<Health> => {
    const checks: Check[] = [];
    const connected: Record<string, boolean> = {};
    for (const adapter of adapters) {
      connected[adapter.platform] = adapter.healthy();
      checks.push({
        name: `adapter ${adapter.platform}`,
        ok: connected[adapter.platform] as boolean,
        ...(connected[adapter.platform] ? {} : { reason: `${adapter.label} is not connected` }),
      });
    }
    const database = await databaseAnswers();
    checks.push({
      name: "database",
      ok: database,
      ...(database
        ? {}
        : { reason: `database: the store did not answer within ${STORE_PROBE_MS} ms` }),
    });
    const disk = store.diskFull?.();
    checks.push({ name: "disk", ok: disk === undefined, ...(disk ? { reason: disk } : {}) });
    const waiting = store.waiting?.();
    if (waiting !== undefined)
      checks.push({
        name: "database migrations",
        ok: false,
        reason: `${waiting}: alerts, digests, watches and gates wait`,
      });
    const log = deps.logState?.().failing;
    if (deps.logState)
      checks.push({ name: "log", ok: log === undefined, ...(log ? { reason: log } : {}) });
    for (const job of jobs) checks.push(...job.checks());
    // Figures, not a check: a slow count leaves them out rather than delay the answer.
    const gateStats = database
      ? await within(
          gates.stats().catch(() => undefined),
          STORE_PROBE_MS,
        )
      : undefined;
    const each: Record<string, ReturnType<NewContractPoller["health"]>> = {};
    for (const [id, p] of pollers) each[id] = p.health();
    return {
      ok: checks.every((check) => check.ok),
      adapters: connected,
      database,
      ...(disk ? { disk } : {}),
      ...(log ? { log } : {}),
      poller: each[poller.chain] ?? poller.health(),
      ...(several ? { pollers: each } : {}),
      ...shared?.link.health(),
      ...(gateStats?.done && gateStats.value ? { gates: gateStats.value } : {}),
      checks,
    };
  };
  const http = new HttpHost(logger.child({ part: "http" }), {
    limits: config.http.limits,
    registry: metrics.registry,
  });
  // Port 0 is the system's choice: the links name the port actually listened on.
  listeningOn = () => http.port;
  pageUrl = () => (http.port === undefined ? undefined : `${pageBase()}/verify/`);
  for (const route of opsRoutes({ metrics, health })) http.mount(route);
  for (const adapter of adapters) for (const route of adapter.routes) http.mount(route);
  for (const route of verifyRoutes({
    service: verify,
    logger: logger.child({ part: "verify-page" }),
    publicUrl: config.http.publicUrl,
  }))
    http.mount(route);

  /** What start() set going, to undo when a later step fails. */
  const running: (() => unknown)[] = [];
  const startedJobs: Job[] = [];
  let started = false;
  let stopped = false;
  /** Monotonic ms by which stop() must be done, and the jobs stopped (set when stopping begins). */
  let stopBy = Number.POSITIVE_INFINITY;
  let jobsStopBy = Number.POSITIVE_INFINITY;
  const stopping = () => {
    stopBy = performance.now() + STOP_WITHIN_MS;
    jobsStopBy = performance.now() + JOBS_STOP_WITHIN_MS;
  };
  const bot: Bot = {
    runtime,
    api,
    chains,
    apis,
    store,
    db,
    simulator,
    adapters,
    http,
    verify,
    poller,
    pollers,
    delivery,
    digests,
    watches,
    gates,
    gateRecheck,
    metrics,
    health,
    prune: () => upkeep.prune.run(),
    finished: adapters.find((adapter) => adapter.done)?.done ?? new Promise<void>(() => {}),
    async start() {
      if (started) return;
      started = true;
      try {
        await startParts();
      } catch (error) {
        stopped = true;
        stopping();
        await closeAll(running, logger, stopBy);
        await http.close();
        await closeAll(opened, logger, stopBy);
        throw error;
      }
    },
    async stop() {
      if (stopped) return;
      stopped = true;
      // Bounded, whatever hangs (a frozen database): a step not done by the deadline is logged
      // and left behind, and the process can still exit cleanly.
      stopping();
      // No new alerts, and the send in flight finishes; then no new commands, and the replies
      // in flight finish; then the connections and the database close.
      await closeAll(running, logger, stopBy);
      const steps: [string, () => Promise<unknown>][] = [
        ["the commands in flight", () => runtime.drain()],
        ["the HTTP host", () => http.close()],
        [
          "the collection index",
          async () => {
            for (const index of stores.collectionIndexes.values()) await index.flush();
          },
        ],
      ];
      for (const [what, step] of steps)
        if (!(await settledBy(step(), stopBy)))
          logger.warn({ what }, "did not finish in time at shutdown; going on");
      // The database, the client, then the embedded simulator.
      await closeAll(opened, logger, stopBy);
    },
  };

  async function startParts(): Promise<void> {
    // A command before the connection is up would find Redis "unreachable"; not waiting long,
    // though: without Redis the bot still serves, on its own cache and limits.
    if (shared && !(await shared.link.ready(REDIS_READY_WAIT_MS)))
      logger.warn("Redis is not answering yet: serving on this instance's own cache and limits");
    const { port, host, variable } = config.http;
    if (port !== undefined) {
      const webhooks = adapters.some((adapter) => adapter.routes.length > 0);
      const serves = webhooks ? "health, metrics and webhooks" : "health and metrics";
      await listen(`${serves} (${variable})`, `${host}:${port || "a free port"}`, () =>
        http.listen(port, host),
      );
      logger.info(
        { url: pageUrl() },
        "the /verify page is served here: /verify gives each person a link",
      );
    }
    for (const adapter of adapters) {
      running.push(() => adapter.stop());
      const { connectsTo, label, tokenSetting } = adapter;
      if (connectsTo === undefined) await adapter.start();
      else
        await connect(
          {
            service: label,
            url: connectsTo,
            credential: tokenSetting,
            credentialName: "bot token",
          },
          config.connectTimeoutMs,
          () => adapter.start(),
          deps.notice,
        );
    }
    // The jobs stop before the adapters (closeAll runs last first), and among themselves in the
    // reverse of their order, within the first part of the shutdown's time.
    running.push(() => stopJobs(startedJobs, jobsStopBy, logger));
    // A database whose migrations wait for room (a start on a full disk): the jobs, which write
    // and may need the new tables, start once the store has run them; the commands answer now.
    if (store.waiting?.() !== undefined && store.ready) {
      void store
        .ready()
        .then(async () => {
          if (stopped) return;
          logger.info("the database's migrations have run: the background jobs start");
          await startJobs();
        })
        .catch((error: unknown) => {
          logger.error({ err: error }, "could not start the background jobs");
        });
      return;
    }
    await startJobs();
  }

  /** The background jobs, the collection index's refreshes and the store's upkeep among them. */
  async function startJobs(): Promise<void> {
    for (const job of jobs) {
      if (stopped) return;
      await job.start();
      // Started late (the migrations waited) while the bot stopped: stopped here.
      if (stopped) {
        await job.stop();
        return;
      }
      startedJobs.push(job);
    }
  }

  return bot;
}
