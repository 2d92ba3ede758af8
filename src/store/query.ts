import {
  type Compilable,
  type CompiledQuery,
  DummyDriver,
  Kysely,
  PostgresAdapter,
  PostgresIntrospector,
  PostgresQueryCompiler,
  type RawBuilder,
  sql as raw,
  SqliteAdapter,
  SqliteIntrospector,
  SqliteQueryCompiler,
} from "kysely";
import type { Tables } from "./tables.ts";

/**
 * The database's clock in epoch milliseconds, for what several hosts must agree on (leases,
 * claims). clock_timestamp(): the time now, not when the transaction began.
 */
export const DB_NOW_MS = "(extract(epoch FROM clock_timestamp()) * 1000)::bigint";

/**
 * A store written once for both databases (issue 35): its queries are built with Kysely's typed
 * builder (`q`), compiled for the store's dialect, and run here, on SQLite synchronously through
 * the store's own handle and prepared statements, on PostgreSQL through the pool.
 *
 * Why not Kysely's own drivers: its SQLite driver is asynchronous, so a transaction spanning
 * awaits on the one SQLite connection would take in any statement another store runs meanwhile.
 * Here a transaction is a generator of queries: on SQLite it runs to its end inside one
 * better-sqlite3 transaction, with nothing in between; on PostgreSQL each step awaits its query
 * on the transaction's client. The same code, the same results; the hot paths keep SQLite's
 * prepared statements (a primary-key read: 1.4 µs prepared by hand, 10.5 µs through Kysely's
 * driver with statements kept).
 */
export interface Sql {
  readonly dialect: "sqlite" | "postgres";
  /** The builder. Its queries are run with the methods below, never executed by Kysely itself. */
  readonly q: Kysely<Tables>;
  /**
   * Now, for what instances must agree on (leases, claims): the database's clock on PostgreSQL,
   * where instances on several hosts share it; `now` on SQLite, whose processes share one host.
   */
  clock(now: number): RawBuilder<number>;
  /** A raw statement (`sql\`…\`` from kysely) made runnable with the methods below. */
  raw<R>(statement: RawBuilder<R>): Compilable<R>;
  all<R>(query: Compilable<R>): Promise<R[]>;
  first<R>(query: Compilable<R>): Promise<R | undefined>;
  /** Runs a write; resolves to the rows it changed. */
  run(query: Compilable<unknown>): Promise<number>;
  /**
   * Runs `work`'s queries in one transaction: committed when it returns, rolled back if it
   * throws. On SQLite, `immediate` takes the write lock at the start (a read then a write).
   */
  transaction<T>(work: (tx: Tx) => Work<T>, options?: { immediate?: boolean }): Promise<T>;
}

/** One query a transaction asks to have run, and how its result is wanted. */
export interface Step {
  readonly kind: "all" | "first" | "run";
  readonly query: CompiledQuery;
}

/** A transaction's body: it yields its queries (with `yield*`) and returns its result. */
export type Work<T> = Generator<Step, T, unknown>;

/** The queries inside a transaction: `const row = yield* tx.first(query)`. */
export interface Tx {
  readonly dialect: Sql["dialect"];
  all<R>(query: Compilable<R>): Work<R[]>;
  first<R>(query: Compilable<R>): Work<R | undefined>;
  run(query: Compilable<unknown>): Work<number>;
}

function* step<T>(kind: Step["kind"], query: Compilable<unknown>): Work<T> {
  return (yield { kind, query: query.compile() }) as T;
}

export function txFor(dialect: Sql["dialect"]): Tx {
  return {
    dialect,
    all: <R>(query: Compilable<R>) => step<R[]>("all", query),
    first: <R>(query: Compilable<R>) => step<R | undefined>("first", query),
    run: (query) => step<number>("run", query),
  };
}

/** A builder that only compiles: a query run by mistake through Kysely itself does nothing. */
export function compiler(dialect: Sql["dialect"]): Kysely<Tables> {
  const sqlite = dialect === "sqlite";
  return new Kysely<Tables>({
    dialect: {
      createAdapter: () => (sqlite ? new SqliteAdapter() : new PostgresAdapter()),
      createDriver: () => new DummyDriver(),
      createIntrospector: (db) =>
        sqlite ? new SqliteIntrospector(db) : new PostgresIntrospector(db),
      createQueryCompiler: () => (sqlite ? new SqliteQueryCompiler() : new PostgresQueryCompiler()),
    },
  });
}

/** One runner per connection (its statements kept once), whichever store asks for it. */
const runners = new WeakMap<object, Sql>();

export function runnerOf<H extends object>(handle: H, make: (handle: H) => Sql): Sql {
  let runner = runners.get(handle);
  if (runner === undefined) {
    runner = make(handle);
    runners.set(handle, runner);
  }
  return runner;
}

/**
 * Runs a transaction's body with no transaction around it, each query on its own in turn: where
 * one dialect needs the transaction and the other does not (on PostgreSQL a BEGIN and a COMMIT
 * are two more round trips), the body is written once and run either way.
 */
export async function unbound<T>(sql: Sql, work: (tx: Tx) => Work<T>): Promise<T> {
  const body = work(txFor(sql.dialect));
  let next = body.next();
  while (!next.done) {
    const { kind, query } = next.value;
    const compiled = { compile: () => query };
    next = body.next(
      kind === "all"
        ? await sql.all(compiled)
        : kind === "first"
          ? await sql.first(compiled)
          : await sql.run(compiled),
    );
  }
  return next.value;
}

/** PostgreSQL: `column = ANY(values)`, one parameter whatever the number of values. */
export const anyOf = <T>(values: readonly T[], type: "bigint" | "text") =>
  raw<T>`ANY(${values}::${raw.raw(type)}[])`;

/**
 * A store built once per query layer, for whoever asks for it (a feature's own store over the
 * bot's store: `alertStoresOf(store)`, `gateStoreOf(store)`).
 */
export function storeOver<T>(make: (sql: Sql) => T): (store: { sql: Sql }) => T {
  const built = new WeakMap<Sql, T>();
  return ({ sql }) => {
    let made = built.get(sql);
    if (made === undefined) {
      made = make(sql);
      built.set(sql, made);
    }
    return made;
  };
}
