import { afterEach, describe, expect, it } from "vitest";
import { digestStoreOf } from "../../src/digests/store.ts";
import {
  migratePg,
  openPostgresStore,
  POSTGRES_MIGRATIONS,
  type PostgresStore,
} from "../../src/store/postgres/index.ts";
import { POSTGRES_URL, postgresAvailable } from "../services.ts";
import { dropSchema, freshSchemaName } from "./backends.ts";

/** Several instances on one PostgreSQL schema: what they must agree on. */
describe.runIf(await postgresAvailable())("postgres store shared by instances", () => {
  const opened: PostgresStore[] = [];
  const schemas: string[] = [];
  afterEach(async () => {
    for (const store of opened.splice(0)) await store.close();
    for (const schema of schemas.splice(0)) await dropSchema(schema);
  });
  const schema = () => {
    const name = freshSchemaName();
    schemas.push(name);
    return name;
  };
  const open = async (name: string) => {
    const store = await openPostgresStore({ url: POSTGRES_URL, schema: name, max: 3 });
    opened.push(store);
    return store;
  };

  it("instances starting together on a fresh schema migrate it once", async () => {
    const name = schema();
    const stores = await Promise.all([open(name), open(name), open(name)]);
    const { rows } = await stores[0].pg.query<{ version: number }>(
      "SELECT version FROM schema_migrations ORDER BY version",
    );
    // Each once (a second run would have failed its CREATE TABLE, and so that store's open).
    expect(rows.map((row) => row.version)).toEqual(
      Array.from({ length: POSTGRES_MIGRATIONS }, (_, i) => i + 1),
    );
    // A later start finds nothing left to do.
    expect(await migratePg(stores[1].pg)).toBe(0);
    // Each can use the tables.
    for (const store of stores) expect(await store.kv.get("x")).toBeUndefined();
  });

  it("the poller lease is timed by the database clock, whatever clocks the instances have", async () => {
    const name = schema();
    const [a, b] = await Promise.all([open(name), open(name)]);
    const ttl = 1_500;
    expect(await a.leases.acquire("poller", "A", ttl, Date.now())).toBe("A");
    // B's clock is an hour ahead: it still does not see A's lease as expired.
    expect(await b.leases.acquire("poller", "B", ttl, Date.now() + 3_600_000)).toBe("A");
    // A stops renewing (it died): B takes over once the TTL has passed on the database's clock.
    const started = Date.now();
    let holder = "A";
    while (holder === "A" && Date.now() - started < 5_000) {
      await new Promise((resolve) => setTimeout(resolve, 100));
      holder = await b.leases.acquire("poller", "B", ttl, 0);
    }
    expect(holder).toBe("B");
    expect(Date.now() - started).toBeGreaterThanOrEqual(ttl - 300);
    // A comes back with a clock an hour behind: B holds it.
    expect(await a.leases.acquire("poller", "A", ttl, Date.now() - 3_600_000)).toBe("B");
  });

  it("a digest slot's claim is timed by the database clock, whatever clocks the instances have", async () => {
    const name = schema();
    const [a, b] = await Promise.all([open(name), open(name)]);
    const digest = await digestStoreOf(a).add(
      {
        platform: "telegram",
        chatId: "c1",
        chain: "ethereum",
        cadence: "daily",
        weekday: null,
        time: "09:00",
        zone: "UTC",
        metric: "volume",
        period: "1d",
        createdBy: "telegram:u1",
        createdAt: 0,
      },
      5,
    );
    if (digest === "full") throw new Error("full");
    const claim = (store: PostgresStore, holder: string, now: number, claimMs: number) =>
      digestStoreOf(store).claimRun({ digestId: digest.id, slot: 1, holder, now, claimMs });
    // A's clock is an hour behind: its 1.5 s claim still holds against B for 1.5 s.
    expect(await claim(a, "A", Date.now() - 3_600_000, 1_500)).toMatchObject({ claimedBy: "A" });
    expect(await claim(b, "B", Date.now(), 60_000)).toBeUndefined();
    // B's clock is an hour ahead: A's claim is not over for it either.
    expect(await claim(b, "B", Date.now() + 3_600_000, 60_000)).toBeUndefined();
    // A died: B takes the slot once 1.5 s have passed on the database's clock.
    const started = Date.now();
    let run = await claim(b, "B", 0, 60_000);
    while (!run && Date.now() - started < 5_000) {
      await new Promise((resolve) => setTimeout(resolve, 100));
      run = await claim(b, "B", 0, 60_000);
    }
    expect(run).toMatchObject({ claimedBy: "B" });
    expect(Date.now() - started).toBeGreaterThanOrEqual(1_000);
  });

  it("a button made on one instance works on another; an update id is first seen once across them", async () => {
    const name = schema();
    const [a, b] = await Promise.all([open(name), open(name)]);
    const [id] = await a.actions.putMany([
      {
        platform: "telegram",
        chatId: "c1",
        userId: "u1",
        action: { command: "c", action: "a", payload: { n: 1 } },
        expiresAt: Date.now() + 60_000,
      },
    ]);
    expect(await b.actions.get(id ?? "")).toMatchObject({ chatId: "c1", userId: "u1" });
    const offers = await Promise.all(
      Array.from({ length: 6 }, (_, i) => (i % 2 ? a : b).updates.firstSeen("telegram:1", 42, 1)),
    );
    expect(offers.filter(Boolean)).toHaveLength(1);
    expect(await a.updates.firstSeen("telegram:1", 42, 2)).toBe(false);
  });
});
