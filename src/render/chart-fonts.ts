import { createRequire } from "node:module";

/**
 * The fonts charts are drawn in, shipped in npm packages and registered by path, so a chart looks
 * the same on a server without any font, and nothing is fetched when it is drawn:
 * - DejaVu Sans (dejavu-fonts-ttf) for text: Latin, Greek and Cyrillic names;
 * - Twemoji (twemoji-colr-font, a COLR/CPAL colour font, 0.5 MB) for emoji, which DejaVu lacks:
 *   without it "🐸 Pepe Frens" was drawn "□ Pepe Frens". Skia draws its layers in colour, and
 *   it costs the painter some 3 MB when first used (Noto Color Emoji, 24 MB of package, cost
 *   28 to 56 MB and 100 ms a chart).
 * The canvas picks, for each character, the first family that has it: DejaVu Sans first, so
 * digits and letters stay DejaVu's (Twemoji has glyphs for some, for keycaps), Twemoji for the
 * rest. A symbol DejaVu has in black and white (❤, ☀, ✔) is drawn so, even as an emoji.
 */

/** The text font. */
export const TEXT_FONT = "DejaVu Sans";
/** The colour emoji font. */
export const EMOJI_FONT = "Twemoji";

/** What Chart.js and the canvas are given as the font family: text first, then emoji. */
export const FONT_FAMILY = `"${TEXT_FONT}", "${EMOJI_FONT}"`;

/** A CSS font for the canvas: `chartFont(18, "bold")`. */
export function chartFont(size: number, weight?: "bold"): string {
  return `${weight ? `${weight} ` : ""}${size}px ${FONT_FAMILY}`;
}

let registered: Promise<void> | undefined;

/** Registers the fonts with the canvas, once (loads @napi-rs/canvas). */
export function registerChartFonts(): Promise<void> {
  registered ??= (async () => {
    const { GlobalFonts } = await import("@napi-rs/canvas");
    const require = createRequire(import.meta.url);
    const files: [string, string][] = [
      ["dejavu-fonts-ttf/ttf/DejaVuSans.ttf", TEXT_FONT],
      ["dejavu-fonts-ttf/ttf/DejaVuSans-Bold.ttf", TEXT_FONT],
      // WOFF2, which Skia's FreeType reads like a TTF; the package ships no other form.
      ["twemoji-colr-font/twemoji.woff2", EMOJI_FONT],
    ];
    for (const [file, family] of files) {
      if (!GlobalFonts.registerFromPath(require.resolve(file), family))
        throw new Error(`the chart font ${file} could not be loaded`);
    }
  })().catch((error: unknown) => {
    // The next chart tries again rather than failing for ever.
    registered = undefined;
    throw error;
  });
  return registered;
}
