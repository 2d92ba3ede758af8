import { sql } from "kysely";
import { compiler, DB_NOW_MS, runnerOf, type Sql, type Step, txFor } from "../query.ts";
import type { PgDb, Queryable } from "./db.ts";

async function exec(client: Queryable, { kind, query }: Step): Promise<unknown> {
  const result = await client.query(query.sql, [...query.parameters]);
  if (kind === "run") return result.rowCount ?? 0;
  return kind === "all" ? result.rows : result.rows[0];
}

/**
 * The query runner over the PostgreSQL pool (see Sql): a query on any of the pool's clients, a
 * transaction's on one client, each step awaited in turn.
 */
export const postgresSql = (db: PgDb): Sql => runnerOf(db, postgresRunner);

function postgresRunner(db: PgDb): Sql {
  const tx = txFor("postgres");
  const q = compiler("postgres");
  return {
    dialect: "postgres",
    q,
    raw: (statement) => ({ compile: () => statement.compile(q) }),
    clock: () => sql.raw<number>(DB_NOW_MS),
    all: async (query) => exec(db, { kind: "all", query: query.compile() }) as never,
    first: async (query) => exec(db, { kind: "first", query: query.compile() }) as never,
    run: async (query) => exec(db, { kind: "run", query: query.compile() }) as Promise<number>,
    transaction: (work) =>
      db.tx(async (client) => {
        const body = work(tx);
        let next = body.next();
        while (!next.done) next = body.next(await exec(client, next.value));
        return next.value;
      }),
  };
}
