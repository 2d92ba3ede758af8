import { allCommands } from "../commands/index.ts";
import type { ApiClient } from "./api/client.ts";
import type { Config } from "./config.ts";
import type { ChartDrawer } from "./core/charts.ts";
import type { AnyCommand } from "./core/command.ts";
import { KnownCollections } from "./core/known-collections.ts";
import { Runtime, type RuntimeOptions } from "./core/runtime.ts";
import type { Logger } from "./log.ts";
import type { Store } from "./store/types.ts";

/** The stores the runtime's commands use, on one database. */
export interface CommandStores {
  actions: Store["actions"];
  subscriptions: Store["subscriptions"];
  wallets: Store["wallets"];
  reports: Store["reports"];
  digests: Store["digests"];
  collections: KnownCollections;
}

/** What the commands use of the store, and the collection index kept in memory over it. */
export function openStores(store: Store, logger?: Logger): CommandStores {
  return {
    actions: store.actions,
    subscriptions: store.subscriptions,
    wallets: store.wallets,
    reports: store.reports,
    digests: store.digests,
    collections: new KnownCollections({
      store: store.collections,
      ...(logger ? { logger: logger.child({ part: "collection-index" }) } : {}),
    }),
  };
}

/**
 * The runtime with every command, as the bot and the tests build it (tests override what they
 * are about): a new dependency of the commands is wired here, once.
 */
export function buildRuntime(
  config: Config,
  parts: {
    api: ApiClient;
    stores: CommandStores;
    charts: ChartDrawer;
    logger: Logger;
    commands?: AnyCommand[];
  },
  overrides: Partial<RuntimeOptions> = {},
): Runtime {
  const { api, stores, charts, logger } = parts;
  return new Runtime({
    commands: parts.commands ?? allCommands(),
    api,
    charts,
    actions: stores.actions,
    store: {
      subscriptions: stores.subscriptions,
      wallets: stores.wallets,
      reports: stores.reports,
      digests: stores.digests,
    },
    logger,
    settings: {
      explorerUrl: config.explorerUrl,
      chains: config.chains,
      reportsPerHour: config.reportsPerHour,
      digestsPerChat: config.digests.perChat,
      ipfsGateway: config.ipfsGateway,
    },
    deadlineMs: config.commandDeadlineMs,
    rateLimit: config.rateLimit,
    // Discord's interaction replies do not share a per-channel budget; Telegram groups do.
    chatRateLimit: { telegram: config.chatRateLimit },
    buttonTtlSeconds: config.buttonTtlSeconds,
    collections: stores.collections,
    collectionRefreshMs: config.collectionIndexRefreshMs,
    ...overrides,
  });
}
