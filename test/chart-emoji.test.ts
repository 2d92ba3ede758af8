/**
 * Emoji in names on charts (issue "What a community sees", item 7): a collection called
 * "🐸 Pepe Frens" must show its frog, in colour, not the empty box ("tofu") a font without the
 * glyph leaves. The charts are drawn here, in the test's process, as the painter draws them.
 */
import { createCanvas, loadImage } from "@napi-rs/canvas";
import { describe, expect, it } from "vitest";
import { rankingChart, rankingConfig } from "../src/render/chart-drawing.ts";
import { chartFont, registerChartFonts } from "../src/render/chart-fonts.ts";

type Pixels = Uint8ClampedArray;

async function pixelsOf(png: Uint8Array): Promise<Pixels> {
  const image = await loadImage(Buffer.from(png));
  const canvas = createCanvas(image.width, image.height);
  const ctx = canvas.getContext("2d");
  ctx.drawImage(image, 0, 0);
  return ctx.getImageData(0, 0, image.width, image.height).data;
}

/** Pixels clearly green: the frog and the clover are, and nothing else on a ranking chart is. */
function greenPixels(data: Pixels): number {
  let count = 0;
  for (let i = 0; i < data.length; i += 4) {
    const [r, g, b] = [data[i] ?? 0, data[i + 1] ?? 0, data[i + 2] ?? 0];
    if (g > r + 30 && g > b + 30) count++;
  }
  return count;
}

/** The distinct colours (hue-bearing, not grey) among the non-white pixels. */
function colouredPixels(data: Pixels): { coloured: number; inked: number } {
  let coloured = 0;
  let inked = 0;
  for (let i = 0; i < data.length; i += 4) {
    const [r, g, b] = [data[i] ?? 0, data[i + 1] ?? 0, data[i + 2] ?? 0];
    if (Math.min(r, g, b) > 240) continue; // background
    inked++;
    if (Math.max(r, g, b) - Math.min(r, g, b) > 60) coloured++;
  }
  return { coloured, inked };
}

/** Text drawn alone, black on white, in a font given as CSS. */
function textPixels(text: string, font: string): Pixels {
  const canvas = createCanvas(240, 60);
  const ctx = canvas.getContext("2d");
  ctx.fillStyle = "#ffffff";
  ctx.fillRect(0, 0, 240, 60);
  ctx.fillStyle = "#000000";
  ctx.font = font;
  ctx.fillText(text, 8, 44);
  return ctx.getImageData(0, 0, 240, 60).data;
}

describe("emoji on charts", () => {
  it("a ranking chart draws the emoji of a name in colour", async () => {
    const png = await rankingChart("Top collections 🐸", "Volume (ETH)", [
      { label: "🐸 Pepe Frens 🍀", value: 3 },
      { label: "🍀 Lucky", value: 2 },
    ]);
    // The bars are blue and the text grey: green can only be the emoji's own colours.
    expect(greenPixels(await pixelsOf(png))).toBeGreaterThan(100);
  });

  it("the charts' font draws an emoji in colour where the text font alone draws a grey box", async () => {
    await registerChartFonts();
    const alone = colouredPixels(textPixels("🐸", '32px "DejaVu Sans"'));
    const charts = colouredPixels(textPixels("🐸", chartFont(32)));
    // Something is drawn either way (the box, or the frog)...
    expect(alone.inked).toBeGreaterThan(0);
    expect(charts.inked).toBeGreaterThan(0);
    // ...but only the charts' font draws it in colour.
    expect(alone.coloured).toBe(0);
    expect(charts.coloured).toBeGreaterThan(charts.inked / 3);
  });

  it("a long name is cut between emoji, never inside one", () => {
    const config = rankingConfig("Top", "Volume", [
      { label: "🐸".repeat(40), value: 1 },
      { label: `${"a".repeat(26)}🐸🐸`, value: 2 },
    ]);
    const lone = /[\ud800-\udbff](?![\udc00-\udfff])|(?<![\ud800-\udbff])[\udc00-\udfff]/;
    for (const label of config.data.labels ?? []) {
      expect(String(label)).not.toMatch(lone);
      expect(String(label).endsWith("…") || [...String(label)].length <= 28).toBe(true);
    }
  });
});
