import { afterEach } from "vitest";
import { type AlertStores, alertStoresOf } from "../../src/alerts/store/index.ts";
import type { Store } from "../../src/store/types.ts";
import type { OpenStore, StoreOptions } from "./backends.ts";

/**
 * Opens stores for the current suite's tests and closes each after its test; with the alerts'
 * stores over it (written once on its query layer, like the kernel's).
 */
export function useStore(
  open: OpenStore,
): (options?: StoreOptions) => Promise<Store & AlertStores> {
  const opened: (() => Promise<void>)[] = [];
  afterEach(async () => {
    for (const close of opened.splice(0)) await close();
  });
  return async (options) => {
    const { store, close } = await open(options);
    opened.push(close);
    return { ...store, ...alertStoresOf(store) };
  };
}
