/**
 * Issue 36's insights, through the service on each database with the simulator over loopback:
 * who counts as a member, the 5-person floor, private members, the batch aggregates, the
 * background reads, the overlap, the export, and the page's one-time links and sessions.
 */
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { toChecksumAddress } from "../src/api/validate.ts";
import type { Platform } from "../src/core/platform.ts";
import { readSome } from "../src/insights/background.ts";
import { BATCH, LAST_PURCHASE_DAYS } from "../src/insights/reads.ts";
import { InsightsService, LINK_TTL_MS, SESSION_TTL_MS } from "../src/insights/service.ts";
import { INSIGHT_MIGRATIONS } from "../src/insights/store.ts";
import type { Community } from "../src/insights/types.ts";
import { silentLogger } from "../src/log.ts";
import type { Store } from "../src/store/types.ts";
import { type ClientSetup, startClient } from "./helpers.ts";
import { backends } from "./store/backends.ts";

let client: ClientSetup;
/** Wallets the simulator knows: owners of its busiest collection. */
let known: string[] = [];
/** The simulator's busiest collection (all of `known` own it). */
let busiest = "";

beforeAll(async () => {
  client = await startClient();
  const top = await client.api.collections.top("METRIC_SALES_VOLUME", "DURATION_30_DAYS", {
    limit: 1,
  });
  const contract = top.collections[0]?.contractAddress ?? "";
  busiest = contract.toLowerCase();
  known = (await client.api.collections.ownersList(contract, { limit: 40 })).owner.map((o) =>
    o.address.toLowerCase(),
  );
  expect(known.length).toBeGreaterThanOrEqual(20);
});
afterAll(() => client?.close());

const guild: Community = { platform: "discord", id: "g1", channelId: "c1", title: "Apes" };

/** A gate service that admits whom a test says (the gates feature has its own tests). */
function fakeGates(admits: string[]) {
  const gate = {
    id: 1,
    platform: "discord" as Platform,
    chatId: "g1",
    target: { platform: "discord" as const, guildId: "g1", roleId: "r1", roleName: "Holders" },
    criteria: [{ kind: "holds" as const, chain: "ethereum", contract: busiest, min: 1 }],
    createdBy: "u0",
    createdAt: 0,
  };
  return {
    admitted: async () => [{ gate, number: 1, userIds: admits }],
    list: async () => [gate],
    log: async () => [],
    describe: () => "holds at least 1 of the busiest collection on Ethereum",
  };
}

