import type { Kysely } from "kysely";
import type { Platform } from "../core/command.ts";
import { type Sql, storeOver } from "../store/query.ts";
import { chainsOf } from "../store/rows-wallet.ts";
import type { Tables } from "../store/tables.ts";
import type { Community, DashboardSession } from "./types.ts";

/** The feature's own tables (its migrations below make them, on either database). */
export type InsightTables = {
  /** People who proved a wallet in a community (a Discord server, a Telegram group). */
  insight_members: {
    platform: string;
    place: string;
    user_id: string;
    name: string | null;
    since: number;
    seen_at: number;
  };
  /** People who keep their wallets out of member tables and exports (`/wallets private`). */
  insight_private: { platform: string; user_id: string; since: number };
  /** A community's own collection per chain (`/insights collection`). */
  insight_settings: {
    platform: string;
    place: string;
    chain: string;
    collection: string;
    set_by: string;
    set_at: number;
  };
  /** Communities whose insights were asked for lately: the background reads serve these. */
  insight_wanted: { platform: string; place: string; chain: string; asked_at: number };
  /** What was read of one wallet on one chain (kept a day): behavior, spend and holdings. */
  insight_wallets: {
    chain: string;
    address: string;
    read_at: number;
    behavior: string | null;
    volume: number | null;
    purchases: number | null;
    collections: number | null;
    /** JSON [[address, name], …] of the collections held (spam excluded), at most HELD_MAX. */
    held: string;
  };
  /** One snapshot a day per community and chain: the aggregates, for the 30-day trend. */
  insight_snapshots: {
    platform: string;
    place: string;
    chain: string;
    day: string;
    taken_at: number;
    members: number;
    wallets: number;
    /** JSON of the aggregates (Aggregates). */
    data: string;
  };
  /** /dashboard's one-time links (the token's SHA-256 only) and the sessions they opened. */
  insight_links: {
    hash: string;
    kind: "link" | "session";
    platform: string;
    place: string;
    channel: string;
    title: string | null;
    chain: string;
    user_id: string;
    expires_at: number;
    used_at: number | null;
  };
};

type Db = Kysely<Tables & InsightTables>;

export { INSIGHT_MIGRATIONS } from "./migrations.ts";

/** Collections kept per wallet: enough for the top held among members. */
export const HELD_MAX = 200;

/** A member as stored: who, their name, since when. */
export interface StoredMember {
  userId: string;
  name: string | undefined;
  since: number;
}

/** What was read of one wallet (a row of insight_wallets). */
export interface WalletRead {
  address: string;
  readAt: number;
  behavior: string | undefined;
  volume: number | undefined;
  purchases: number | undefined;
  collections: number | undefined;
  held: [string, string][];
}

const num = (value: number | string | null): number | undefined =>
  value === null ? undefined : Number(value);

/** The insights' rows, on the bot's query layer (either database). */
export class InsightStore {
  private readonly q: Db;
  constructor(private readonly sql: Sql) {
    this.q = sql.q.withTables<InsightTables>();
  }

  /** Records (or renames) a member of a community: at a proof made from it. */
  async addMember(
    platform: Platform,
    place: string,
    userId: string,
    name: string | undefined,
    at: number,
  ): Promise<void> {
    await this.sql.run(
      this.q
        .insertInto("insight_members")
        .values({ platform, place, user_id: userId, name: name ?? null, since: at, seen_at: at })
        .onConflict((c) =>
          c.columns(["platform", "place", "user_id"]).doUpdateSet((row) => ({
            seen_at: row.ref("excluded.seen_at"),
            name: row.fn.coalesce("excluded.name", "insight_members.name"),
          })),
        ),
    );
  }

  async members(platform: Platform, place: string): Promise<StoredMember[]> {
    const rows = await this.sql.all(
      this.q
        .selectFrom("insight_members")
        .select(["user_id", "name", "since"])
        .where("platform", "=", platform)
        .where("place", "=", place),
    );
    return rows.map((row) => ({
      userId: row.user_id,
      name: row.name ?? undefined,
      since: Number(row.since),
    }));
  }

  /**
   * People's proved wallets that count on `chain`, latest first: an EOA's proof holds on every
   * chain, a contract wallet's (or an older proof's) on the chains proved on (issue 37).
   */
  async provedWallets(platform: Platform, userIds: readonly string[], chain?: string) {
    const out = new Map<string, { address: string; provedAt: number }[]>();
    for (let i = 0; i < userIds.length; i += 500) {
      const rows = await this.sql.all(
        this.q
          .selectFrom("wallets")
          .select(["user_id", "address", "proved_at", "kind", "chain", "chains"])
          .where("platform", "=", platform)
          .where("user_id", "in", userIds.slice(i, i + 500))
          .where("proved_at", "is not", null)
          .orderBy("proved_at", "desc"),
      );
      for (const row of rows) {
        if (chain !== undefined && row.kind !== "eoa" && !chainsOf(row).includes(chain)) continue;
        const own = out.get(row.user_id) ?? [];
        own.push({ address: row.address, provedAt: Number(row.proved_at) });
        out.set(row.user_id, own);
      }
    }
    return out;
  }

