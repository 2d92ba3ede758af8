import type { ChartDrawer } from "../core/charts.ts";
import { chartable } from "../core/charts.ts";
import { behaviorLabel } from "../core/format.ts";
import type { ChartSpec } from "../core/reply.ts";
import type { Logger } from "../log.ts";
import type { InsightsChart, InsightsView } from "./types.ts";

/** "Nov 28" for a snapshot's day. */
function dayLabel(day: string): string {
  return new Date(`${day}T00:00:00Z`).toLocaleDateString("en-US", {
    month: "short",
    day: "numeric",
    timeZone: "UTC",
  });
}

/** The chart of each part of a view: what /insights attaches and the page shows. */
export function insightSpecs(view: InsightsView): Record<InsightsChart, ChartSpec> {
  const where = `${view.community.platform}:${view.community.id}:${view.chain.id}`;
  const mark = view.simulated ? ` (${view.simulated})` : "";
  const collection = view.collection?.name;
  const shown = view.behaviors.filter((row) => row.share !== undefined);
  // The trend's lines: members, wallets, and the shares of today's three largest behaviors.
  const top = shown.slice(0, 3).map((row) => row.behavior);
  return {
    behaviors: {
      kind: "compare",
      subject: `insights-behaviors:${where}`,
      title: `Behaviors of your members${collection ? ` vs ${collection}'s owners` : ""}${mark}`,
      axis: "% of wallets",
      groups: ["Your members", collection ? `${collection} owners` : "Collection owners"],
      rows: shown.map((row) => ({
        label: behaviorLabel(row.behavior),
        values: [row.share, row.collectionShare],
      })),
    },
    held: {
      kind: "ranking",
      subject: `insights-held:${where}`,
      title: `What else your members hold${mark}`,
      axis: "members holding",
      items: view.held.map((row) => ({ label: row.name, value: String(row.people) })),
    },
    trend: {
      kind: "lines",
      subject: `insights-trend:${where}`,
      title: `Members over 30 days${mark}`,
      axis: "members, wallets, % of wallets",
      labels: view.trend.map((point) => dayLabel(point.day)),
      series: [
        { name: "members", values: view.trend.map((point) => point.members) },
        { name: "proved wallets", values: view.trend.map((point) => point.wallets) },
        ...top.map((behavior) => ({
          name: `% ${behaviorLabel(behavior)}`,
          values: view.trend.map((point) => point.shares[behavior] ?? null),
        })),
      ],
    },
  };
}

/** Draws one of a view's charts as PNG bytes: undefined when it has too few points or fails. */
export function insightCharts(drawer: ChartDrawer, logger: Logger) {
  return async (view: InsightsView, which: InsightsChart): Promise<Uint8Array | undefined> => {
    if (view.belowFloor) return undefined;
    const spec = insightSpecs(view)[which];
    if (!chartable(spec)) return undefined;
    const image = await drawer.draw(spec, logger);
    return image?.kind === "png" ? image.data : undefined;
  };
}
