import type { ApiClient } from "../api/client.ts";
import { toChecksumAddress } from "../api/validate.ts";
import type { Chain } from "../chains.ts";
import type { CommandServices, Platform } from "../core/command.ts";
import { short as shortAddress } from "../core/format.ts";
import type { KnownCollections } from "../core/known-collections.ts";
import type { Logger } from "../log.ts";
import type { Sql } from "../store/query.ts";
import type { DelegationStore } from "../store/types.ts";
import { sliceChars, stripControlCharacters } from "../strings.ts";
import { withDelegated } from "./delegated.ts";
import {
  type Admitted,
  behaviorShares,
  dayOf,
  floored,
  type Known,
  type Person,
  type PersonFigures,
  peopleShares,
  personFigures,
  spendFigures,
  topHeld,
  trendOf,
} from "./figures.ts";
import { memberCsv, memberPage, rowsOf } from "./members.ts";
import { type Aggregates, readAggregates } from "./reads.ts";
import { DashboardLinks } from "./sessions.ts";
import { type InsightStore, insightStoreOf } from "./store.ts";
import {
  type Community,
  type GateCount,
  type GateWithLog,
  type InsightsView,
  type MemberPage,
  type MemberQuery,
  type MemberRow,
  MIN_PEOPLE,
} from "./types.ts";

/** A wallet's read is kept this long (the "cached for a day"). */
export const READ_TTL_MS = 24 * 3_600_000;
/** Communities whose insights were asked within this long have their wallets read. */
export const WANTED_FOR_MS = 7 * 24 * 3_600_000;
export { LINK_TTL_MS, SESSION_TTL_MS } from "./sessions.ts";

/** How long a community's people and figures are kept in memory between reads of the page. */
const PEOPLE_TTL_MS = 60_000;

/** The console's simulated community (`npm start` on the simulator): never stored. */
export interface SimulatedCommunity {
  /** The simulator's mark for made-up data. */
  mark: string;
  platform: Platform;
  place: string;
  /** Its members with their wallets, made up from the simulator's wallets. */
  people(chain: Chain, signal?: AbortSignal): Promise<Person[]>;
}

export interface InsightsDeps {
  sql: Sql;
  chains: readonly Chain[];
  apis: ReadonlyMap<string, ApiClient>;
  /** The chain's collection index: collections' names. */
  names: (chain: string) => KnownCollections | undefined;
  /** The gates' service, when the bot has gates. */
  gates: () => Gates | undefined;
  /** Telegram: whether a person is in a group (a claimed place is checked). */
  isMember: (
    platform: Platform,
    place: string,
    userId: string,
  ) => Promise<boolean | undefined> | boolean | undefined;
  simulated?: SimulatedCommunity | undefined;
  /** Delegations to the people's proved wallets (issue 37); absent: none are read. */
  delegations?: DelegationStore["ofPeople"] | undefined;
  /** The manager's page's address. */
  baseUrl: () => string;
  now: () => number;
  logger: Logger;
}

/** Up to 10 people by name (their id where the platform gave none). */
const namesOf = (people: readonly Person[]) => people.map((p) => p.name ?? p.userId).slice(0, 10);

/** A member row with their wallets as people read them (EIP-55). */
const checksummed = (row: MemberRow): MemberRow => ({
  ...row,
  wallets: row.wallets.map((w) => toChecksumAddress(w)),
});

/** The gates' service as the kernel declares it (a feature reaches another only so). */
type Gates = NonNullable<CommandServices["gates"]>;

export class InsightsService {
  readonly store: InsightStore;
  private readonly known = new Map<string, Known>();
  private readonly lastWanted = new Map<string, number>();
  /** Communities whose wallets were all read, left alone until then (background.ts). */
  readonly idle = new Map<string, number>();
  private readonly reading = new Map<
    string,
    Promise<{ aggregates: Aggregates | undefined; takenAt: number; people: number }>
  >();
  /** Wallet reads per minute in the background (set by the job), for the answers' estimate. */
  pacePerMinute = 0;
  /** Upstream calls taken by the aggregates (daily snapshots) and by wallet reads, as they start. */
  aggregateCalls = 0;
  walletCalls = 0;
  /** Background rounds, and communities' snapshots in them, that failed (logged; in /healthz). */
  failures = 0;

