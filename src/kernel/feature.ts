import type { Migration } from "kysely";
import type { ChatAdapter, PlatformJoinRequestListener } from "../adapters/types.ts";
import type { ApiClient } from "../api/client.ts";
import type { Shared } from "../cache/index.ts";
import type { Chain } from "../chains.ts";
import type { Config } from "../config.ts";
import type { ChartDrawer } from "../core/charts.ts";
import type { AnyCommand, CommandServices } from "../core/command.ts";
import type { Platform } from "../core/platform.ts";
import type { Runtime } from "../core/runtime.ts";
import type { HttpHost, HttpRoute } from "../http/host.ts";
import type { Health } from "../http/ops.ts";
import type { Job } from "../jobs/job.ts";
import type { Lease } from "../jobs/lease.ts";
import type { Check } from "../jobs/liveness.ts";
import type { Logger } from "../log.ts";
import type { Metrics } from "../ops/metrics.ts";
import type { Outbound } from "../outbound/outbound.ts";
import type { ChatMover } from "../store/move-chat.ts";
import type { Store } from "../store/types.ts";
import type { CommandStores } from "../wiring.ts";

/**
 * A feature installed as one unit (issue 35), as grammY's plugins, Sapphire's pieces and fastify's
 * plugins are: its commands, jobs, HTTP routes, health checks, metrics, migrations and store come
 * from its own folder, and the bot lists it once (bot.ts's feature list). The kernel knows no
 * feature; a feature reaches another only through a service the kernel declares (KernelServices).
 *
 * Two steps, both before anything starts:
 * - `setup(kernel)`: the services it gives the commands and later features, before the runtime;
 * - `build(kernel)`: its parts, once the runtime, the adapters and the outbound module exist.
 * Its migrations run before either (after the store's own), each once, whichever database.
 */
export interface Feature<Exposed = unknown> {
  /** Unique; names the feature's migrations ("<name>/<migration>") and its log lines. */
  readonly name: string;
  /** Kysely migrations, written once for SQLite and PostgreSQL, by name (run in name order). */
  readonly migrations?: Readonly<Record<string, Migration>>;
  /**
   * The chat commands it adds (their files are in commands/), listed after commands/index.ts's and
   * registered with the platforms like them. Its store is the query layer's: `ctx.store.sql`.
   */
  readonly commands?: readonly AnyCommand[];
  /**
   * Before the command runtime: the services it gives the commands' context and the features
   * after it (`kernel.services`).
   */
  setup?(kernel: KernelCore): FeatureSetup;
  build?(kernel: Kernel): FeatureParts<Exposed> | Promise<FeatureParts<Exposed>>;
}

/** What a feature's setup gives. */
export interface FeatureSetup {
  services?: KernelServices;
  /**
   * Moves what the feature keeps of a chat that got a new id (a Telegram group upgraded to a
   * supergroup), whichever part learnt of it (src/store/move-chat.ts).
   */
  moveChat?: ChatMover;
  /**
   * Decides a request to join a group (Telegram's join-request links), given to the platform's
   * adapter when it is built. One feature at most may take them.
   */
  onJoinRequest?: PlatformJoinRequestListener;
}

/**
 * The services through which the commands and other features reach a feature: the declared
 * interfaces between features (verify tells gates of a proof; the commands read both).
 */
export type KernelServices = CommandServices;

/**
 * A part built after those that use it, bound once before anything starts: the adapters are built
 * on the runtime, the runtime on the features' services, and a service (verify's confirmation)
 * talks through an adapter. Reading it before it is bound throws.
 */
export class Later<T> {
  private value: { v: T } | undefined;
  constructor(private readonly what: string) {}
  bind(value: T): void {
    if (this.value) throw new Error(`${this.what} is bound already`);
    this.value = { v: value };
  }
  get(): T {
    if (!this.value) throw new Error(`${this.what} is not built yet`);
    return this.value.v;
  }
}

/** What a feature adds to the bot once built. Nothing runs until the bot starts. */
export interface FeatureParts<Exposed = unknown> {
  /** What the bot exposes of it (for operators' checks and tests: Bot.delivery, Bot.gates). */
  exposes?: Exposed;
  /** Started in the features' order, after the earlier features' jobs; stopped in reverse. */
  jobs?: readonly Job[];
  /** Mounted on the HTTP host. */
  routes?: readonly HttpRoute[];
  /** What /healthz says beyond the jobs' own checks: read without I/O. */
  checks?: () => Check[];
  /**
   * Figures /healthz shows of it, never failing it (the pollers' lag, the gates' counts); with
   * I/O, only when the database answered (`database`). /healthz bounds them by the probe's time
   * and leaves out one that is slow or fails.
   */
  figures?: (database: boolean) => Partial<Health> | Promise<Partial<Health>>;
  /**
   * What it keeps for a chat, in words, for the chat's managers (the manager's page shows each
   * feature's: subscriptions, digests, watches).
   */
  chatSections?: (platform: Platform, chatId: string) => Promise<ChatSection[]>;
  /** Expired rows deleted by the hourly prune, each with what to say when it fails. */
  prune?: readonly { what: string; run: () => Promise<unknown> }[];
}

