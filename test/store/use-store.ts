import { afterEach } from "vitest";
import { type AlertStores, alertStoresOf } from "../../src/alerts/store/index.ts";
import { digestStoreOf, type SqlDigestStore } from "../../src/digests/store.ts";
import type { Store } from "../../src/store/types.ts";
import { type SqlWatchStore, watchStoreOf } from "../../src/watches/store.ts";
import type { OpenStore, StoreOptions } from "./backends.ts";

/**
 * Opens stores for the current suite's tests and closes each after its test; with the features'
 * stores over it (written once on its query layer, like the kernel's).
 */
/** A store with the features' own stores over it. */
export type FeatureStores = Store &
  AlertStores & { digests: SqlDigestStore; watches: SqlWatchStore };

export function useStore(open: OpenStore): (options?: StoreOptions) => Promise<FeatureStores> {
  const opened: (() => Promise<void>)[] = [];
  afterEach(async () => {
    for (const close of opened.splice(0)) await close();
  });
  return async (options) => {
    const { store, close } = await open(options);
    opened.push(close);
    return {
      ...store,
      ...alertStoresOf(store),
      digests: digestStoreOf(store),
      watches: watchStoreOf(store),
    };
  };
}
