/**
 * Insights (issue 36): what a community's managers learn of the members who proved a wallet there.
 * The contract between the feature's service, its commands (/insights, /dashboard, /wallets
 * private) and the manager's page on the HTTP host.
 *
 * Privacy rules, enforced by the service (never by a caller):
 * - only managers reach any of it (the commands check; the page's session was made for one);
 * - a person who chose `/wallets private` is counted in aggregates, never listed or exported;
 * - no aggregate is shown for fewer than MIN_PEOPLE people: the figure is `undefined` then.
 */
import type { Platform } from "../core/command.ts";
import type { ChatSection } from "../kernel/feature.ts";

/** No aggregate of fewer people than this is shown (a single member cannot be singled out). */
export const MIN_PEOPLE = 5;

/**
 * A community: a Discord server (guild id) or a Telegram group (its chat id), or the console's
 * chat. `channelId` is where the manager asked (Discord: a channel of the server), whose
 * subscriptions, digests and watches the page shows.
 */
export interface Community {
  platform: Platform;
  /** The server's or group's id: members, gates and insights are the community's. */
  id: string;
  /** The channel asked in (the same as `id` on Telegram and the console). */
  channelId: string;
  /** Shown on the page ("Insights of <title>"), when the platform gave it. */
  title?: string | undefined;
}

/** One behavior category among the members, beside the community's collection's owners. */
export interface BehaviorShare {
  /** The service's value, e.g. "BEHAVIOR_WHALE" (unknown values kept as they come). */
  behavior: string;
  /** Members' wallets in it; undefined when fewer than MIN_PEOPLE (then `share` is too). */
  wallets: number | undefined;
  /** Percent of the members' wallets with a behavior read (0..100). */
  share: number | undefined;
  /** Percent of the community collection's owners (endpoint 2), when a collection is known. */
  collectionShare?: number | undefined;
}

/** Quartiles of one spend figure over the people whose figures have been read. */
export interface SpendFigure {
  figure: "volume" | "avgPrice" | "purchases" | "collections";
  /** People it is computed over (undefined figures below MIN_PEOPLE). */
  people: number;
  q1: number | undefined;
  median: number | undefined;
  q3: number | undefined;
}

/** A collection many members hold, counted per person (a person with 3 wallets in it counts 1). */
export interface HeldCollection {
  address: string;
  name: string;
  people: number;
}

/** How far the background reads of the members' wallets have got. */
export interface ReadProgress {
  /** Wallets whose holdings, behavior and spend are read and younger than a day. */
  read: number;
  total: number;
  /** Estimated ms until all are read at the current pace; undefined when done or unknown. */
  etaMs: number | undefined;
}

export interface TrendPoint {
  /** The snapshot's day, "2026-11-28" (UTC). */
  day: string;
  members: number;
  wallets: number;
  /** Percent of members' wallets per behavior that day (only categories shown that day). */
  shares: Record<string, number>;
}

export interface GateCount {
  /** The gate's number in /gate list. */
  number: number;
  /** What it gives: "role @Holders", "entry to the group". */
  gives: string;
  /** Its criteria in words. */
  criteria: string;
  /** Members it admits now; undefined when fewer than MIN_PEOPLE. */
  admits: number | undefined;
}

/** Everything /insights shows of a community on one chain, and what the page's overview shows. */
export interface InsightsView {
  community: Community;
  chain: { id: string; name: string; currency: string };
  /** The embedded simulator's mark when the data (and the console's members) are made up. */
  simulated: string | undefined;
  /** Members: people with a proved wallet here, private ones included. */
  members: number;
  /** Their proved wallets (what the figures below are read over). */
  wallets: number;
  /** Members who keep their wallets private (counted here, never listed). */
  privateMembers: number;
  /** True when members < MIN_PEOPLE: every aggregate below is withheld. */
  belowFloor: boolean;
  gates: GateCount[];
  /** The community's own collection: set with /insights collection, else a gate's `holds`. */
  collection?: { address: string; name: string; source: "set" | "gate" } | undefined;
  /** Behavior breakdown of the members' wallets (endpoint 1, in batches of 500), largest first. */
  behaviors: BehaviorShare[];
  spend: SpendFigure[];
  /** Percent of members' wallets that bought within each number of days (endpoint 5's filter). */
  lastPurchase: { withinDays: number; share: number | undefined }[];
  /** The collections most held among the members (up to 10), from the background reads. */
  held: HeldCollection[];
  progress: ReadProgress;
  /** The last 30 daily snapshots, oldest first. */
  trend: TrendPoint[];
  /** When the aggregates were read (epoch ms). */
  takenAt: number;
}

/** One member as a manager's table and export show them. */
export interface MemberRow {
  userId: string;
  /** The name the platform gave when they proved, when it gave one. */
  name: string | undefined;
  /** Checksummed; empty for a private member (who is then not listed at all). */
  wallets: string[];
  /** Behaviors of their wallets, e.g. "whale" or "whale, newbie"; undefined until read. */
  behavior: string | undefined;
  /** Sum over their wallets of purchase volume, in the chain's currency. */
  volume: number | undefined;
  purchases: number | undefined;
  avgPrice: number | undefined;
  /** Distinct collections held over their wallets. */
  collections: number | undefined;
  /** The numbers of the gates they pass now. */
  gates: number[];
  /** When they first proved a wallet here (epoch ms). */
  since: number;
}

export type MemberSort = "name" | "since" | "volume" | "purchases" | "avgPrice" | "collections";

export interface MemberQuery {
  sort?: MemberSort | undefined;
  descending?: boolean | undefined;
  /** 1-based. */
  page?: number | undefined;
  /** 1..100, default 25. */
  pageSize?: number | undefined;
  /** Part of a wallet address or of a name, case-insensitive. */
  search?: string | undefined;
}

export interface MemberPage {
  rows: MemberRow[];
  /** Rows matching the search (private members never among them). */
  total: number;
  page: number;
  pageSize: number;
}

/** A manager's page session, made from a one-time link; bound to one person and one community. */
export interface DashboardSession {
  community: Community;
  chain: string;
  userId: string;
  expiresAt: number;
}

/** A section of the page that another feature gives (subscriptions, digests, watches). */
export type { ChatSection };

/** A gate with its recent log, for the page. */
export interface GateWithLog extends GateCount {
  /** Newest first, at most 100. */
  log: { at: number; userId: string; name: string | undefined; action: string; reason: string }[];
}

/** The charts the page shows, drawn as PNG by the bot's chart painter. */
export type InsightsChart = "behaviors" | "held" | "trend";

/** What the page's routes need of the service. Every read takes the session, never a chat id. */
export interface DashboardApi {
  /**
   * Uses a one-time link (10 minutes, once): a new session's secret id (for the cookie) and the
   * session; undefined for an unknown, used or expired link.
   */
  open(token: string): Promise<{ id: string; session: DashboardSession } | undefined>;
  /** The live session behind a cookie's id; undefined for an unknown or expired one. */
  session(id: string): Promise<DashboardSession | undefined>;
  view(session: DashboardSession, signal?: AbortSignal): Promise<InsightsView>;
  members(session: DashboardSession, query: MemberQuery): Promise<MemberPage>;
  membersCsv(session: DashboardSession): Promise<{ name: string; csv: string }>;
  gates(session: DashboardSession): Promise<GateWithLog[]>;
  sections(session: DashboardSession): Promise<ChatSection[]>;
  chart(session: DashboardSession, chart: InsightsChart): Promise<Uint8Array | undefined>;
}