  /** The manager's page's one-time links and sessions. */
  readonly links: DashboardLinks;

  readonly now: () => number;
  readonly logger: Logger;

  constructor(private readonly deps: InsightsDeps) {
    this.now = deps.now;
    this.logger = deps.logger;
    this.store = insightStoreOf({ sql: deps.sql });
    this.links = new DashboardLinks(this.store, deps.now, deps.baseUrl);
  }

  private chainOf(id: string): Chain {
    const chain = this.deps.chains.find((c) => c.id === id) ?? this.deps.chains[0];
    if (!chain) throw new Error("no chain is served");
    return chain;
  }

  api(chain: string): ApiClient {
    const api = this.deps.apis.get(chain);
    if (!api) throw new Error(`no data-service client for ${chain}`);
    return api;
  }

  isSimulated(community: Pick<Community, "platform" | "id">): boolean {
    const sim = this.deps.simulated;
    return sim !== undefined && sim.platform === community.platform && sim.place === community.id;
  }

  /**
   * A wallet was proved from a community (a Discord server, a Telegram group): the person is one
   * of its members. A Telegram group named by a button's payload is kept only if Telegram agrees.
   */
  async noteProof(origin: {
    platform: Platform;
    userId: string;
    place?: string | undefined;
    name?: string | undefined;
  }): Promise<void> {
    if (origin.place === undefined) return;
    if (origin.platform === "telegram") {
      const member = await this.deps.isMember(origin.platform, origin.place, origin.userId);
      if (member !== true) return;
    }
    await this.store.addMember(
      origin.platform,
      origin.place,
      origin.userId,
      // A name is the platform's free text: no control characters (a NUL breaks the charts and
      // the export), and not a page of it.
      sliceChars(stripControlCharacters(origin.name ?? ""), 100) || undefined,
      this.deps.now(),
    );
    this.forget({ platform: origin.platform, place: origin.place });
  }

  /**
   * The community's members: those who proved a wallet from it and those its gates admit, each
   * with their proved wallets; people without one are not members. The console's community is
   * the simulator's made-up one.
   */
  async people(community: Pick<Community, "platform" | "id">, chain: string): Promise<Person[]> {
    return (await this.roster(community, chain)).people;
  }

  /** The members, and the gates with whom each admits (read once for a view's every part). */
  private async roster(
    community: Pick<Community, "platform" | "id">,
    chain: string,
  ): Promise<{ people: Person[]; admitted: Admitted }> {
    if (this.isSimulated(community) && this.deps.simulated)
      return { people: await this.deps.simulated.people(this.chainOf(chain)), admitted: [] };
    const { platform, id } = community;
    const stored = await this.store.members(platform, id);
    const byId = new Map(stored.map((m) => [m.userId, m]));
    const admitted = (await this.deps.gates()?.admitted(platform, id)) ?? [];
    for (const gate of admitted)
      for (const userId of gate.userIds)
        if (!byId.has(userId)) byId.set(userId, { userId, name: undefined, since: Number.NaN });
    const wallets = await this.store.provedWallets(platform, [...byId.keys()], chain);
    const hidden = await this.store.privateOf(platform, [...byId.keys()]);
    const delegated = await this.deps.delegations?.(platform, [...wallets.keys()]);
    if (delegated) withDelegated(wallets, delegated, chain);
    const people: Person[] = [];
    for (const [userId, member] of byId) {
      const own = wallets.get(userId);
      if (!own || own.length === 0) continue;
      people.push({
        userId,
        name: member.name,
        since: Number.isNaN(member.since) ? (own[0]?.provedAt ?? 0) : member.since,
        // Lower-case as stored: checksummed only where shown (a page of the table, the export),
        // since checksumming 15,000 addresses at every read would stall the bot.
        wallets: own.map((w) => w.address.toLowerCase()),
        private: hidden.has(userId),
      });
    }
    return { people, admitted };
  }

