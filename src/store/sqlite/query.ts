import type Database from "better-sqlite3";
import { sql } from "kysely";
import { compiler, runnerOf, type Sql, type Step, txFor, type Work } from "../query.ts";

/** Prepared statements kept per connection, by SQL text (a store's queries repeat). */
const STATEMENTS_KEPT = 500;

/** SQLite binds no booleans: they are stored as 0 and 1, as the hand-written stores did. */
const bindable = (parameters: readonly unknown[]) =>
  parameters.map((value) => (typeof value === "boolean" ? Number(value) : value));

/**
 * The query runner over the store's one better-sqlite3 connection (see Sql): each query runs
 * synchronously on a statement prepared once, and a transaction runs its body to the end inside
 * one better-sqlite3 transaction, with no other store's statement in between.
 */
export const sqliteSql = (db: Database.Database): Sql => runnerOf(db, sqliteRunner);
// The runner keeps the handle's transaction and statements as they are when it is first asked
// for: the store asks after wrapping the handle to watch for a full disk (sqliteStore).

function sqliteRunner(db: Database.Database): Sql {
  const kept = new Map<string, Database.Statement<unknown[]>>();
  const prepared = (text: string) => {
    let statement = kept.get(text);
    if (statement === undefined) {
      statement = db.prepare(text);
      if (kept.size >= STATEMENTS_KEPT) kept.delete(kept.keys().next().value as string);
    } else kept.delete(text);
    // Newest use last: what is evicted is the statement least recently used.
    kept.set(text, statement);
    return statement;
  };
  const exec = ({ kind, query }: Step): unknown => {
    const statement = prepared(query.sql);
    const parameters = bindable(query.parameters);
    if (kind === "run" || !statement.reader) {
      const { changes } = statement.run(...parameters);
      return kind === "run" ? changes : kind === "all" ? [] : undefined;
    }
    return kind === "all" ? statement.all(...parameters) : statement.get(...parameters);
  };
  const tx = txFor("sqlite");
  const runWork = db.transaction(<T>(work: Work<T>): T => {
    let next = work.next();
    while (!next.done) next = work.next(exec(next.value));
    return next.value;
  });
  const q = compiler("sqlite");
  return {
    dialect: "sqlite",
    q,
    raw: (statement) => ({ compile: () => statement.compile(q) }),
    clock: (now) => sql<number>`${now}`,
    all: async (query) => exec({ kind: "all", query: query.compile() }) as never,
    first: async (query) => exec({ kind: "first", query: query.compile() }) as never,
    run: async (query) => exec({ kind: "run", query: query.compile() }) as number,
    async transaction(work, options) {
      const body = work(tx);
      return (options?.immediate ? runWork.immediate(body) : runWork(body)) as never;
    },
  };
}
