import { allCommands } from "../commands/index.ts";
import { configuredAdapters } from "./adapters/index.ts";
import type { ChatAdapter } from "./adapters/types.ts";
import type { DeliveryWorker } from "./alerts/delivery.ts";
import { alertsFeature } from "./alerts/feature.ts";
import { type NewContractPoller, pollerLeaseName } from "./alerts/poller.ts";
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
import { digestsFeature } from "./digests/feature.ts";
import type { DigestScheduler } from "./digests/scheduler.ts";
import { FEATURES } from "./features.ts";
import { gatesFeature } from "./gates/feature.ts";
import type { GateRecheck } from "./gates/recheck.ts";
import type { GateService } from "./gates/service.ts";
import { HttpHost } from "./http/host.ts";
import { type Health, opsRoutes } from "./http/ops.ts";
import { boundedProbe, type Job, stopJobs } from "./jobs/job.ts";
import { isDeadLocalHolder, Lease, leaseHolderName } from "./jobs/lease.ts";
import type { Check } from "./jobs/liveness.ts";
import {
  checkFeatures,
  type Feature,
  type FeatureParts,
  featureCommands,
  featureMigrations,
  type Kernel,
  type KernelCore,
  Later,
  runFeatureMigrations,
  setUpFeatures,
} from "./kernel/feature.ts";
import type { Logger } from "./log.ts";
import type { LogDestinationState } from "./log-destination.ts";
import { createMetrics, type Metrics } from "./ops/metrics.ts";
import { Outbound } from "./outbound/outbound.ts";
import type { ChatSender } from "./outbound/types.ts";
import { CachedChartDrawer } from "./render/chart-drawer.ts";
import { chartPainter } from "./render/charts.ts";
import type { Simulator } from "./simulator/index.ts";
import { connect, listen } from "./startup.ts";
import { chatMover } from "./store/move-chat.ts";
import { openStore } from "./store/open.ts";
import type { Db } from "./store/sqlite/index.ts";
import type { Store } from "./store/types.ts";
import { upkeepJobs } from "./upkeep.ts";
import { verifyFeature } from "./verify/feature.ts";
import { verifyBaseUrl } from "./verify/routes.ts";
import type { VerifyService } from "./verify/types.ts";
import type { WatchChecker } from "./watches/checker.ts";
import { watchesFeature } from "./watches/feature.ts";
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
  /** Features beyond the bot's own (FEATURES), after them: a test's. */
  features?: readonly Feature[];
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
/**
 * The collection index's first refresh waits this long after start: its 13 requests, their
 * validation and the index's writes took some 40 ms from the first answer (issue 28). A name the
 * index misses before then refreshes it at once.
 */