  /** People and their figures, from what the background has read (kept a minute). */
  private async knownOf(community: Community, chain: string): Promise<Known> {
    const key = `${community.platform}:${community.id}:${chain}`;
    const at = this.deps.now();
    const kept = this.known.get(key);
    if (kept && at - kept.at < PEOPLE_TTL_MS) return kept;
    const { people, admitted } = await this.roster(community, chain);
    const wallets = [...new Set(people.flatMap((p) => p.wallets))];
    const figures = new Map<string, PersonFigures>();
    const names = new Map<string, string>();
    let read = 0;
    // In slices, so a community's reads (their holdings lists) are never all in memory at once.
    const slice = 2_000;
    for (let i = 0; i < people.length; i += slice) {
      const part = people.slice(i, i + slice);
      const reads = await this.store.walletReads(
        chain,
        part.flatMap((p) => p.wallets),
        at - READ_TTL_MS,
      );
      read += reads.size;
      for (const r of reads.values())
        for (const [address, name] of r.held)
          if (name && !names.has(address)) names.set(address, name);
      for (const person of part) figures.set(person.userId, personFigures(person.wallets, reads));
    }
    const known = { at, people, figures, wallets, read, names, admitted };
    this.known.set(key, known);
    if (this.known.size > 50) this.known.delete(this.known.keys().next().value as string);
    return known;
  }

  /** The community's collection on a chain: set by its managers, else the first gate's `holds`. */
  async collectionOf(
    community: Community,
    chain: string,
  ): Promise<InsightsView["collection"] | undefined> {
    const names = this.deps.names(chain);
    const set = await this.store.collection(community.platform, community.id, chain);
    if (set) return { address: set, name: names?.name(set) ?? shortAddress(set), source: "set" };
    const gates = (await this.deps.gates()?.list(community.platform, community.id)) ?? [];
    for (const gate of gates)
      for (const criterion of gate.criteria)
        if (criterion.kind === "holds" && (criterion.chain ?? this.deps.chains[0]?.id) === chain)
          return {
            address: criterion.contract,
            name:
              criterion.name || names?.name(criterion.contract) || shortAddress(criterion.contract),
            source: "gate",
          };
    return undefined;
  }

  /** Today's aggregates (endpoints 1, 2, 5 in batches of 500), kept as the day's snapshot. */
  async aggregates(
    community: Community,
    chain: string,
    signal?: AbortSignal,
  ): Promise<{ aggregates: Aggregates | undefined; takenAt: number; people: number }> {
    const day = dayOf(this.deps.now());
    const [today] = await this.store.snapshots(community, chain, day);
    const collection = await this.collectionOf(community, chain);
    // A collection set since the day's snapshot is compared at once: the snapshot is read anew.
    if (
      today &&
      (JSON.parse(today.data) as Aggregates).compared !== collection?.address.toLowerCase()
    )
      return this.readAggregatesNow(community, chain, day, collection?.address, signal);
    if (today)
      return {
        aggregates: JSON.parse(today.data) as Aggregates,
        takenAt: today.takenAt,
        people: today.members,
      };
    return this.readAggregatesNow(community, chain, day, collection?.address, signal);
  }

  /** One read of a community's aggregates at a time: a view and the job asking at once share it. */
  private readAggregatesNow(
    community: Community,
    chain: string,
    day: string,
    collection: string | undefined,
    signal: AbortSignal | undefined,
  ): Promise<{ aggregates: Aggregates | undefined; takenAt: number; people: number }> {
    const key = `${community.platform}:${community.id}:${chain}:${day}:${collection ?? ""}`;
    let reading = this.reading.get(key);
    if (!reading) {
      reading = this.readAggregatesOnce(community, chain, day, collection, signal).finally(() =>
        this.reading.delete(key),
      );
      this.reading.set(key, reading);
    }
    return reading;
  }

