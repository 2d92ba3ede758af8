import { type CommandContext, defineCommand } from "../src/core/command.ts";
import {
  behaviorLabel,
  formatNumber,
  formatPercent,
  fullAddress,
  relativeTime,
} from "../src/core/format.ts";
import { opt } from "../src/core/options.ts";
import type { Reply } from "../src/core/reply.ts";
import { UserError } from "../src/errors.ts";
import { insightSpecs } from "../src/insights/charts.ts";
import { communityOf, insightsOf } from "../src/insights/community.ts";
import { type InsightsView, MIN_PEOPLE } from "../src/insights/types.ts";

const ACTIONS = [
  { value: "show", name: "show", aliases: ["summary", "overview"] },
  { value: "spend", name: "spend", aliases: ["spending"] },
  { value: "held", name: "held", aliases: ["holdings", "hold"] },
  { value: "trend", name: "trend", aliases: ["trends", "history"] },
  { value: "overlap", name: "overlap", aliases: ["holders"] },
  { value: "collection", name: "collection", aliases: ["set"] },
  { value: "export", name: "export", aliases: ["csv"] },
] as const;

/** What a manager is told the figures are read from, and what members were told. */
const WHO = `Members are the people who proved a wallet (/verify) in this server or group, or whom its gates admit. No figure is shown for fewer than ${MIN_PEOPLE} people; people who chose /wallets private are counted but never listed or exported.`;

/** A difference of shares in percentage points: "+3 pts", "0 pts", "-1 pts". */
function pointsApart(difference: number): string {
  const rounded = Math.round(difference);
  return `${rounded > 0 ? "+" : ""}${rounded === 0 ? 0 : rounded} pts`;
}

const pct = (value: number | undefined) => (value === undefined ? "–" : formatPercent(value, 0));
const amount = (value: number | undefined) => (value === undefined ? "–" : formatNumber(value));

/** "holdings from 2,400 of 15,000 wallets so far, complete in about 6 minutes". */
function progressLine(view: InsightsView): string {
  const { read, total, etaMs } = view.progress;
  if (total === 0) return "";
  if (read >= total)
    return `Holdings, behavior and spend read for all ${total.toLocaleString("en-US")} wallets (kept a day).`;
  const eta =
    etaMs === undefined
      ? ""
      : `, complete in about ${Math.max(1, Math.round(etaMs / 60_000))} minute${etaMs < 90_000 ? "" : "s"}`;
  return `Holdings from ${read.toLocaleString("en-US")} of ${total.toLocaleString("en-US")} wallets so far${eta}.`;
}

function header(view: InsightsView, now: Date): string {
  const lines = [
    `${view.members.toLocaleString("en-US")} members with ${view.wallets.toLocaleString("en-US")} proved wallets on ${view.chain.name}${view.privateMembers > 0 ? ` (${view.privateMembers} keep their wallets private)` : ""}.`,
  ];
  for (const gate of view.gates)
    lines.push(
      `Gate ${gate.number} (${gate.gives}) admits ${gate.admits === undefined ? `fewer than ${MIN_PEOPLE}` : gate.admits.toLocaleString("en-US")}.`,
    );
  if (!view.belowFloor) lines.push(`Read ${relativeTime(new Date(view.takenAt), now)}.`);
  return lines.join("\n");
}

function footer(view: InsightsView): string {
  return [
    view.simulated
      ? `A simulated community: ${view.members} of the simulator's wallets as members.`
      : "",
    progressLine(view),
  ]
    .filter(Boolean)
    .join(" ");
}

function belowFloor(view: InsightsView, now: Date): Reply {
  return {
    title: "Insights",
    text: `${header(view, now)}\nInsights show once ${MIN_PEOPLE} members have proved a wallet here, so no one can be singled out. Members prove theirs with /verify in this ${view.community.platform === "telegram" ? "group" : "server"}.`,
    footer: footer(view),
    tone: "info",
  };
}

function overview(view: InsightsView, now: Date): Reply {
  const collection = view.collection?.name;
  const rows = view.behaviors.filter((row) => row.share !== undefined);
  const compare = rows
    .filter((row) => row.collectionShare !== undefined)
    .slice(0, 3)
    .map(
      (row) =>
        `${behaviorLabel(row.behavior)}: ${pct(row.share)} of your members' wallets, ${pct(row.collectionShare)} of ${collection}'s owners`,
    );
  return {
    title: "Insights: who your members are",
    text: [
      header(view, now),
      rows.length === 0
        ? `The data service knows no behavior of your members' ${view.wallets.toLocaleString("en-US")} wallets yet: a wallet gets one once it has traded NFTs.`
        : "",
      compare.length > 0 ? compare.join("\n") : "",
      view.collection
        ? ""
        : "Set your community's own collection with /insights collection <name> to compare.",
    ]
      .filter(Boolean)
      .join("\n\n"),
    table: {
      columns: [
        "behavior",
        "wallets",
        "members %",
        collection ? `${collection} %` : "collection %",
        "diff",
      ],
      rows: rows.map((row) => [
        behaviorLabel(row.behavior),
        (row.wallets ?? 0).toLocaleString("en-US"),
        pct(row.share),
        pct(row.collectionShare),
        row.share !== undefined && row.collectionShare !== undefined
          ? pointsApart(row.share - row.collectionShare)
          : "–",
      ]),
      align: ["left", "right", "right", "right", "right"],
    },
    chart: insightSpecs(view).behaviors,
    footer: footer(view),
    tone: "info",
  };
}

