import { allCommands } from "../commands/index.ts";
import { configuredAdapters } from "./adapters/index.ts";
import type { ChatAdapter } from "./adapters/types.ts";
import type { ApiClient } from "./api/client.ts";
import type { Chain } from "./chains.ts";
import type { Config } from "./config.ts";
import type { Platform } from "./core/command.ts";
import { SIMULATED_DATA_MARK } from "./core/materialize.ts";
import type { Reply } from "./core/reply.ts";
import type { Runtime } from "./core/runtime.ts";
import {
  type AlertsExposed,
  BUILT_IN,
  type ExposedBy,
  FEATURES,
  type NewContractPoller,
} from "./features.ts";
import { HttpHost, publicBaseUrl } from "./http/host.ts";
import { type Health, opsRoutes } from "./http/ops.ts";
import { type Job, stopJobs } from "./jobs/job.ts";
import { type Lease, leaseHolderName } from "./jobs/lease.ts";
import {
  checkFeatures,
  type Feature,
  type FeatureParts,
  featureCommands,
  featureMigrations,
  type Kernel,
  type KernelCore,
  Later,
  setUpFeatures,
} from "./kernel/feature.ts";
import { healthOf } from "./kernel/health.ts";
import { featuresMigratedAtStart, lateStart } from "./kernel/late-start.ts";
import {
  chainLeases,
  closeAll,
  connectAdapters,
  dataClients,
  dataServices,
  sectionsOf,
  sharedParts,
} from "./kernel/parts.ts";
import type { Logger } from "./log.ts";
import type { LogDestinationState } from "./log-destination.ts";
import { createMetrics, type Metrics } from "./ops/metrics.ts";
import { Outbound } from "./outbound/outbound.ts";
import type { ChatSender } from "./outbound/types.ts";
import { CachedChartDrawer } from "./render/chart-drawer.ts";
import { chartPainter } from "./render/charts.ts";
import type { Simulator } from "./simulator/index.ts";
import { listen } from "./startup.ts";
import { chatMover } from "./store/move-chat.ts";
import { openStore } from "./store/open.ts";
import type { Db } from "./store/sqlite/index.ts";
import type { Store } from "./store/types.ts";
import { upkeepJobs } from "./upkeep.ts";
import { buildRuntime, openStores } from "./wiring.ts";
import { settledBy } from "./within.ts";

export { apiClientSettings } from "./kernel/parts.ts";

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
  verify: ExposedBy<typeof BUILT_IN.verify>;
  /** The default chain's poller (its lease also decides who delivers and retries reports). */
  poller: NewContractPoller;
  /** One poller per chain, by chain id: each with its own client, cursor, lease and gap count. */
  pollers: ReadonlyMap<string, NewContractPoller>;
  delivery: AlertsExposed["delivery"];
  /** Posts the channels' scheduled digests (on the default chain's lease holder). */
  digests: ExposedBy<typeof BUILT_IN.digests>;
  /** Checks the channels' watches (under its own lease, `watches`) and posts what moved. */
  watches: ExposedBy<typeof BUILT_IN.watches>;
  /**
   * Gates (/gate): roles and group entry for proved wallets that pass, decided at a proof, an
   * unlink and a join request; `gateRecheck` re-checks members under its own lease (`gates`).
   */
  gates: ExposedBy<typeof BUILT_IN.gates>["service"];
  gateRecheck: ExposedBy<typeof BUILT_IN.gates>["recheck"];
  /** Insights of communities' proved members (issue 36): the page's links, the service. */
  insights: ExposedBy<typeof BUILT_IN.insights>;
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
/**
 * The collection index's first refresh waits this long after start: its 13 requests, their
 * validation and the index's writes took some 40 ms from the first answer (issue 28). A name the
 * index misses before then refreshes it at once.
 */
const FIRST_COLLECTION_REFRESH_MS = 5_000;

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