  /** The community's members who keep their wallets private. */
  async privateOf(platform: Platform, userIds: readonly string[]): Promise<Set<string>> {
    const out = new Set<string>();
    for (let i = 0; i < userIds.length; i += 500) {
      const rows = await this.sql.all(
        this.q
          .selectFrom("insight_private")
          .select("user_id")
          .where("platform", "=", platform)
          .where("user_id", "in", userIds.slice(i, i + 500)),
      );
      for (const row of rows) out.add(row.user_id);
    }
    return out;
  }

  async isPrivate(platform: Platform, userId: string): Promise<boolean> {
    const row = await this.sql.first(
      this.q
        .selectFrom("insight_private")
        .select("since")
        .where("platform", "=", platform)
        .where("user_id", "=", userId),
    );
    return row !== undefined;
  }

  async setPrivate(platform: Platform, userId: string, keep: boolean, at: number): Promise<void> {
    if (keep)
      await this.sql.run(
        this.q
          .insertInto("insight_private")
          .values({ platform, user_id: userId, since: at })
          .onConflict((c) => c.columns(["platform", "user_id"]).doNothing()),
      );
    else
      await this.sql.run(
        this.q
          .deleteFrom("insight_private")
          .where("platform", "=", platform)
          .where("user_id", "=", userId),
      );
  }

  async collection(platform: Platform, place: string, chain: string): Promise<string | undefined> {
    const row = await this.sql.first(
      this.q
        .selectFrom("insight_settings")
        .select("collection")
        .where("platform", "=", platform)
        .where("place", "=", place)
        .where("chain", "=", chain),
    );
    return row?.collection;
  }

  async setCollection(
    platform: Platform,
    place: string,
    chain: string,
    collection: string | undefined,
    by: string,
    at: number,
  ): Promise<void> {
    const where = this.q
      .deleteFrom("insight_settings")
      .where("platform", "=", platform)
      .where("place", "=", place)
      .where("chain", "=", chain);
    if (collection === undefined) {
      await this.sql.run(where);
      return;
    }
    await this.sql.run(
      this.q
        .insertInto("insight_settings")
        .values({ platform, place, chain, collection, set_by: by, set_at: at })
        .onConflict((c) =>
          c.columns(["platform", "place", "chain"]).doUpdateSet((row) => ({
            collection: row.ref("excluded.collection"),
            set_by: row.ref("excluded.set_by"),
            set_at: row.ref("excluded.set_at"),
          })),
        ),
    );
  }

  /** The community's insights were asked for: its wallets are read in the background. */
  async want(platform: Platform, place: string, chain: string, at: number): Promise<void> {
    await this.sql.run(
      this.q
        .insertInto("insight_wanted")
        .values({ platform, place, chain, asked_at: at })
        .onConflict((c) =>
          c
            .columns(["platform", "place", "chain"])
            .doUpdateSet((row) => ({ asked_at: row.ref("excluded.asked_at") })),
        ),
    );
  }

  /** Communities asked for since `since`, the most recent first. */
  async wanted(since: number): Promise<{ platform: Platform; place: string; chain: string }[]> {
    const rows = await this.sql.all(
      this.q
        .selectFrom("insight_wanted")
        .select(["platform", "place", "chain"])
        .where("asked_at", ">=", since)
        .orderBy("asked_at", "desc"),
    );
    return rows.map((row) => ({ ...row, platform: row.platform as Platform }));
  }

  /** What is known of these wallets on a chain, read at or after `since`. */
  async walletReads(
    chain: string,
    addresses: readonly string[],
    since: number,
  ): Promise<Map<string, WalletRead>> {
    const out = new Map<string, WalletRead>();
    // In slices: SQLite takes at most 32,766 parameters a statement.
    for (let i = 0; i < addresses.length; i += 500) {
      const slice = addresses.slice(i, i + 500);
      const rows = await this.sql.all(
        this.q
          .selectFrom("insight_wallets")
          .selectAll()
          .where("chain", "=", chain)
          .where("address", "in", slice)
          .where("read_at", ">=", since),
      );
      for (const row of rows)
        out.set(row.address, {
          address: row.address,
          readAt: Number(row.read_at),
          behavior: row.behavior ?? undefined,
          volume: num(row.volume),
          purchases: num(row.purchases),
          collections: num(row.collections),
          held: JSON.parse(row.held) as [string, string][],
        });
    }
    return out;
  }

  /** Which of these wallets were read at or after `since` (their addresses only). */
  async freshAddresses(
    chain: string,
    addresses: readonly string[],
    since: number,
  ): Promise<Set<string>> {
    const rows = await this.sql.all(
      this.q
        .selectFrom("insight_wallets")
        .select("address")
        .where("chain", "=", chain)
        .where("address", "in", addresses)
        .where("read_at", ">=", since),
    );
    return new Set(rows.map((row) => row.address));
  }

