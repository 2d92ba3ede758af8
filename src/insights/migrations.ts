import type { Migration } from "kysely";

/** The insights' tables (their types: InsightTables in store.ts), on either database. */
export const INSIGHT_MIGRATIONS: Readonly<Record<string, Migration>> = {
  "001-insights": {
    async up(db) {
      await db.schema
        .createTable("insight_members")
        .addColumn("platform", "text", (c) => c.notNull())
        .addColumn("place", "text", (c) => c.notNull())
        .addColumn("user_id", "text", (c) => c.notNull())
        .addColumn("name", "text")
        .addColumn("since", "bigint", (c) => c.notNull())
        .addColumn("seen_at", "bigint", (c) => c.notNull())
        .addPrimaryKeyConstraint("insight_members_pk", ["platform", "place", "user_id"])
        .execute();
      await db.schema
        .createIndex("insight_members_person")
        .on("insight_members")
        .columns(["platform", "user_id"])
        .execute();
      await db.schema
        .createTable("insight_private")
        .addColumn("platform", "text", (c) => c.notNull())
        .addColumn("user_id", "text", (c) => c.notNull())
        .addColumn("since", "bigint", (c) => c.notNull())
        .addPrimaryKeyConstraint("insight_private_pk", ["platform", "user_id"])
        .execute();
      await db.schema
        .createTable("insight_settings")
        .addColumn("platform", "text", (c) => c.notNull())
        .addColumn("place", "text", (c) => c.notNull())
        .addColumn("chain", "text", (c) => c.notNull())
        .addColumn("collection", "text", (c) => c.notNull())
        .addColumn("set_by", "text", (c) => c.notNull())
        .addColumn("set_at", "bigint", (c) => c.notNull())
        .addPrimaryKeyConstraint("insight_settings_pk", ["platform", "place", "chain"])
        .execute();
      await db.schema
        .createTable("insight_wanted")
        .addColumn("platform", "text", (c) => c.notNull())
        .addColumn("place", "text", (c) => c.notNull())
        .addColumn("chain", "text", (c) => c.notNull())
        .addColumn("asked_at", "bigint", (c) => c.notNull())
        .addPrimaryKeyConstraint("insight_wanted_pk", ["platform", "place", "chain"])
        .execute();
      await db.schema
        .createTable("insight_wallets")
        .addColumn("chain", "text", (c) => c.notNull())
        .addColumn("address", "text", (c) => c.notNull())
        .addColumn("read_at", "bigint", (c) => c.notNull())
        .addColumn("behavior", "text")
        .addColumn("volume", "double precision")
        .addColumn("purchases", "bigint")
        .addColumn("collections", "bigint")
        .addColumn("held", "text", (c) => c.notNull())
        .addPrimaryKeyConstraint("insight_wallets_pk", ["chain", "address"])
        .execute();
      await db.schema
        .createTable("insight_snapshots")
        .addColumn("platform", "text", (c) => c.notNull())
        .addColumn("place", "text", (c) => c.notNull())
        .addColumn("chain", "text", (c) => c.notNull())
        .addColumn("day", "text", (c) => c.notNull())
        .addColumn("taken_at", "bigint", (c) => c.notNull())
        .addColumn("members", "bigint", (c) => c.notNull())
        .addColumn("wallets", "bigint", (c) => c.notNull())
        .addColumn("data", "text", (c) => c.notNull())
        .addPrimaryKeyConstraint("insight_snapshots_pk", ["platform", "place", "chain", "day"])
        .execute();
      await db.schema
        .createTable("insight_links")
        .addColumn("hash", "text", (c) => c.primaryKey())
        .addColumn("kind", "text", (c) => c.notNull())
        .addColumn("platform", "text", (c) => c.notNull())
        .addColumn("place", "text", (c) => c.notNull())
        .addColumn("channel", "text", (c) => c.notNull())
        .addColumn("title", "text")
        .addColumn("chain", "text", (c) => c.notNull())
        .addColumn("user_id", "text", (c) => c.notNull())
        .addColumn("expires_at", "bigint", (c) => c.notNull())
        .addColumn("used_at", "bigint")
        .execute();
    },
  },
};
