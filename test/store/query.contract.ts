import { sql as raw } from "kysely";
import { afterEach, describe, expect, it } from "vitest";
import { alertStoresOf } from "../../src/alerts/store/index.ts";
import { postgresSql } from "../../src/store/postgres/query.ts";
import type { Sql } from "../../src/store/query.ts";
import { sqliteSql } from "../../src/store/sqlite/query.ts";
import type { Store } from "../../src/store/types.ts";
import type { OpenedStore, OpenStore } from "./backends.ts";

/** The runner over a store's own connection, as its stores written once use it. */
export const runnerOf = (store: Store): Sql =>
  "db" in store
    ? sqliteSql((store as { db: Parameters<typeof sqliteSql>[0] }).db)
    : postgresSql((store as unknown as { pg: Parameters<typeof postgresSql>[0] }).pg);

/** The query runner of src/store/query.ts: one code, the same results on both databases. */
export function queryContract(open: OpenStore): void {
  describe("query runner", () => {
    let opened: OpenedStore | undefined;
    afterEach(async () => {
      await opened?.close();
      opened = undefined;
    });

    it("a transaction's reads see its own writes, and it returns what its body returns", async () => {
      opened = await open();
      const sql = runnerOf(opened.store);
      const { q } = sql;
      const value = await sql.transaction(function* (tx) {
        yield* tx.run(q.insertInto("kv").values({ key: "a", value: "1" }));
        const changed = yield* tx.run(
          q.updateTable("kv").set({ value: "2" }).where("key", "=", "a"),
        );
        const row = yield* tx.first(q.selectFrom("kv").select("value").where("key", "=", "a"));
        const rows = yield* tx.all(q.selectFrom("kv").selectAll());
        return { changed, value: row?.value, count: rows.length };
      });
      expect(value).toEqual({ changed: 1, value: "2", count: 1 });
      expect(await opened.store.kv.get("a")).toBe("2");
    });

    it("a body that throws rolls back every write it made, and the error reaches the caller", async () => {
      opened = await open();
      const sql = runnerOf(opened.store);
      const { q } = sql;
      await opened.store.kv.set("kept", "before");
      await expect(
        sql.transaction(function* (tx) {
          yield* tx.run(q.insertInto("kv").values({ key: "new", value: "x" }));
          yield* tx.run(q.updateTable("kv").set({ value: "after" }).where("key", "=", "kept"));
          throw new Error("stop here");
        }),
      ).rejects.toThrow("stop here");
      expect(await opened.store.kv.get("new")).toBeUndefined();
      expect(await opened.store.kv.get("kept")).toBe("before");
    });

    it("a failing statement inside a transaction rolls back the ones before it", async () => {
      opened = await open();
      const sql = runnerOf(opened.store);
      const { q } = sql;
      await expect(
        sql.transaction(function* (tx) {
          yield* tx.run(q.insertInto("kv").values({ key: "b", value: "1" }));
          // The same key again: the primary key refuses it.
          yield* tx.run(q.insertInto("kv").values({ key: "b", value: "2" }));
        }),
      ).rejects.toThrow();
      expect(await opened.store.kv.get("b")).toBeUndefined();
    });

    it("a feature's store over the layer is built once per store", async () => {
      opened = await open();
      const other = await open();
      try {
        expect(alertStoresOf(opened.store)).toBe(alertStoresOf(opened.store));
        expect(alertStoresOf(other.store).outbox).not.toBe(alertStoresOf(opened.store).outbox);
      } finally {
        await other.close();
      }
    });

    it("single statements give rows, one row or nothing, and the count of rows changed", async () => {
      opened = await open();
      const sql = runnerOf(opened.store);
      const { q } = sql;
      expect(
        await sql.run(
          q.insertInto("kv").values([
            { key: "x", value: "1" },
            { key: "y", value: "2" },
          ]),
        ),
      ).toBe(2);
      expect(await sql.all(q.selectFrom("kv").select("key").orderBy("key"))).toEqual([
        { key: "x" },
        { key: "y" },
      ]);
      expect(await sql.first(q.selectFrom("kv").select("value").where("key", "=", "z"))).toBe(
        undefined,
      );
      expect(await sql.run(q.deleteFrom("kv").where("key", "in", ["x", "y", "z"]))).toBe(2);
      // A raw statement, its value bound as a parameter.
      expect(await sql.first(sql.raw(raw<{ two: number }>`SELECT ${1} + 1 AS two`))).toEqual({
        two: 2,
      });
    });
  });
}
