/**
 * An in-memory DashboardApi (src/insights/types.ts) for the managers' page's tests: two
 * communities with made-up but realistic members, gates and chat sections, one-time links and
 * sessions as the service keeps them. Deterministic: the same data every run.
 */
import { randomBytes } from "node:crypto";
import { getAddress } from "viem";
import type {
  ChatSection,
  Community,
  DashboardApi,
  DashboardSession,
  GateWithLog,
  InsightsChart,
  InsightsView,
  MemberQuery,
  MemberRow,
} from "../../src/insights/types.ts";

export const COMMUNITY_A: Community = {
  platform: "discord",
  id: "880011223344556677",
  channelId: "880011223344556680",
  title: "Moonbirds Parliament",
};

export const COMMUNITY_B: Community = {
  platform: "telegram",
  id: "-1002233445566",
  channelId: "-1002233445566",
  title: "Pixel Otters Club",
};

/** A member of community A every test can look for, by name or wallet. */
export const KNOWN = {
  name: "alice.eth",
  wallet: getAddress("0xa11ce0c3d5b1f2e8a9b7c6d5e4f3a2b1c0d9e8f7"),
};

/** Community B's own member: must never show under A's session. */
export const B_ONLY = {
  name: "otter_supreme",
  wallet: getAddress("0x0773e500000000000000000000000000000b0b0b"),
};

const DAY = 86_400_000;
const NOW = Date.UTC(2026, 10, 28, 14, 3);

/** A small deterministic generator (mulberry32). */
function generator(seed: number): () => number {
  let state = seed >>> 0;
  return () => {
    state = (state + 0x6d2b79f5) >>> 0;
    let t = state;
    t = Math.imul(t ^ (t >>> 15), t | 1);
    t ^= t + Math.imul(t ^ (t >>> 7), t | 61);
    return ((t ^ (t >>> 14)) >>> 0) / 4294967296;
  };
}

function address(random: () => number): string {
  let hex = "0x";
  for (let i = 0; i < 40; i++) hex += Math.floor(random() * 16).toString(16);
  return getAddress(hex);
}

const A_NAMES = [
  "alice.eth",
  "Bored Banker",
  "cryptokate",
  "DeFi Dan",
  "elena_nft",
  "frankie.base",
  "Gwei Wizard",
  "hodlhannah",
  "ivan🦉",
  "jpeg_jules",
  "Kai Mint",
  "lunar.lisa",
  "Mx. Marketplace",
  "nightowl",
  "oliver<b>bold</b>",
  "pixelpriya",
  "quentin.eth",
  "rarity_rob",
  "Sam Sweeps",
  "tokentara",
  "uma_on_chain",
  "Vik the Whale",
  "wen_moon",
  "xavier.eth",
  "yuki_collects",
  "zed0x",
  "Ana Floor",
  "ben_builds",
];

const BEHAVIORS = ["whale", "collector", "flipper", "newbie", "diamond hands"];

function membersOf(
  names: string[],
  seed: number,
  known: { name: string; wallet: string }[],
): MemberRow[] {
  const random = generator(seed);
  return names.map((name, index) => {
    const own = known.find((k) => k.name === name);
    const wallets = own ? [own.wallet] : [address(random)];
    if (random() < 0.25) wallets.push(address(random));
    // Three members' wallets are not read yet.
    const read = index % 10 !== 9;
    const purchases = read ? 1 + Math.floor(random() * 140) : undefined;
    const avgPrice = read ? Math.round((0.02 + random() ** 2 * 4) * 1e4) / 1e4 : undefined;
    const first = BEHAVIORS[Math.floor(random() * BEHAVIORS.length)] as string;
    const second = random() < 0.3 ? BEHAVIORS[Math.floor(random() * BEHAVIORS.length)] : undefined;
    return {
      userId: String(BigInt(seed) * 1_000_000_000_000n + 400_000_000_000n + BigInt(index * 7919)),
      // Two members whose platform gave no name.
      name: index === 12 || index === 23 ? undefined : name,
      wallets,
      behavior: read ? (second && second !== first ? `${first}, ${second}` : first) : undefined,
      volume:
        purchases !== undefined && avgPrice !== undefined
          ? Math.round(purchases * avgPrice * 1e4) / 1e4
          : undefined,
      purchases,
      avgPrice,
      collections: read ? 1 + Math.floor(random() * 60) : undefined,
      gates: [1, 2, 3].filter(() => random() < 0.45),
      since: NOW - Math.floor(random() * 120) * DAY - Math.floor(random() * DAY),
    };
  });
}

