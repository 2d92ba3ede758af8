/** The page's overview: the community, the headline figures, the charts and the aggregates. */
import { API } from "./api.ts";
import {
  amount,
  behaviorLabel,
  type Child,
  count,
  day,
  duration,
  el,
  MIN_PEOPLE,
  percent,
  points,
  section,
  shortDay,
  table,
  wallet,
  when,
} from "./dom.ts";
import type { WireView } from "./wire.ts";

export function header(view: WireView): HTMLElement {
  const { community, chain } = view;
  const name =
    community.title ??
    `the ${community.platform === "telegram" ? "group" : community.platform === "discord" ? "server" : "chat"} ${community.id}`;
  document.title = `Insights of ${name}`;
  const platform = community.platform.charAt(0).toUpperCase() + community.platform.slice(1);
  return el(
    "header",
    { class: "top" },
    view.simulated
      ? el(
          "p",
          { class: "simulated", id: "simulated", role: "note" },
          el("strong", {}, "Simulated data"),
          ` — ${view.simulated}`,
        )
      : undefined,
    el("h1", {}, `Insights of ${name}`),
    el(
      "p",
      { class: "meta" },
      el("span", { class: "chain" }, chain.name),
      ` · ${platform} · read ${when(view.takenAt)}`,
    ),
    view.collection
      ? el(
          "p",
          { class: "meta" },
          "The community's collection: ",
          el("strong", {}, view.collection.name),
          " ",
          wallet(view.collection.address),
          view.collection.source === "gate" ? " (from a gate)" : "",
        )
      : undefined,
  );
}

export function figures(view: WireView): HTMLElement {
  const figure = (label: string, value: string, note?: string) =>
    el(
      "div",
      { class: "figure" },
      el("dt", {}, label),
      el("dd", {}, value),
      note ? el("dd", { class: "note" }, note) : undefined,
    );
  const { progress } = view;
  const done = progress.total > 0 && progress.read >= progress.total;
  const progressText =
    progress.total === 0
      ? "No wallets to read yet."
      : done
        ? `Holdings from all ${count(progress.total)} wallets read.`
        : `Holdings from ${count(progress.read)} of ${count(progress.total)} wallets so far${
            progress.etaMs !== undefined ? `, complete in about ${duration(progress.etaMs)}` : ""
          }.`;
  const bar = el("progress", {
    max: String(Math.max(1, progress.total)),
    value: String(Math.min(progress.read, progress.total)),
    "aria-label": "Wallets read",
  });
  return el(
    "section",
    { id: "overview", "aria-label": "Headline figures" },
    el(
      "dl",
      { class: "figures" },
      figure("Members", count(view.members), "people with a proved wallet"),
      figure("Proved wallets", count(view.wallets)),
      figure("Private members", count(view.privateMembers), "counted, never listed"),
      figure(
        "Read",
        shortDay.format(view.takenAt),
        `${day(view.takenAt).slice(0, 4)}, ${when(view.takenAt).slice(11)}`,
      ),
    ),
    el("div", { class: "progress", id: "progress" }, el("p", {}, progressText), bar),
    view.belowFloor
      ? el(
          "p",
          { class: "floor", id: "floor", role: "note" },
          `Fewer than ${MIN_PEOPLE} members have proved a wallet here: no figures are shown until there are ${MIN_PEOPLE}, so that no one can be singled out.`,
        )
      : undefined,
  );
}

const CHARTS = [
  {
    name: "behaviors",
    title: "Behaviors",
    alt: "Bar chart of the share of the members' wallets in each behavior category",
    show: (view: WireView) => view.behaviors.some((b) => b.share !== undefined),
  },
  {
    name: "held",
    title: "Collections held",
    alt: "Bar chart of the collections most held among the members, by number of members",
    show: (view: WireView) => view.held.length > 0,
  },
  {
    name: "trend",
    title: "The last 30 days",
    alt: "Line chart of the members and their behavior shares over the last 30 days",
    show: (view: WireView) => view.trend.length > 1,
  },
] as const;