/** A feature's section of what it keeps for a chat: a title and plain lines (none: "none"). */
export interface ChatSection {
  title: string;
  lines: string[];
}

/** The kernel as the features' setups see it: no runtime, adapter or outbound yet. */
export interface KernelCore {
  readonly config: Config;
  readonly logger: Logger;
  /** Wall clock in epoch ms (tests move it). */
  readonly now: () => number;
  /** Monotonic ms for durations, when a test sets it. */
  readonly monotonic: (() => number) | undefined;
  /** The chains served, the default first, and each one's client. */
  readonly chains: readonly Chain[];
  readonly apis: ReadonlyMap<string, ApiClient>;
  /** The default chain's client. */
  readonly api: ApiClient;
  readonly store: Store;
  /** What the commands use of the store, with each chain's collection index. */
  readonly stores: CommandStores;
  /** Redis's shared cache, limits and pacing, with REDIS_URL. */
  readonly shared: Shared | undefined;
  /** The embedded simulator's mark for made-up data, when the data is the simulator's. */
  readonly dataMark: string | undefined;
  /** The recorders and the registry a feature adds its own metrics to. */
  readonly metrics: Metrics;
  /** The HTTP host (listening once the bot starts: `http.port`). */
  readonly http: HttpHost;
  /** Draws a chart spec as a PNG (the answers' painter, with its cache). */
  readonly charts: ChartDrawer;
  /**
   * The outbound module, bound once it is built (on the adapters, built on the runtime, built on
   * the features' services): a service set up here sends through it when it runs (a proof's
   * confirmation, a gate's notice).
   */
  readonly sending: Later<Outbound>;
  /** The chat platforms, bound once built (a service set up here reads their capabilities). */
  readonly platforms: Later<readonly ChatAdapter[]>;
  /** The services of the features set up before this one. */
  readonly services: KernelServices;
}

/** The whole kernel, as features' parts are built on it. */
export interface Kernel extends KernelCore {
  readonly runtime: Runtime;
  /** The chat platforms, built on the runtime. */
  readonly adapters: readonly ChatAdapter[];
  /** The only way to send to a chat outside an answer. */
  readonly outbound: Outbound;
  /** This process's name in every lease and claim. */
  readonly holder: string;
  /** Every feature's sections for a chat (FeatureParts.chatSections), in the features' order. */
  chatSections(platform: Platform, chatId: string): Promise<ChatSection[]>;
  /** Each chain's poller lease; the default chain's (`leader`) decides the leader's jobs. */
  readonly leases: ReadonlyMap<string, Lease>;
  readonly leader: Lease;
}

/** The features' names must be unique: they name migrations and logs. */
export function checkFeatures(features: readonly Feature[]): void {
  const seen = new Set<string>();
  for (const feature of features) {
    if (!/^[a-z][a-z0-9-]*$/.test(feature.name))
      throw new Error(`feature name "${feature.name}": lowercase letters, digits and dashes only`);
    if (seen.has(feature.name)) throw new Error(`two features are named "${feature.name}"`);
    seen.add(feature.name);
  }
}

/** The features' commands, in the list's order. */
export function featureCommands(features: readonly Feature[]): AnyCommand[] {
  return features.flatMap((feature) => feature.commands ?? []);
}

/** Every feature's migrations under "<feature>/<name>", for the store's query layer. */
export function featureMigrations(features: readonly Feature[]): Record<string, Migration> {
  const all: Record<string, Migration> = {};
  for (const feature of features)
    for (const [name, migration] of Object.entries(feature.migrations ?? {}))
      all[`${feature.name}/${name}`] = migration;
  return all;
}

/**
 * Each feature's setup in the list's order, each seeing the services of those before it: the
 * services of them all, for the commands' context, and what each moves of a chat that moved.
 */
export function setUpFeatures(
  features: readonly Feature[],
  core: KernelCore,
): {
  services: KernelServices;
  movers: ChatMover[];
  onJoinRequest: PlatformJoinRequestListener | undefined;
} {
  const services: KernelServices = {};
  const movers: ChatMover[] = [];
  let onJoinRequest: { feature: string; listener: PlatformJoinRequestListener } | undefined;
  for (const feature of features) {
    const setup = feature.setup?.({ ...core, services: { ...services } });
    Object.assign(services, setup?.services);
    if (setup?.moveChat) movers.push(setup.moveChat);
    if (setup?.onJoinRequest) {
      if (onJoinRequest)
        throw new Error(
          `the features ${onJoinRequest.feature} and ${feature.name} both decide join requests`,
        );
      onJoinRequest = { feature: feature.name, listener: setup.onJoinRequest };
    }
  }
  return { services, movers, onJoinRequest: onJoinRequest?.listener };
}

/**
 * Runs the features' migrations not run yet (after the store's own); a failure is the bot's
 * start-up failure, saying which migration.
 */
export async function runFeatureMigrations(
  store: Pick<Store, "sql">,
  migrations: Readonly<Record<string, Migration>>,
  logger: Logger,
): Promise<void> {
  const ran = await store.sql.migrate(migrations);
  if (ran.length > 0) logger.info({ migrations: ran }, "the features' migrations have run");
}
