/**
 * The features' migrations on PostgreSQL when instances start together: every instance runs the
 * migrator at start, and two creating Kysely's migration tables at once failed one start
 * ("relation feature_migrations_lock does not exist") before they took turns.
 */
import { afterEach, describe, expect, it } from "vitest";
import { INSIGHT_MIGRATIONS } from "../../src/insights/store.ts";
import { openPostgresStore } from "../../src/store/postgres/index.ts";
import type { Store } from "../../src/store/types.ts";
import { POSTGRES_URL } from "../services.ts";
import { dropSchema, freshSchemaName } from "./backends.ts";

const cleanups: (() => Promise<unknown>)[] = [];
afterEach(async () => {
  for (const cleanup of cleanups.splice(0).reverse()) await cleanup();
});

describe("features' migrations on PostgreSQL", () => {
  it("four instances starting at once on a new schema each start, and each migration runs once", async () => {
    for (let round = 0; round < 1; round++) {
      const schema = freshSchemaName();
      cleanups.push(() => dropSchema(schema));
      const stores: Store[] = [];
      for (let i = 0; i < 4; i++) {
        // One instance makes the schema (as a deployment's first start does), then all start.
        const store = await openPostgresStore({ url: POSTGRES_URL, schema, max: 2 });
        stores.push(store);
        cleanups.push(() => store.close());
      }
      const migrations = { "insights/001-insights": INSIGHT_MIGRATIONS["001-insights"] } as never;
      const ran = await Promise.all(stores.map((store) => store.sql.migrate(migrations)));
      // Exactly one of them ran it; the others found it done.
      expect(ran.flat()).toEqual(["insights/001-insights"]);
    }
  });
});
