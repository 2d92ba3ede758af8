import { mkdtempSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { afterEach, beforeEach, describe, expect, it } from "vitest";
import { SqlUpdateStore } from "../src/store/shared/updates.ts";
import { type Db, openDatabase } from "../src/store/sqlite/index.ts";
import { sqliteSql } from "../src/store/sqlite/query.ts";
import { SourceUpdateDedup } from "../src/store/updates.ts";

/** One source's dedup over the SQLite update store of `db`. */
const dedup = (db: Db, options: ConstructorParameters<typeof SourceUpdateDedup>[1]) =>
  new SourceUpdateDedup(new SqlUpdateStore(sqliteSql(db)), options);

let dataDir: string;
beforeEach(() => {
  dataDir = mkdtempSync(join(tmpdir(), "bot-dedup-"));
});
afterEach(() => {
  rmSync(dataDir, { recursive: true, force: true });
});

describe("update ids already taken (SQLite)", () => {
  it("says first once per update id and source, across a restart", async () => {
    let db = openDatabase(dataDir);
    const seen = dedup(db, { source: "telegram:123" });
    expect(await seen.firstSeen(10_000)).toBe(true);
    expect(await seen.firstSeen(10_000)).toBe(false);
    expect(await seen.firstSeen(10_001)).toBe(true);
    // Another bot token numbers its updates on its own.
    expect(await dedup(db, { source: "telegram:456" }).firstSeen(10_000)).toBe(true);
    db.close();
    db = openDatabase(dataDir);
    expect(await dedup(db, { source: "telegram:123" }).firstSeen(10_000)).toBe(false);
    db.close();
  });

  it("forgets ids once the redelivery window has passed", async () => {
    const db = openDatabase(dataDir);
    let now = Date.parse("2025-06-01T12:00:00Z");
    const seen = dedup(db, {
      source: "telegram:123",
      windowMs: 24 * 3_600_000,
      now: () => now,
    });
    await seen.firstSeen(1);
    now += 23 * 3_600_000;
    await seen.firstSeen(2);
    expect(await seen.prune()).toBe(0);
    now += 2 * 3_600_000;
    expect(await seen.prune()).toBe(1);
    expect(await seen.firstSeen(2)).toBe(false);
    db.close();
  });
});