interface CommunityData {
  community: Community;
  members: MemberRow[];
  /** Counted, never listed. */
  privateMembers: number;
  gates: GateWithLog[];
  sections: ChatSection[];
  charts: Set<InsightsChart>;
  simulated: string | undefined;
}

function dataOfA(): CommunityData {
  const members = membersOf(A_NAMES, 1, [KNOWN]);
  const log = (seed: number, n: number) => {
    const random = generator(seed);
    return Array.from({ length: n }, (_, i) => {
      const member = members[Math.floor(random() * members.length)] as MemberRow;
      const admitted = random() < 0.7;
      return {
        at: NOW - i * 3 * 3_600_000 - Math.floor(random() * 3_600_000),
        userId: member.userId,
        name: member.name,
        action: admitted ? "role given" : "role taken",
        reason: admitted ? "holds 1 or more Moonbirds" : "no longer holds a Moonbird",
      };
    });
  };
  return {
    community: COMMUNITY_A,
    members,
    privateMembers: 3,
    simulated: "made up by the bot's embedded simulator: no real wallet is shown",
    charts: new Set(["behaviors", "held", "trend"]),
    gates: [
      {
        number: 1,
        gives: "role @Holders",
        criteria: "holds 1 or more of Moonbirds (0x23581767a106ae21c074b2276d25e5c3e136a68b)",
        admits: 21,
        log: log(11, 9),
      },
      {
        number: 2,
        gives: "role @Whales",
        criteria: "holds 10 or more of Moonbirds, or is a whale",
        admits: 6,
        log: log(12, 4),
      },
      {
        number: 3,
        gives: "role @Collectors",
        criteria: "holds NFTs of 25 or more collections",
        admits: undefined,
        log: [],
      },
    ],
    sections: [
      {
        title: "Alerts",
        lines: [
          "#alerts: sales of Moonbirds over 5 ETH",
          "#alerts: new whales buying Moonbirds",
          "#mint-watch: mints of Oddities",
        ],
      },
      { title: "Digests", lines: ["#daily: a daily digest of Moonbirds at 09:00 UTC"] },
      { title: "Watches", lines: [] },
    ],
  };
}

function dataOfB(): CommunityData {
  const names = ["otter_supreme", "riverrun", "kelp.eth", "Sea Otter Sue", "pebble", "splash"];
  return {
    community: COMMUNITY_B,
    members: membersOf(names, 2, [B_ONLY]),
    privateMembers: 1,
    simulated: undefined,
    charts: new Set(),
    gates: [
      {
        number: 1,
        gives: "entry to the group",
        criteria: "holds 1 or more of Pixel Otters",
        admits: 6,
        log: [],
      },
    ],
    sections: [{ title: "Alerts", lines: [] }],
  };
}