  private async readAggregatesOnce(
    community: Community,
    chain: string,
    day: string,
    collection: string | undefined,
    signal: AbortSignal | undefined,
  ): Promise<{ aggregates: Aggregates | undefined; takenAt: number; people: number }> {
    const people = await this.people(community, chain);
    if (people.length < MIN_PEOPLE)
      return { aggregates: undefined, takenAt: this.deps.now(), people: people.length };
    const wallets = [...new Set(people.flatMap((p) => p.wallets))];
    const aggregates = await readAggregates(this.api(chain), wallets, collection, signal);
    this.aggregateCalls += aggregates.calls;
    const at = this.deps.now();
    await this.store.putSnapshot(
      community,
      chain,
      day,
      at,
      people.length,
      wallets.length,
      JSON.stringify(aggregates),
    );
    return { aggregates, takenAt: at, people: people.length };
  }

  /** Everything /insights and the page's overview show. */
  async view(community: Community, chainId: string, signal?: AbortSignal): Promise<InsightsView> {
    const chain = this.chainOf(chainId);
    const at = this.deps.now();
    this.wanted(community, chain.id, at);
    const known = await this.knownOf(community, chain.id);
    const { people } = known;
    const belowFloor = people.length < MIN_PEOPLE;
    const { aggregates, takenAt } = belowFloor
      ? { aggregates: undefined, takenAt: at }
      : await this.aggregates(community, chain.id, signal);
    const collection = await this.collectionOf(community, chain.id);
    const names = this.deps.names(chain.id);
    const figures = [...known.figures.values()];
    const held = belowFloor
      ? []
      : topHeld(
          figures.map((f) => f.held),
          (address) => known.names.get(address) || names?.name(address) || shortAddress(address),
          10,
        );
    const remaining = known.wallets.length - known.read;
    const spendWallets = aggregates?.spend.wallets ?? 0;
    return {
      community,
      chain: { id: chain.id, name: chain.name, currency: chain.symbol },
      simulated: this.isSimulated(community) ? this.deps.simulated?.mark : undefined,
      members: people.length,
      wallets: known.wallets.length,
      privateMembers: people.filter((p) => p.private).length,
      belowFloor,
      gates: this.gateCounts(known),
      collection,
      behaviors: belowFloor ? [] : behaviorShares(aggregates),
      spend: belowFloor ? [] : spendFigures(figures),
      lastPurchase: (aggregates?.lastPurchase ?? []).map((row) => ({
        withinDays: row.withinDays,
        share: spendWallets >= MIN_PEOPLE ? (100 * row.wallets) / spendWallets : undefined,
      })),
      held,
      progress: {
        read: known.read,
        total: known.wallets.length,
        etaMs:
          remaining <= 0 || this.pacePerMinute <= 0
            ? undefined
            : Math.ceil((remaining / this.pacePerMinute) * 60_000),
      },
      trend: await this.trend(community, chain.id, at),
      takenAt,
    };
  }

  private gateCounts(known: Known): GateCount[] {
    const members = new Set(known.people.map((p) => p.userId));
    const gates = this.deps.gates();
    return known.admitted.map(({ gate, number, userIds }) => ({
      number,
      gives:
        gate.target.platform === "telegram"
          ? "entry to the group"
          : `role @${gate.target.roleName}`,
      criteria: gates?.describe(gate) ?? "",
      admits: floored(userIds.filter((id) => members.has(id)).length),
    }));
  }

  private async trend(community: Community, chain: string, at: number) {
    return trendOf(await this.store.snapshots(community, chain, dayOf(at - 29 * 86_400_000)));
  }

