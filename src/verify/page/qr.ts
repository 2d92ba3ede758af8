/**
 * A QR code of a link, for the page on a desktop without a wallet: the person scans it with the
 * phone that holds the wallet app. The module matrix comes from `qrcode-generator` (bundled into
 * the page's script: plain ES5, which the page's oldest targets take as it is); the drawing is
 * ours: one SVG path of the dark modules, in a viewBox with the quiet zone of 4 modules the
 * standard asks for, dark on white whatever the page's colours. (No destructuring here: esbuild
 * cannot lower it for the page's Safari 14 target.)
 */
import qrcode from "qrcode-generator";

/** The light margin around the code, in modules (ISO/IEC 18004: at least 4). */
export const QUIET_ZONE = 4;

export interface QrDrawing {
  /** The side of the square viewBox, in modules, quiet zone included. */
  side: number;
  /** The dark modules as one path: a unit square per module, runs of a row merged. */
  path: string;
}

/**
 * The drawing of `text`'s QR code. Error correction M (15%): a phone's camera reads it from a
 * screen at an angle, and a link of some 80 characters stays a small code (version 5 or so).
 */
export function qrDrawing(text: string): QrDrawing {
  // Type 0: the smallest version that holds the text. Byte mode; a URL is ASCII.
  const code = qrcode(0, "M");
  code.addData(text, "Byte");
  code.make();
  const size = code.getModuleCount();
  let path = "";
  for (let y = 0; y < size; y++) {
    for (let x = 0; x < size; x++) {
      if (!code.isDark(y, x)) continue;
      let run = 1;
      while (x + run < size && code.isDark(y, x + run)) run++;
      path += `M${x + QUIET_ZONE} ${y + QUIET_ZONE}h${run}v1h-${run}z`;
      x += run - 1;
    }
  }
  return { side: size + 2 * QUIET_ZONE, path };
}
