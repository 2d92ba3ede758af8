import { allCommands } from "../commands/index.ts";
import type { ApiClient } from "./api/client.ts";
import type { Chain } from "./chains.ts";
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
  wallets: Store["wallets"];
  reports: Store["reports"];
  chatSettings: Store["chatSettings"];
  /** Chats that refused the bot: using the bot there lifts the pause. */
  chatPauses?: Store["chatPauses"];
  /** The query layer the features' own stores are written in. */
  sql: Store["sql"];
  /** The first chain's collection index. */
  collections: KnownCollections;
  /** Each chain's collection index, kept in memory over the store's rows of that chain. */
  collectionIndexes: Map<string, KnownCollections>;
}

/** What the commands use of the store, and each chain's collection index kept in memory over it. */
export function openStores(
  store: Store,
  logger?: Logger,
  chains: readonly Pick<Chain, "id">[] = [{ id: "ethereum" }],
): CommandStores {
  const collectionIndexes = new Map<string, KnownCollections>();
  for (const chain of chains) {
    collectionIndexes.set(
      chain.id,
      new KnownCollections({
        store: store.collections.forChain(chain.id),
        ...(logger
          ? {
              logger: logger.child({
                part: "collection-index",
                ...(chains.length > 1 ? { chain: chain.id } : {}),
              }),
            }
          : {}),
      }),
    );
  }
  return {
    actions: store.actions,
    wallets: store.wallets,
    reports: store.reports,
    chatSettings: store.chatSettings,
    chatPauses: store.chatPauses,
    sql: store.sql,
    collections: collectionIndexes.get(chains[0]?.id ?? "") as KnownCollections,
    collectionIndexes,
  };
}

/**
 * The runtime with every command, as the bot and the tests build it (tests override what they
 * are about): a new dependency of the commands is wired here, once.
 */
export function buildRuntime(
  config: Config,
  parts: {
    /** The first chain's client. */
    api: ApiClient;
    /** The chains served (default: config.chains) and each one's client. */
    chains?: readonly Chain[];
    apis?: ReadonlyMap<string, ApiClient>;
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
    chains: parts.chains ?? config.chains,
    ...(parts.apis ? { apis: parts.apis } : {}),
    charts,
    actions: stores.actions,
    store: {
      wallets: stores.wallets,
      reports: stores.reports,
      chatSettings: stores.chatSettings,
      ...(stores.chatPauses ? { chatPauses: stores.chatPauses } : {}),
      sql: stores.sql,
    },
    logger,
    settings: {
      reportsPerHour: config.reportsPerHour,
      digestsPerChat: config.digests.perChat,
      watchesPerChat: config.watches.perChat,
      ipfsGateway: config.ipfsGateway,
    },
    deadlineMs: config.commandDeadlineMs,
    rateLimit: config.rateLimit,
    // Discord's interaction replies do not share a per-channel budget; Telegram groups do.
    chatRateLimit: { telegram: config.chatRateLimit },
    buttonTtlSeconds: config.buttonTtlSeconds,
    collections: stores.collections,
    collectionIndexes: stores.collectionIndexes,
    collectionRefreshMs: config.collectionIndexRefreshMs,
    ...overrides,
  });
}