function spend(view: InsightsView, now: Date): Reply {
  const names: Record<string, string> = {
    volume: `volume (${view.chain.currency})`,
    avgPrice: `avg price (${view.chain.currency})`,
    purchases: "purchases",
    collections: "collections held",
  };
  return {
    title: "Insights: what your members spend",
    text: [
      header(view, now),
      `Per member, over their proved wallets: the middle half lies between the lower and upper quartile. From the ${view.spend[0]?.people ?? 0} members read so far.`,
      view.lastPurchase.length > 0
        ? `Bought an NFT within ${view.lastPurchase.map((row) => `${row.withinDays} days: ${pct(row.share)}`).join(", ")} of wallets.`
        : "",
    ]
      .filter(Boolean)
      .join("\n\n"),
    table: {
      columns: ["figure", "lower q", "median", "upper q"],
      rows: view.spend.map((row) => [
        names[row.figure] ?? row.figure,
        amount(row.q1),
        amount(row.median),
        amount(row.q3),
      ]),
      align: ["left", "right", "right", "right"],
    },
    chart: {
      kind: "ranking",
      subject: `insights-last-purchase:${view.community.platform}:${view.community.id}:${view.chain.id}`,
      title: `Members' wallets that bought lately${view.simulated ? ` (${view.simulated})` : ""}`,
      axis: "% of wallets",
      items: view.lastPurchase.map((row) => ({
        label: `within ${row.withinDays} days`,
        value: row.share === undefined ? undefined : row.share.toFixed(1),
      })),
    },
    footer: footer(view),
    tone: "info",
  };
}

function held(view: InsightsView, now: Date): Reply {
  return {
    title: "Insights: what else your members hold",
    text: `${header(view, now)}\n\nEach member counts once, however many of their wallets hold a collection; collections held by fewer than ${MIN_PEOPLE} members are left out.`,
    table: {
      columns: ["collection", "members", "address"],
      rows: view.held.map((row) => [
        row.name,
        row.people.toLocaleString("en-US"),
        fullAddress(row.address),
      ]),
      align: ["left", "right", "left"],
    },
    chart: insightSpecs(view).held,
    footer: footer(view),
    tone: "info",
  };
}

function trend(view: InsightsView, now: Date): Reply {
  const first = view.trend[0];
  const last = view.trend.at(-1);
  return {
    title: "Insights: the last 30 days",
    text: [
      header(view, now),
      first && last && first !== last
        ? `Members ${first.members.toLocaleString("en-US")} on ${first.day}, ${last.members.toLocaleString("en-US")} on ${last.day}.`
        : "The trend starts with today's snapshot: one is taken each day.",
    ].join("\n\n"),
    table: {
      columns: ["day", "members", "wallets"],
      rows: view.trend
        .slice(-10)
        .map((point) => [point.day, String(point.members), String(point.wallets)]),
      align: ["left", "right", "right"],
    },
    chart: insightSpecs(view).trend,
    footer: footer(view),
    tone: "info",
  };
}

export default defineCommand({
  name: "insights",
  description: "Who your community's proved members are: behavior, spend, holdings (managers)",
  help: `For the people who manage a Discord server or Telegram group. /insights shows how many members proved a wallet, how many each gate admits, and their behavior beside your collection's owners; /insights spend their spend (median and quartiles), /insights held what else they hold, /insights trend the last 30 days, /insights overlap <collection> how many hold it and who among them are whales, /insights collection <collection> sets your own collection, /insights export sends the member list as CSV. /dashboard opens the same on a page. ${WHO} Holdings are read in the background (a day's cache); the answer says how far they got.`,
  options: {
    action: opt.choice("show, spend, held, trend, overlap, collection or export", ACTIONS, {
      placeholder: "show|spend|held|trend|overlap|collection|export",
    }),
    collection: opt.collection("overlap, collection: the collection (name, address or link)"),
  },
  examples: [
    "/insights",
    "/insights spend",
    "/insights held",
    "/insights trend",
    "/insights overlap azuki",
    "/insights collection azuki",
    "/insights export",
  ],
  requiresPerson: true,
  async run(ctx, args) {
    // Only managers see insights: every answer is for the asker's eyes (ephemeral on Discord, the
    // private chat on Telegram), aggregates included.
    const reply = await answer(ctx, args);
    return reply.confidential
      ? reply
      : { ...reply, confidential: { what: "the community's insights" } };
  },
});

