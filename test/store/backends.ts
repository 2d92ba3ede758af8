import { mkdtempSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { openSqliteStore } from "../../src/store/sqlite/index.ts";
import type { Store } from "../../src/store/types.ts";

export interface StoreOptions {
  maxButtonsPerUser?: number;
}

/** A store opened for one test; `close` closes it and removes what it kept. */
export interface OpenedStore {
  store: Store;
  close(): Promise<void>;
}

/** Opens a fresh, empty store of one backend. */
export type OpenStore = (options?: StoreOptions) => Promise<OpenedStore>;

export interface Backend {
  name: string;
  open: OpenStore;
}

/** Every backend the contract suites run against (PostgreSQL joins with its implementation). */
export const backends: Backend[] = [
  {
    name: "sqlite",
    async open(options = {}) {
      const dataDir = mkdtempSync(join(tmpdir(), "store-contract-"));
      const store = openSqliteStore(dataDir, options);
      return {
        store,
        async close() {
          await store.close();
          rmSync(dataDir, { recursive: true, force: true });
        },
      };
    },
  },
];