/** A made-up InsightsView from a community's members. */
function viewOf(data: CommunityData): InsightsView {
  const members = data.members.length + data.privateMembers;
  const wallets = data.members.reduce((sum, m) => sum + m.wallets.length, 0) + data.privateMembers;
  const belowFloor = members < 5;
  const behaviorShares: [string, number, number][] = [
    ["BEHAVIOR_COLLECTOR", 34.2, 28.1],
    ["BEHAVIOR_WHALE", 18.4, 6.3],
    ["BEHAVIOR_FLIPPER", 15.8, 24.9],
    ["BEHAVIOR_DIAMOND_HANDS", 13.1, 11.7],
    ["BEHAVIOR_NEWBIE", 9.2, 17.5],
    ["BEHAVIOR_BOT", 2.6, 4.1],
  ];
  const trendRandom = generator(7);
  return {
    community: data.community,
    chain: { id: "ethereum", name: "Ethereum", currency: "ETH" },
    simulated: data.simulated,
    members,
    wallets,
    privateMembers: data.privateMembers,
    belowFloor,
    gates: data.gates.map(({ log: _log, ...gate }) => gate),
    collection: {
      address: "0x23581767a106ae21c074b2276d25e5c3e136a68b",
      name: data.community === COMMUNITY_A ? "Moonbirds" : "Pixel Otters",
      source: data.community === COMMUNITY_A ? "set" : "gate",
    },
    behaviors: behaviorShares.map(([behavior, share, collectionShare]) => {
      const count = Math.round((share / 100) * wallets);
      return count < 5
        ? { behavior, wallets: undefined, share: undefined, collectionShare }
        : { behavior, wallets: count, share, collectionShare };
    }),
    spend: [
      { figure: "volume", people: 26, q1: 1.8, median: 7.45, q3: 31.2 },
      { figure: "avgPrice", people: 26, q1: 0.061, median: 0.34, q3: 1.27 },
      { figure: "purchases", people: 26, q1: 9, median: 38, q3: 97 },
      { figure: "collections", people: 26, q1: 6, median: 17, q3: 41 },
    ],
    lastPurchase: [
      { withinDays: 7, share: 23.5 },
      { withinDays: 30, share: 52.9 },
      { withinDays: 90, share: 76.4 },
    ],
    held: [
      ["Moonbirds", 27],
      ["Moonbirds Oddities", 19],
      ["Pudgy Penguins", 11],
      ["Azuki", 9],
      ["Art Blocks Curated", 8],
      ["Chromie Squiggle", 6],
      ["Doodles", 5],
    ].map(([name, people], i) => ({
      address: getAddress(`0x${(i + 1).toString(16).padStart(2, "0").repeat(20)}`),
      name: name as string,
      people: people as number,
    })),
    progress: { read: 27, total: wallets, etaMs: 7 * 60_000 },
    trend: Array.from({ length: 30 }, (_, i) => ({
      day: new Date(NOW - (29 - i) * DAY).toISOString().slice(0, 10),
      members: Math.max(1, members - Math.floor((29 - i) / 3)),
      wallets: Math.max(1, wallets - Math.floor((29 - i) / 3)),
      shares: {
        BEHAVIOR_COLLECTOR: 30 + trendRandom() * 6,
        BEHAVIOR_WHALE: 16 + trendRandom() * 4,
      },
    })),
    takenAt: NOW,
  };
}

/** The value compared when sorting by `sort` (undefined sorts last either way). */
function sortValue(
  row: MemberRow,
  sort: NonNullable<MemberQuery["sort"]>,
): string | number | undefined {
  return sort === "name" ? row.name?.toLowerCase() : row[sort];
}

