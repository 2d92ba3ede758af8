import { randomBytes } from "node:crypto";
import { mkdtempSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import pg from "pg";
import { openPostgresStore } from "../../src/store/postgres/index.ts";
import { openSqliteStore } from "../../src/store/sqlite/index.ts";
import type { Store } from "../../src/store/types.ts";
import { POSTGRES_URL } from "../services.ts";

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

/** A schema name no other test (or helper on the same server) uses. */
export const freshSchemaName = () => `test_${randomBytes(8).toString("hex")}`;

/** Drops a test's schema and everything in it. */
export async function dropSchema(schema: string, url = POSTGRES_URL): Promise<void> {
  const client = new pg.Client({ connectionString: url });
  await client.connect();
  try {
    await client.query(`DROP SCHEMA IF EXISTS "${schema}" CASCADE`);
  } finally {
    await client.end();
  }
}

/** Every backend the contract suites run against. */
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
  {
    // A fresh schema per store on the test server, dropped on close.
    name: "postgres",
    async open(options = {}) {
      const schema = freshSchemaName();
      const store = await openPostgresStore({ url: POSTGRES_URL, schema, max: 4, ...options });
      return {
        store,
        async close() {
          await store.close();
          await dropSchema(schema);
        },
      };
    },
  },
];