for (const backend of backends) {
  describe(`insights on ${backend.name}`, () => {
    let store: Store;
    let close: () => Promise<void>;
    let clock = Date.UTC(2026, 10, 28, 12);
    let insideGroup = true;
    let admits: string[] = [];
    let service: InsightsService;

    beforeAll(async () => {
      const opened = await backend.open();
      store = opened.store;
      close = opened.close;
      await store.sql.migrate({
        "insights/001-insights": INSIGHT_MIGRATIONS["001-insights"] as never,
      });
      service = new InsightsService({
        sql: store.sql,
        chains: [client.config.chains[0] as never].filter(Boolean).length
          ? client.config.chains
          : [],
        apis: new Map([["ethereum", client.api]]),
        names: () => undefined,
        gates: () => fakeGates(admits) as never,
        isMember: () => insideGroup,
        baseUrl: () => "https://bot.example",
        now: () => clock,
        logger: silentLogger(),
      });
    });
    afterAll(() => close?.());

    async function prove(userId: string, address: string, platform = "discord") {
      await store.wallets.addProved({
        platform,
        userId,
        address,
        chain: "ethereum",
        label: "",
        message: "m",
        signature: "0x",
        provedAt: clock,
      });
    }

    /** Person u<i> proves the i-th known wallet from the server. */
    async function join(i: number) {
      await prove(`u${i}`, known[i] as string);
      await service.noteProof({ platform: "discord", userId: `u${i}`, place: "g1", name: `P${i}` });
    }

    it("a proof from a server makes a member; none from a DM; a Telegram group only when Telegram says they are in it", async () => {
      await prove("u1", known[0] as string);
      await service.noteProof({ platform: "discord", userId: "u1", place: "g1", name: "Ana" });
      await service.noteProof({ platform: "discord", userId: "u9", name: "nowhere" });
      insideGroup = false;
      await prove("t1", known[1] as string, "telegram");
      await service.noteProof({ platform: "telegram", userId: "t1", place: "-100", name: "Tom" });
      expect(await service.people({ platform: "telegram", id: "-100" }, "ethereum")).toEqual([]);
      insideGroup = true;
      await service.noteProof({ platform: "telegram", userId: "t1", place: "-100", name: "Tom" });
      const telegram = await service.people({ platform: "telegram", id: "-100" }, "ethereum");
      expect(telegram.map((p) => p.name)).toEqual(["Tom"]);
      const people = await service.people(guild, "ethereum");
      expect(people.map((p) => [p.userId, p.name])).toEqual([["u1", "Ana"]]);
      expect(people[0]?.wallets).toEqual([known[0]]);
    });

    it("below 5 members nothing is aggregated; at 5, behaviors add up over the wallets and gate counts follow the floor", async () => {
      for (let i = 2; i <= 4; i++) await join(i);
      const few = await service.view(guild, "ethereum");
      expect(few.members).toBe(4);
      expect(few.belowFloor).toBe(true);
      expect(few.behaviors).toEqual([]);
      expect(few.spend).toEqual([]);
      // A gate admits a fifth person who proved elsewhere: a member too.
      await prove("u5", known[5] as string);
      await prove("u5", known[6] as string);
      admits = ["u5", "u1"];
      clock += 61_000;
      const view = await service.view(guild, "ethereum");
      expect(view.members).toBe(5);
      expect(view.wallets).toBe(6);
      expect(view.belowFloor).toBe(false);
      const total = view.behaviors.reduce((sum, row) => sum + (row.wallets ?? 0), 0);
      expect(total).toBeLessThanOrEqual(6);
      // Fewer than 5 wallets in a category: withheld, share and count alike.
      for (const row of view.behaviors)
        if (row.wallets === undefined) expect(row.share).toBeUndefined();
      expect(view.gates).toEqual([expect.objectContaining({ number: 1, admits: undefined })]);
      expect(view.lastPurchase.map((row) => row.withinDays)).toEqual([...LAST_PURCHASE_DAYS]);
      // The gate's collection is the community's: its owners' shares stand beside the members'.
      expect(view.collection).toMatchObject({ address: busiest, source: "gate" });
      expect(view.behaviors.some((row) => row.collectionShare !== undefined)).toBe(true);
      expect(BATCH).toBe(500);
    });

    it("the background reads read each wallet once a day; spend quartiles, holdings per person and the overlap follow", async () => {
      for (let i = 7; i <= 12; i++) await join(i);
      clock += 61_000;
      const before = await service.view(guild, "ethereum");
      expect(before.progress).toMatchObject({ read: 0, total: 12 });
      const signal = new AbortController().signal;
      expect(await readSome(service, 5, signal)).toBe(5);
      expect(await readSome(service, 100, signal)).toBe(7);
      expect(await readSome(service, 100, signal)).toBe(0);
      clock += 61_000;
      const view = await service.view(guild, "ethereum");
      expect(view.progress).toMatchObject({ read: 12, total: 12 });
      const volume = view.spend.find((row) => row.figure === "volume");
      expect(volume?.people).toBe(11);
      expect(volume?.median).toBeGreaterThanOrEqual(volume?.q1 ?? Number.POSITIVE_INFINITY);
      expect(volume?.q3).toBeGreaterThanOrEqual(volume?.median ?? Number.POSITIVE_INFINITY);
      // All of them own the busiest collection: each person counted once (u5 has two wallets).
      const contract = busiest;
      expect(view.held.find((row) => row.address === contract)?.people).toBe(11);
      const overlap = await service.overlap(guild, "ethereum", contract);
      expect(overlap.holders).toBe(11);
      // Behaviors among the holders beside all members': every one of them holds it here.
      expect(overlap.behaviors.length).toBe(
        new Set(overlap.behaviors.map((row) => row.behavior)).size,
      );
      for (const row of overlap.behaviors) expect(row.share).toBeCloseTo(row.overall);
      // A day later they are read again.
      clock += 24 * 3_600_000 + 1;
      expect(await readSome(service, 100, signal)).toBe(12);
    });

    it("a name with a NUL, markup and a formula is kept without the NUL and exported as text", async () => {
      await prove("u13", known[13] as string);
      await service.noteProof({
        platform: "discord",
        userId: "u13",
        place: "g1",
        name: '=HYPERLINK("http://x")\u0000<b>Eve</b>',
      });
      const [eve] = (await service.people(guild, "ethereum")).filter((p) => p.userId === "u13");
      expect(eve?.name).toBe('=HYPERLINK("http://x")<b>Eve</b>');
      clock += 61_000;
      const { csv } = await service.membersCsv(guild, "ethereum");
      expect(csv).toContain(`"'=HYPERLINK(""http://x"")<b>Eve</b>"`);
      expect(csv).not.toContain("\u0000");
      await store.wallets.remove("discord", "u13", "all");
      clock += 61_000;
    });

    it("a failed write of 'asked for' (a full disk) costs no answer", async () => {
      const want = service.store.want;
      service.store.want = () => Promise.reject(new Error("SQLITE_FULL: database or disk is full"));
      try {
        clock += 11 * 60_000;
        expect((await service.view(guild, "ethereum")).members).toBe(11);
      } finally {
        service.store.want = want;
      }
    });

    it("a private member counts in totals and is never listed or exported", async () => {
      await store.sql.migrate({});
      await service.store.setPrivate("discord", "u2", true, clock);
      clock += 61_000;
      const view = await service.view(guild, "ethereum");
      expect(view.privateMembers).toBe(1);
      expect(view.members).toBe(11);
      const page = await service.members(guild, "ethereum", { pageSize: 100 });
      expect(page.total).toBe(10);
      expect(page.rows.map((row) => row.userId)).not.toContain("u2");
      const { csv, rows } = await service.membersCsv(guild, "ethereum");
      expect(rows).toBe(10);
      expect(csv).not.toContain(known[2] as string);
      expect(csv.toLowerCase()).toContain(known[3] as string);
      expect(csv.split("\r\n")[0]).toBe(
        "user id,name,wallets,behavior,volume (ETH),purchases,average price (ETH),collections held,gates passed,member since",
      );
      // Searching by a wallet fragment finds its person; sorting by volume orders them.
      const found = await service.members(guild, "ethereum", {
        search: (known[3] as string).slice(2, 12),
      });
      expect(found.rows.map((row) => row.userId)).toEqual(["u3"]);
      // Checksummed where people read them.
      expect(found.rows[0]?.wallets).toEqual([toChecksumAddress(known[3] as string)]);
      const sorted = await service.members(guild, "ethereum", {
        sort: "volume",
        descending: true,
        pageSize: 100,
      });
      const volumes = sorted.rows.map((row) => row.volume ?? -1);
      expect(volumes).toEqual([...volumes].sort((a, b) => b - a));
      await service.store.setPrivate("discord", "u2", false, clock);
    });

    it("a /dashboard link opens one session, once, within 10 minutes; the session lasts an hour", async () => {
      const link = await service.links.create(guild, "u1", "ethereum");
      const token = link.url.split("/dashboard/")[1] as string;
      expect(link.url.startsWith("https://bot.example/dashboard/")).toBe(true);
      const opened = await service.links.open(token);
      expect(opened?.session).toMatchObject({ community: guild, userId: "u1", chain: "ethereum" });
      expect(await service.links.open(token)).toBeUndefined();
      expect(await service.links.session(opened?.id as string)).toMatchObject({ userId: "u1" });
      expect(await service.links.session(token)).toBeUndefined();
      const late = await service.links.create(guild, "u1", "ethereum");
      clock += LINK_TTL_MS + 1;
      expect(await service.links.open(late.url.split("/dashboard/")[1] as string)).toBeUndefined();
      clock += SESSION_TTL_MS;
      expect(await service.links.session(opened?.id as string)).toBeUndefined();
    });
  });
}