const FIRST_COLLECTION_REFRESH_MS = 5_000;

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
  const features = [...FEATURES, ...(deps.features ?? [])];
  checkFeatures(features);
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
  // The features' own tables, once the store's are there (on a full disk, when they have run).
  const migrations = featureMigrations(features);
  if (store.waiting?.() === undefined) await runFeatureMigrations(store, migrations, logger);
  const charts = new CachedChartDrawer();
  // A hung painter costs its chart, not the answer: it gives up well within the command's time.
  chartPainter.limitTime(config.commandDeadlineMs / 2);
  opened.push(() => charts.close());
  const metrics = createMetrics({
    cache: () => api.cacheStats,
    charts: () => ({ hits: charts.hits, misses: charts.misses }),
    ...(deps.logState ? { log: deps.logState } : {}),
  });
  for (const client of apis.values()) client.observeRequests(metrics.onUpstream);
  const http = new HttpHost(logger.child({ part: "http" }), {
    limits: config.http.limits,
    registry: metrics.registry,
  });
  const adapterList = new Later<readonly ChatAdapter[]>("the chat adapters");
  const core: KernelCore = {
    config,
    logger,
    now: deps.now ?? Date.now,
    monotonic: deps.monotonic,
    chains,
    apis,
    api,
    store,
    stores,
    shared,
    // The embedded simulator's holders and sales are made up: every reply and alert says so.
    dataMark: simulator ? SIMULATED_DATA_MARK : undefined,
    metrics,
    http,
    adapters: adapterList,
    services: {},
  };
  const services = setUpFeatures(features, core);
  const runtime = buildRuntime(
    config,
    {
      api,
      chains,
      apis,
      stores,
      charts,
      logger: logger.child({ part: "runtime" }),
      commands: allCommands(featureCommands(features)),
    },
    {
      ...(shared ? { limiters: shared.limiters } : {}),
      ...(deps.now ? { now: () => new Date((deps.now as () => number)()) } : {}),
      services,
      ...(core.dataMark ? { dataMark: core.dataMark } : {}),
      onOutcome: metrics.onCommand,
    },
  );
  /** Where the /verify page is reached, once the HTTP host listens. */
  const pageUrl = () =>
    http.port === undefined
      ? undefined
      : `${verifyBaseUrl(config.http.publicUrl, http.port)}/verify/`;
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
      pageUrl,
      input: deps.input,
      output: deps.output,
    },
  });
  adapterList.bind(adapters);
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
  // One name for this process in every lease and on the alerts and digests it claims.
  const holder = leaseHolderName();
  // One lease per chain (the leaders may differ). The default chain's also decides who delivers,
  // posts digests and retries reports.
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
  const kernel: Kernel = {
    ...core,
    services,
    runtime,
    outbound,
    holder,
    leases,
    leader: leases.get(chains[0]?.id ?? "") as Lease,
  };
  const built = new Map<Feature, FeatureParts>();
  for (const feature of features) built.set(feature, (await feature.build?.(kernel)) ?? {});
  const exposed = <E>(feature: Feature<E>) => built.get(feature as Feature)?.exposes as E;
  const { delivery, pollers } = exposed(alertsFeature);
  const gateParts = exposed(gatesFeature);
  const parts = [...built.values()];

  // The collection index refreshes, the store's checkpoint and the hourly prune of expired rows.
  const upkeep = upkeepJobs({
    refreshers: runtime.refreshers,
    lazyRefresh: config.simulated,
    firstRefreshAfterMs: FIRST_COLLECTION_REFRESH_MS,
    store,
    prune: [
      { what: "button actions", run: () => stores.actions.prune(Date.now()) },
      ...parts.flatMap((part) => part.prune ?? []),
      ...prune,
    ],
    logger,
    monotonic: deps.monotonic,
  });

  /**
   * The background jobs, started in the features' order and stopped in the reverse: within a
   * feature, what feeds another comes after it (the pollers poke delivery), so it stops first and
   * nothing new is produced once shutdown begins. Each says, without I/O, whether its rounds
   * complete within their bound. The upkeep comes last.
   */
  const jobs: Job[] = [...parts.flatMap((part) => part.jobs ?? []), ...upkeep.jobs];
  const poller = pollers.get(chains[0]?.id ?? "") as NewContractPoller;
  const several = chains.length > 1;

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
    for (const part of parts) checks.push(...(part.checks?.() ?? []));
    // Figures, not a check: a slow count leaves them out rather than delay the answer.
    const gateStats = database
      ? await within(
          gateParts.service.stats().catch(() => undefined),
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
  for (const route of opsRoutes({ metrics, health })) http.mount(route);
  for (const adapter of adapters) for (const route of adapter.routes) http.mount(route);
  for (const part of parts) for (const route of part.routes ?? []) http.mount(route);

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
    verify: exposed(verifyFeature),
    poller,
    pollers,
    delivery,
    digests: exposed(digestsFeature),
    watches: exposed(watchesFeature),
    gates: gateParts.service,
    gateRecheck: gateParts.recheck,
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
          await runFeatureMigrations(store, migrations, logger);
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
