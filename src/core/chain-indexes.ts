import type { ApiClient } from "../api/client.ts";
import type { Chain } from "../chains.ts";
import type { Logger } from "../log.ts";
import { CollectionRefresher } from "./collection-refresh.ts";
import { KnownCollections } from "./known-collections.ts";

/** What each chain's client and collection index come from (RuntimeOptions says what each is). */
export interface ChainSources {
  api: ApiClient;
  apis?: ReadonlyMap<string, ApiClient> | undefined;
  collections?: KnownCollections | undefined;
  collectionIndexes?: ReadonlyMap<string, KnownCollections> | undefined;
  logger: Logger;
  collectionRefreshMs?: number | undefined;
  monotonic?: (() => number) | undefined;
}

/** Each served chain's data-service client, collection index and its refresher, by chain id. */
export interface ChainIndexes {
  apis: Map<string, ApiClient>;
  indexes: Map<string, KnownCollections>;
  refreshers: Map<string, CollectionRefresher>;
}

/**
 * Every chain's client (its own, else the first's), collection index (the one given, else one
 * in memory) and refresher (every 15 min unless told otherwise); with several chains each
 * refresher's log lines name its chain.
 */
export function chainIndexes(chains: readonly Chain[], options: ChainSources): ChainIndexes {
  const apis = new Map<string, ApiClient>();
  const indexes = new Map<string, KnownCollections>();
  const refreshers = new Map<string, CollectionRefresher>();
  for (const [index, chain] of chains.entries()) {
    const api = options.apis?.get(chain.id) ?? options.api;
    apis.set(chain.id, api);
    const collections =
      (index === 0 ? options.collections : undefined) ??
      options.collectionIndexes?.get(chain.id) ??
      new KnownCollections();
    indexes.set(chain.id, collections);
    refreshers.set(
      chain.id,
      new CollectionRefresher({
        api,
        collections,
        logger: options.logger.child({
          part: "collection-index",
          ...(chains.length > 1 ? { chain: chain.id } : {}),
        }),
        intervalMs: options.collectionRefreshMs ?? 15 * 60_000,
        name: `collection refresh ${chain.id}`,
        ...(options.monotonic ? { monotonic: options.monotonic } : {}),
      }),
    );
  }
  return { apis, indexes, refreshers };
}
