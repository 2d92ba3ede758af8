/**
 * What the page reads from its calls: src/insights/types.ts's shapes as JSON carries them (an
 * undefined field is absent). Kept apart from that file, whose imports reach into the bot; routes.ts
 * checks at compile time that the contract's values fit these.
 */

export interface WireView {
  community: { platform: string; id: string; channelId: string; title?: string | undefined };
  chain: { id: string; name: string; currency: string };
  simulated?: string | undefined;
  members: number;
  wallets: number;
  privateMembers: number;
  belowFloor: boolean;
  gates: WireGateCount[];
  collection?: { address: string; name: string; source: "set" | "gate" } | undefined;
  behaviors: {
    behavior: string;
    wallets?: number | undefined;
    share?: number | undefined;
    collectionShare?: number | undefined;
  }[];
  spend: {
    figure: "volume" | "avgPrice" | "purchases" | "collections";
    people: number;
    q1?: number | undefined;
    median?: number | undefined;
    q3?: number | undefined;
  }[];
  lastPurchase: { withinDays: number; share?: number | undefined }[];
  held: { address: string; name: string; people: number }[];
  progress: { read: number; total: number; etaMs?: number | undefined };
  trend: { day: string; members: number; wallets: number; shares: Record<string, number> }[];
  takenAt: number;
}

export interface WireGateCount {
  number: number;
  gives: string;
  criteria: string;
  admits?: number | undefined;
}

export interface WireMember {
  userId: string;
  name?: string | undefined;
  wallets: string[];
  behavior?: string | undefined;
  volume?: number | undefined;
  purchases?: number | undefined;
  avgPrice?: number | undefined;
  collections?: number | undefined;
  gates: number[];
  since: number;
}

export interface WireMemberPage {
  rows: WireMember[];
  total: number;
  page: number;
  pageSize: number;
}

export interface WireGate extends WireGateCount {
  log: {
    at: number;
    userId: string;
    name?: string | undefined;
    action: string;
    reason: string;
  }[];
}

export interface WireSection {
  title: string;
  lines: string[];
}

/** The member table's sortable columns (MemberSort). */
export type WireSort = "name" | "since" | "volume" | "purchases" | "avgPrice" | "collections";
