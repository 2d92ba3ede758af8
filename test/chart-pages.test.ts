/**
 * Charts of a paged list (issue "What a community sees", item 7): /top's next page draws the
 * collections ranked 11 to 20, so its chart says so in its title and labels each bar with its
 * rank, as the first page does with 1 to 10; a picture forwarded alone still says what it shows.
 */
import { afterEach, describe, expect, it, vi } from "vitest";
import type { ChartSpec, RenderableReply } from "../src/core/reply.ts";
import { plotValue, rankingConfig } from "../src/render/chart-drawing.ts";
import { type RuntimeSetup, startRuntime } from "./helpers.ts";

type Ranking = Extract<ChartSpec, { kind: "ranking" }>;

/** The bar labels the painter draws for a ranking spec. */
function barLabels(spec: Ranking): string[] {
  const items = spec.items.map((item) => ({ ...item, value: plotValue(item.value) }));
  return (rankingConfig(spec.title, spec.axis, items).data.labels ?? []).map(String);
}

function nextButton(reply: RenderableReply): string {
  const next = reply.buttons?.find((button) => button.label.includes("Next"));
  if (!next) throw new Error("no Next button");
  return next.id;
}

describe("a paged ranking's charts", () => {
  let t: RuntimeSetup;
  afterEach(async () => {
    await t?.close();
  });

  it("page 2 has its own title and ranks 11 to 20 on its bars, like page 1 with 1 to 10", async () => {
    t = await startRuntime();
    const drawn: Ranking[] = [];
    const draw = t.charts.draw.bind(t.charts);
    vi.spyOn(t.charts, "draw").mockImplementation((spec, logger) => {
      if (spec.kind === "ranking") drawn.push(spec);
      return draw(spec, logger);
    });
    const first = await t.say("/top volume 1d");
    const second = await t.press(nextButton(first));
    expect(drawn).toHaveLength(2);
    const [one, two] = drawn as [Ranking, Ranking];
    const pages = [
      { reply: first, spec: one },
      { reply: second, spec: two },
    ];
    for (const { reply, spec } of pages) {
      const ranks = (reply.table?.rows ?? []).map((row) => row[0] ?? "");
      expect(ranks.length).toBe(10);
      // Each bar starts with the rank the table gives its collection, in the table's order.
      const labels = barLabels(spec);
      expect(labels).toHaveLength(ranks.length);
      for (const [i, label] of labels.entries())
        expect(label).toMatch(new RegExp(`^${ranks[i]}\\. `));
      // The title names the ranks shown.
      expect(spec.title).toContain(`(${ranks[0]}–${ranks.at(-1)})`);
      // The picture's text is the chart's title.
      expect(reply.image?.kind === "png" && reply.image.alt).toBe(spec.title);
    }
    expect(two.title).not.toBe(one.title);
  });
});