  async putWalletRead(chain: string, read: WalletRead): Promise<void> {
    const values = {
      chain,
      address: read.address,
      read_at: read.readAt,
      behavior: read.behavior ?? null,
      volume: read.volume ?? null,
      purchases: read.purchases ?? null,
      collections: read.collections ?? null,
      held: JSON.stringify(read.held.slice(0, HELD_MAX)),
    };
    await this.sql.run(
      this.q
        .insertInto("insight_wallets")
        .values(values)
        .onConflict((c) =>
          c.columns(["chain", "address"]).doUpdateSet({
            read_at: values.read_at,
            behavior: values.behavior,
            volume: values.volume,
            purchases: values.purchases,
            collections: values.collections,
            held: values.held,
          }),
        ),
    );
  }

  async putSnapshot(
    community: Pick<Community, "platform" | "id">,
    chain: string,
    day: string,
    at: number,
    members: number,
    wallets: number,
    data: string,
  ): Promise<void> {
    const { platform, id: place } = community;
    await this.sql.run(
      this.q
        .insertInto("insight_snapshots")
        .values({ platform, place, chain, day, taken_at: at, members, wallets, data })
        .onConflict((c) =>
          c
            .columns(["platform", "place", "chain", "day"])
            .doUpdateSet({ taken_at: at, members, wallets, data }),
        ),
    );
  }

  /** The community's snapshots from `fromDay` on, oldest first. */
  async snapshots(
    community: Pick<Community, "platform" | "id">,
    chain: string,
    fromDay: string,
  ): Promise<{ day: string; takenAt: number; members: number; wallets: number; data: string }[]> {
    const rows = await this.sql.all(
      this.q
        .selectFrom("insight_snapshots")
        .select(["day", "taken_at", "members", "wallets", "data"])
        .where("platform", "=", community.platform)
        .where("place", "=", community.id)
        .where("chain", "=", chain)
        .where("day", ">=", fromDay)
        .orderBy("day", "asc"),
    );
    return rows.map((row) => ({
      day: row.day,
      takenAt: Number(row.taken_at),
      members: Number(row.members),
      wallets: Number(row.wallets),
      data: row.data,
    }));
  }

  /** Stores a /dashboard link or session under its secret's hash. */
  async putLink(hash: string, kind: "link" | "session", session: DashboardSession): Promise<void> {
    const { community } = session;
    await this.sql.run(
      this.q.insertInto("insight_links").values({
        hash,
        kind,
        platform: community.platform,
        place: community.id,
        channel: community.channelId,
        title: community.title ?? null,
        chain: session.chain,
        user_id: session.userId,
        expires_at: session.expiresAt,
        used_at: null,
      }),
    );
  }

  /**
   * Uses a one-time link: marks it used if it was live and unused (one statement, so two openings
   * at once cannot both use it); its session when it was.
   */
  async useLink(hash: string, at: number): Promise<DashboardSession | undefined> {
    const used = await this.sql.run(
      this.q
        .updateTable("insight_links")
        .set({ used_at: at })
        .where("hash", "=", hash)
        .where("kind", "=", "link")
        .where("used_at", "is", null)
        .where("expires_at", ">", at),
    );
    if (used !== 1) return undefined;
    return this.findLink(hash, "link", Number.NEGATIVE_INFINITY);
  }

  async findLink(
    hash: string,
    kind: "link" | "session",
    liveAt: number,
  ): Promise<DashboardSession | undefined> {
    const row = await this.sql.first(
      this.q
        .selectFrom("insight_links")
        .selectAll()
        .where("hash", "=", hash)
        .where("kind", "=", kind),
    );
    if (!row || (Number.isFinite(liveAt) && Number(row.expires_at) <= liveAt)) return undefined;
    return {
      community: {
        platform: row.platform as Platform,
        id: row.place,
        channelId: row.channel,
        ...(row.title === null ? {} : { title: row.title }),
      },
      chain: row.chain,
      userId: row.user_id,
      expiresAt: Number(row.expires_at),
    };
  }

  /** Drops expired links and sessions, and wallet reads older than `readBefore`. */
  async prune(at: number, readBefore: number): Promise<number> {
    const links = await this.sql.run(
      this.q.deleteFrom("insight_links").where("expires_at", "<", at),
    );
    const reads = await this.sql.run(
      this.q.deleteFrom("insight_wallets").where("read_at", "<", readBefore),
    );
    return links + reads;
  }

  /** A Telegram group became a supergroup: its members, settings and snapshots follow it. */
  async moveChat(platform: Platform, from: string, to: string): Promise<void> {
    for (const table of [
      "insight_members",
      "insight_settings",
      "insight_wanted",
      "insight_snapshots",
      "insight_links",
    ] as const)
      await this.sql.run(
        this.q
          .updateTable(table)
          .set({ place: to })
          .where("platform", "=", platform)
          .where("place", "=", from),
      );
  }
}

export const insightStoreOf = storeOver((sql) => new InsightStore(sql));