function csvField(value: string | number | undefined): string {
  const text = value === undefined ? "" : String(value);
  return /[",\n\r]/.test(text) ? `"${text.replace(/"/g, '""')}"` : text;
}

export const CSV_HEADER =
  "user_id,name,wallets,behavior,volume,purchases,avg_price,collections,gates,since";

export interface FakeDashboardApi extends DashboardApi {
  /** A new one-time link to a community's page (valid 10 minutes, once). */
  link(community: Community, options?: { expired?: boolean }): string;
  /** The next call of this name throws, with the link's token or the session's id in its message. */
  failNext: Set<"open" | "view" | "members">;
  /** Ends every session (as their hour running out does). */
  endSessions(): void;
  /** The charts drawn: tiny PNGs, or real ones from the bot's chart drawing (slower). */
  chartMode: "tiny" | "drawn";
  calls: string[];
}

/** A 1×1 transparent PNG. */
const TINY_PNG = Buffer.from(
  "iVBORw0KGgoAAAANSUhEUgAAAAEAAAABCAQAAAC1HAwCAAAAC0lEQVR42mNkYAAAAAYAAjCB0C8AAAAASUVORK5CYII=",
  "base64",
);

export function fakeDashboardApi(): FakeDashboardApi {
  const data = new Map([
    [COMMUNITY_A.id, dataOfA()],
    [COMMUNITY_B.id, dataOfB()],
  ]);
  const links = new Map<string, { community: Community; expiresAt: number; used: boolean }>();
  const sessions = new Map<string, DashboardSession>();
  const idOf = new WeakMap<DashboardSession, string>();
  const calls: string[] = [];
  const failNext = new Set<"open" | "view" | "members">();
  const of = (session: DashboardSession): CommunityData => {
    const found = data.get(session.community.id);
    if (!found) throw new Error("no such community");
    return found;
  };
  const fail = (what: "open" | "view" | "members", secret: string) => {
    if (!failNext.delete(what)) return;
    throw new Error(`database is down (while reading for ${secret})`);
  };
  const drawn = new Map<string, Promise<Buffer>>();

  const api: FakeDashboardApi = {
    calls,
    failNext,
    chartMode: "tiny",
    link(community, options = {}) {
      const token = randomBytes(24).toString("base64url");
      links.set(token, {
        community,
        expiresAt: Date.now() + (options.expired ? -1 : 600_000),
        used: false,
      });
      return token;
    },
    endSessions() {
      sessions.clear();
    },
    async open(token) {
      calls.push("open");
      fail("open", token);
      const link = links.get(token);
      if (!link || link.used || link.expiresAt <= Date.now()) return undefined;
      link.used = true;
      const id = randomBytes(24).toString("base64url");
      const session: DashboardSession = {
        community: link.community,
        chain: "ethereum",
        userId: "700000000000000001",
        expiresAt: Date.now() + 3_600_000,
      };
      sessions.set(id, session);
      idOf.set(session, id);
      return { id, session };
    },
    async session(id) {
      calls.push("session");
      const session = sessions.get(id);
      return session && session.expiresAt > Date.now() ? session : undefined;
    },
    async view(session) {
      calls.push("view");
      fail("view", idOf.get(session) ?? "");
      return viewOf(of(session));
    },
    async members(session, query) {
      calls.push(`members ${JSON.stringify(query)}`);
      fail("members", idOf.get(session) ?? "");
      const search = query.search?.toLowerCase();
      let rows = of(session).members.filter(
        (row) =>
          !search ||
          (row.name?.toLowerCase().includes(search) ?? false) ||
          row.wallets.some((w) => w.toLowerCase().includes(search)),
      );
      const sort = query.sort ?? "name";
      const direction = query.descending ? -1 : 1;
      rows = [...rows].sort((a, b) => {
        const x = sortValue(a, sort);
        const y = sortValue(b, sort);
        if (x === undefined || y === undefined) return x === y ? 0 : x === undefined ? 1 : -1;
        const order = typeof x === "string" ? x.localeCompare(String(y)) : x - Number(y);
        return order === 0 ? a.userId.localeCompare(b.userId) : order * direction;
      });
      const page = query.page ?? 1;
      const pageSize = query.pageSize ?? 25;
      return {
        rows: rows.slice((page - 1) * pageSize, page * pageSize),
        total: rows.length,
        page,
        pageSize,
      };
    },
    async membersCsv(session) {
      calls.push("membersCsv");
      const { community, members } = of(session);
      const lines = members.map((row) =>
        [
          row.userId,
          row.name,
          row.wallets.join(" "),
          row.behavior,
          row.volume,
          row.purchases,
          row.avgPrice,
          row.collections,
          row.gates.join(" "),
          new Date(row.since).toISOString(),
        ]
          .map(csvField)
          .join(","),
      );
      const slug = (community.title ?? community.id).toLowerCase().replace(/[^a-z0-9]+/g, "-");
      return {
        name: `members-${slug}-2026-11-28.csv`,
        csv: `${[CSV_HEADER, ...lines].join("\r\n")}\r\n`,
      };
    },
    async gates(session) {
      calls.push("gates");
      return of(session).gates;
    },
    async sections(session) {
      calls.push("sections");
      return of(session).sections;
    },
    async chart(session, chart) {
      calls.push(`chart ${chart}`);
      const found = of(session);
      if (!found.charts.has(chart)) return undefined;
      if (api.chartMode === "tiny") return TINY_PNG;
      const key = `${found.community.id}:${chart}`;
      let png = drawn.get(key);
      if (!png) {
        png = draw(viewOf(found), chart);
        drawn.set(key, png);
      }
      return png;
    },
  };
  return api;
}

/** Real charts from the bot's own drawing (Chart.js on the canvas), for the screenshots. */
async function draw(view: InsightsView, chart: InsightsChart): Promise<Buffer> {
  const { audienceChart, ownersHistoryChart, rankingChart } = await import(
    "../../src/render/chart-drawing.ts"
  );
  if (chart === "behaviors")
    return audienceChart(
      "Behaviors of the members' wallets",
      view.behaviors
        .filter((row) => row.share !== undefined)
        .map((row) => {
          const difference = (row.share ?? 0) - (row.collectionShare ?? 0);
          return {
            label: row.behavior
              .replace(/^BEHAVIOR_/, "")
              .toLowerCase()
              .replace(/_/g, " "),
            share: row.share ?? 0,
            change: `${difference >= 0 ? "+" : "-"}${Math.abs(difference).toFixed(1)} pts`,
          };
        }),
    );
  if (chart === "held")
    return rankingChart(
      "Collections most held by the members",
      "Members",
      view.held.map((row) => ({ label: row.name, value: row.people })),
    );
  return ownersHistoryChart(
    "Members, the last 30 days",
    view.trend.map((point) => ({ timestamp: point.day, count: String(point.members) })),
  );
}