async function answer(
  ctx: CommandContext,
  {
    action,
    collection,
  }: { action?: (typeof ACTIONS)[number]["value"] | undefined; collection?: string | undefined },
): Promise<Reply> {
  const community = await communityOf(ctx, "insights");
  const insights = insightsOf(ctx);
  const chain = ctx.chain.id;
  const now = ctx.now();
  const wanted = action ?? "show";
  if ((wanted === "overlap" || wanted === "collection") && !collection) {
    if (wanted === "collection") {
      const current = await insights.collectionOf(community, chain);
      return {
        text: current
          ? `Your community's collection on ${ctx.chain.name} is ${current.name} (${fullAddress(current.address)})${current.source === "gate" ? ", from a gate's holds criterion" : ""}. /insights collection <collection> sets another.`
          : `No collection is set on ${ctx.chain.name}. /insights collection <collection> sets it (else a gate's holds criterion is used).`,
        tone: "info",
      };
    }
    throw new UserError(
      "missing_argument",
      "Which collection? /insights overlap <collection>, e.g. /insights overlap azuki.",
    );
  }
  if (collection && wanted !== "overlap" && wanted !== "collection")
    throw new UserError(
      "unexpected_argument",
      `/insights ${wanted} takes no collection. Usage: /insights overlap <collection> or /insights collection <collection>.`,
    );
  if (wanted === "collection" && collection) {
    await insights.store.setCollection(
      community.platform,
      community.id,
      chain,
      collection,
      ctx.invocation.user.id,
      now.getTime(),
    );
    const name = ctx.collections.name(collection) ?? fullAddress(collection);
    return {
      text: `Your community's collection on ${ctx.chain.name} is now ${name}: /insights compares your members with its owners.`,
      tone: "success",
    };
  }
  if (wanted === "overlap" && collection) {
    const name = ctx.collections.name(collection) ?? fullAddress(collection);
    const found = await insights.overlap(community, chain, collection);
    const simulated = insights.isSimulated(community);
    const base = `From the holdings of ${found.progress.read.toLocaleString("en-US")} of ${found.progress.total.toLocaleString("en-US")} members' wallets read so far.`;
    if (found.belowFloor)
      return {
        text: `Fewer than ${MIN_PEOPLE} members have proved a wallet here: no figures yet.`,
        tone: "info",
      };
    return {
      title: `Members holding ${name}`,
      text: [
        found.holders === undefined
          ? `Fewer than ${MIN_PEOPLE} of your ${found.members.toLocaleString("en-US")} members hold ${name}.`
          : `${found.holders.toLocaleString("en-US")} of your ${found.members.toLocaleString("en-US")} members hold ${name}.`,
        found.holders === undefined
          ? ""
          : found.whales === undefined
            ? `Fewer than ${MIN_PEOPLE} of them are whales.`
            : `${found.whales.toLocaleString("en-US")} of them are whales${found.namedWhales.length > 0 ? `: ${found.namedWhales.join(", ")}` : ""}.`,
      ]
        .filter(Boolean)
        .join("\n"),
      footer: [simulated ? "A simulated community of the simulator's wallets." : "", base]
        .filter(Boolean)
        .join(" "),
      chart: {
        kind: "compare",
        subject: `insights-overlap:${community.platform}:${community.id}:${chain}:${collection.toLowerCase()}`,
        title: `Behaviors of members holding ${name}`,
        axis: "% of people",
        groups: [`Holding ${name}`, "All members"],
        rows: found.behaviors.map((row) => ({
          label: behaviorLabel(row.behavior),
          values: [row.share, row.overall],
        })),
      },
      confidential: { what: `the members holding ${name}` },
      tone: "info",
    };
  }
  if (wanted === "export") {
    const { name, csv, rows } = await insights.membersCsv(community, chain);
    return {
      text: `The members of ${community.title ?? "this community"} who proved a wallet: ${rows.toLocaleString("en-US")} listed (people who chose /wallets private are left out), with their wallets, behavior, spend and the gates they pass.`,
      confidential: { what: "the member list" },
      files: [{ name, contentType: "text/csv", data: new TextEncoder().encode(csv) }],
    };
  }
  const view = await insights.view(community, chain, ctx.signal);
  if (view.belowFloor) return belowFloor(view, now);
  switch (wanted) {
    case "spend":
      return spend(view, now);
    case "held":
      return held(view, now);
    case "trend":
      return trend(view, now);
    default:
      return overview(view, now);
  }
}