async function build(config: Config, deps: BotDeps, opened: (() => unknown)[]): Promise<Bot> {
  const { logger } = deps;
  const features = [...FEATURES, ...(deps.features ?? [])];
  checkFeatures(features);
  const { chains, simulator } = await dataServices(config, logger, opened);
  const shared = await sharedParts(config, logger, opened);
  const apis = dataClients(config, chains, shared, logger, opened);
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
  // The features' own tables, once the store's are there (on a full disk, once there is room).
  const migrations = featureMigrations(features);
  const migrated = await featuresMigratedAtStart(store, migrations, logger);
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
  const sending = new Later<Outbound>("the outbound module");
  const platforms = new Later<readonly ChatAdapter[]>("the chat adapters");
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
    charts,
    sending,
    platforms,
    services: {},
  };
  const { services, movers, onJoinRequest } = setUpFeatures(features, core);
  const moveChat = chatMover(store, movers);
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
      : `${publicBaseUrl(config.http.publicUrl, http.port)}/verify/`;
  const { adapters, prune } = await configuredAdapters(config, {
    runtime,
    logger,
    store,
    moveChat,
    onJoinRequest,
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
  // A reply posted unasked (an alert, a digest, a watch's post), as it goes to that chat.
  const materialize = (platform: Platform, chatId: string, reply: Reply) =>
    runtime.materialize(reply, { platform, chat: { id: chatId, kind: "group" } });
  const senders: Partial<Record<Platform, ChatSender>> = Object.fromEntries(
    adapters.map((adapter) => [adapter.platform, adapter]),
  );
  // The one place that sends outside an answer: alerts, digests, watches, gates' notices, proofs.
  const outbound = new Outbound({
    senders,
    materialize,
    moveChat,
    chatPauses: store.chatPauses,
    waits: store.sendWaits,
  });
  sending.bind(outbound);
  platforms.bind(adapters);
  // One name for this process in every lease and on the alerts and digests it claims.
  const holder = leaseHolderName();
  // One lease per chain (the leaders may differ). The default chain's also decides who delivers,
  // posts digests and retries reports.
  const leases = chainLeases(chains, store.leases, holder, config.lease.ttlMs, deps.monotonic);
  const built = new Map<Feature, FeatureParts>();
  const kernel: Kernel = {
    ...core,
    services,
    runtime,
    adapters,
    outbound,
    holder,
    leases,
    leader: leases.get(chains[0]?.id ?? "") as Lease,
    chatSections: sectionsOf(built),
  };
  for (const feature of features) built.set(feature, (await feature.build?.(kernel)) ?? {});
  const exposed = <E>(feature: Feature<E>) => built.get(feature as Feature)?.exposes as E;
  const { delivery, pollers } = exposed(BUILT_IN.alerts);
  const gateParts = exposed(BUILT_IN.gates);
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
  const jobs: Job[] = [
    ...upkeep.first,
    ...parts.flatMap((part) => part.jobs ?? []),
    ...upkeep.jobs,
  ];
  const poller = pollers.get(chains[0]?.id ?? "") as NewContractPoller;

  // The jobs of a start whose migrations wait for room: started once they have run.
  const late = lateStart({
    store,
    migrations,
    jobs: jobs.filter((job) => !upkeep.first.includes(job)),
    start: startJobs,
    stopped: () => stopped,
    logger,
  });
  const health = healthOf({
    adapters,
    store,
    logState: deps.logState,
    jobs,
    features: parts,
    shared,
    jobsNotStarted: late.notStarted,
  });
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
    verify: exposed(BUILT_IN.verify),
    poller,
    pollers,
    delivery,
    digests: exposed(BUILT_IN.digests),
    watches: exposed(BUILT_IN.watches),
    gates: gateParts.service,
    insights: exposed(BUILT_IN.insights),
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
    await connectAdapters(adapters, config.connectTimeoutMs, running, deps.notice);
    // The jobs stop before the adapters (closeAll runs last first), and among themselves in the
    // reverse of their order, within the first part of the shutdown's time.
    running.push(() => stopJobs(startedJobs, jobsStopBy, logger));
    // Migrations that wait for room (a start on a full disk): the jobs, which write and may need
    // the new tables, start once they have run; the store's first chores (its migrations) run as
    // jobs from now on, and the commands answer now.
    if (!migrated) {
      await startJobs(upkeep.first);
      running.push(late.stop);
      late.begin();
      return;
    }
    await startJobs(jobs);
  }

  /** The background jobs, the collection index's refreshes and the store's upkeep among them. */
  async function startJobs(list: readonly Job[]): Promise<void> {
    for (const job of list) {
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