export function charts(view: WireView): HTMLElement | undefined {
  const shown = CHARTS.filter((chart) => !view.belowFloor && chart.show(view));
  if (shown.length === 0) return undefined;
  return section(
    "charts",
    "Charts",
    el(
      "div",
      { class: "charts" },
      ...shown.map((chart) => {
        const image = el("img", {
          src: `${API}chart/${chart.name}.png`,
          alt: chart.alt,
          width: "800",
          height: "400",
        });
        // On a phone the picture is small: a tap opens it whole.
        const figure = el(
          "figure",
          {},
          el(
            "a",
            { href: image.getAttribute("src") ?? "", title: `${chart.title}: open the picture` },
            image,
          ),
          el("figcaption", {}, chart.title),
        );
        image.addEventListener("error", () => {
          figure.replaceChildren(el("p", { class: "muted" }, `${chart.title}: no chart yet.`));
        });
        return figure;
      }),
    ),
  );
}

export function behaviors(view: WireView): HTMLElement | undefined {
  if (view.belowFloor || view.behaviors.length === 0) return undefined;
  const withCollection = view.collection !== undefined;
  const head = ["Behavior", "Wallets", "Members' share"];
  if (withCollection) head.push("Collection owners' share", "Difference");
  const rows = view.behaviors.map((row) => {
    const cells: Child[] = [
      behaviorLabel(row.behavior),
      row.wallets === undefined ? undefined : count(row.wallets),
      row.share === undefined ? undefined : percent(row.share),
    ];
    if (withCollection) {
      const difference =
        row.share !== undefined && row.collectionShare !== undefined
          ? row.share - row.collectionShare
          : undefined;
      cells.push(
        row.collectionShare === undefined ? undefined : percent(row.collectionShare),
        difference === undefined
          ? undefined
          : el(
              "span",
              { class: difference > 0.05 ? "up" : difference < -0.05 ? "down" : "" },
              points(difference),
            ),
      );
    }
    return cells;
  });
  return section(
    "behaviors",
    "Behaviors of the members' wallets",
    withCollection
      ? el(
          "p",
          { class: "muted" },
          `Beside the owners of ${view.collection?.name ?? "the collection"}. Difference: the members' share less the owners', in percentage points.`,
        )
      : undefined,
    table("Behaviors", head, rows, new Set([1, 2, 3, 4])),
  );
}

const SPEND_LABELS = {
  volume: "Volume bought",
  avgPrice: "Average price",
  purchases: "Purchases",
  collections: "Collections held",
} as const;

export function spend(view: WireView): HTMLElement | undefined {
  if (view.belowFloor || view.spend.length === 0) return undefined;
  const currency = view.chain.currency;
  const show = (figure: keyof typeof SPEND_LABELS, value: number | undefined) =>
    value === undefined
      ? undefined
      : figure === "volume" || figure === "avgPrice"
        ? amount(value, currency)
        : count(value);
  return section(
    "spend",
    "Spend per member",
    table(
      "Spend quartiles",
      ["Figure", "People", "Lower quartile", "Median", "Upper quartile"],
      view.spend.map((row) => [
        SPEND_LABELS[row.figure] ?? row.figure,
        count(row.people),
        show(row.figure, row.q1),
        show(row.figure, row.median),
        show(row.figure, row.q3),
      ]),
      new Set([1, 2, 3, 4]),
    ),
  );
}

export function lastPurchase(view: WireView): HTMLElement | undefined {
  if (view.belowFloor || view.lastPurchase.length === 0) return undefined;
  return section(
    "last-purchase",
    "Last purchase",
    el(
      "ul",
      { class: "shares" },
      ...view.lastPurchase.map((row) =>
        el(
          "li",
          {},
          el("span", { class: "share" }, percent(row.share)),
          ` of the members' wallets bought within ${row.withinDays} day${row.withinDays === 1 ? "" : "s"}`,
        ),
      ),
    ),
  );
}

export function held(view: WireView): HTMLElement | undefined {
  if (view.belowFloor || view.held.length === 0) return undefined;
  return section(
    "held",
    "Collections most held",
    table(
      "Collections most held among the members",
      ["Collection", "Contract", "Members"],
      view.held.map((row) => [row.name, wallet(row.address), count(row.people)]),
      new Set([2]),
    ),
  );
}