  /**
   * How many members hold a collection (from the background reads of their holdings) and which
   * of them are whales (named unless private); withheld below the floor.
   */
  async overlap(community: Community, chainId: string, collection: string) {
    const known = await this.knownOf(community, chainId);
    const address = collection.toLowerCase();
    const holders = known.people.filter((p) => known.figures.get(p.userId)?.held.has(address));
    const whales = holders.filter((p) =>
      known.figures.get(p.userId)?.behaviors.includes("BEHAVIOR_WHALE"),
    );
    return {
      members: known.people.length,
      belowFloor: known.people.length < MIN_PEOPLE,
      holders: floored(holders.length),
      whales: floored(whales.length),
      namedWhales: whales.length >= MIN_PEOPLE ? namesOf(whales.filter((p) => !p.private)) : [],
      progress: { read: known.read, total: known.wallets.length },
      // Each behavior's share of the holders beside its share of all members (per person).
      behaviors:
        holders.length >= MIN_PEOPLE ? peopleShares(holders, known.people, known.figures) : [],
    };
  }

  /** The member table: private members never in it; sorted, searched and paged. */
  async members(community: Community, chain: string, query: MemberQuery): Promise<MemberPage> {
    const page = memberPage(await this.memberRows(community, chain), query);
    return { ...page, rows: page.rows.map(checksummed) };
  }

  private async memberRows(community: Community, chain: string): Promise<MemberRow[]> {
    return rowsOf(await this.knownOf(community, chain));
  }

  /** The member export: the same rows as the table, every one, as CSV. */
  async membersCsv(
    community: Community,
    chainId: string,
  ): Promise<{ name: string; csv: string; rows: number }> {
    const chain = this.chainOf(chainId);
    const rows = (await this.memberRows(community, chain.id)).map(checksummed);
    const sim = this.isSimulated(community) ? "-simulated" : "";
    // The file's name has no date: the platforms' file path adds when it was made.
    return {
      name: `members${sim}-${chain.id}.csv`,
      csv: memberCsv(rows, chain.symbol),
      rows: rows.length,
    };
  }

  /** The community's gates with their latest log lines, names where known. */
  async gatesWithLog(community: Community, chain: string): Promise<GateWithLog[]> {
    const gates = this.deps.gates();
    if (!gates) return [];
    const known = await this.knownOf(community, chain);
    const names = new Map(known.people.map((p) => [p.userId, p.name]));
    const counts = this.gateCounts(known);
    return Promise.all(
      known.admitted.map(async ({ gate }, i) => ({
        ...(counts[i] as GateCount),
        log: (await gates.log(gate, 100)).map((entry) => ({
          at: entry.at,
          userId: entry.userId,
          name: names.get(entry.userId),
          action: entry.action,
          reason: entry.reason,
        })),
      })),
    );
  }

  /**
   * Marks the community's insights as asked for (the background reads serve it), once in ten
   * minutes: every view is asked for, but one write says it. A failed write (a full disk) costs
   * the reads' freshness, never the answer.
   */
  private wanted(community: Community, chain: string, at: number): void {
    const key = `${community.platform}:${community.id}:${chain}`;
    if (at - (this.lastWanted.get(key) ?? Number.NEGATIVE_INFINITY) < 10 * 60_000) return;
    this.lastWanted.set(key, at);
    this.store.want(community.platform, community.id, chain, at).catch((error: unknown) => {
      this.lastWanted.delete(key);
      this.logger.warn({ err: error }, "could not mark a community's insights as asked for");
    });
  }

  /** Forgets what is kept in memory; with a community, that its wallets were all read too. */
  forget(community?: { platform: string; place: string }): void {
    this.known.clear();
    if (!community) return;
    const prefix = `${community.platform}:${community.place}:`;
    for (const key of [...this.idle.keys()]) if (key.startsWith(prefix)) this.idle.delete(key);
  }
}
