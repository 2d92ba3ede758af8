/**
 * The verification page on a phone without a wallet (issue 27), and the pieces it is made of: the
 * "Open in" links of five wallet apps (each app's documented universal link, for the page's own
 * URL), the platforms' marks (still Simple Icons'), and the QR code a desktop shows (decoded back).
 * The phone is Chromium's mobile emulation: a phone's viewport, touch, a phone's user agent, no
 * wallet. Saves docs/images/verify-390.png.
 */
import { dirname, join } from "node:path";
import jsQRModule from "jsqr";
import type { Browser, BrowserContext } from "playwright-core";
import { siDiscord, siTelegram } from "simple-icons";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import type { HttpHost } from "../src/http/host.ts";
import { PLATFORM_ICONS } from "../src/verify/page/platform-icons.ts";
import { QUIET_ZONE, qrDrawing } from "../src/verify/page/qr.ts";
import { openInLinks, WALLET_APPS } from "../src/verify/page/wallet-apps.ts";
import { launchChromium } from "./browser.ts";
import { type StandIn, startStandInHost } from "./verify-stand-in.ts";

const IMAGES = join(dirname(new URL(import.meta.url).pathname), "..", "docs", "images");

/** jsQR is CommonJS, its function both the module and its `default` (typed as the latter). */
const jsQR = (jsQRModule as unknown as { default: typeof jsQRModule.default }).default;

/** The five links for `url`, by app, exactly as each app documents them. */
function expectedLinks(url: string): Record<string, string> {
  const encoded = encodeURIComponent(url);
  return {
    MetaMask: `https://link.metamask.io/dapp/${url.replace(/^https?:\/\//, "")}`,
    "Coinbase Wallet": `https://go.cb-w.com/dapp?cb_url=${encoded}`,
    "Trust Wallet": `https://link.trustwallet.com/open_url?coin_id=60&url=${encoded}`,
    Rainbow: `https://rnbwapp.com/dapp?url=${encoded}`,
    Phantom: `https://phantom.app/ul/browse/${encoded}?ref=${encodeURIComponent(new URL(url).origin)}`,
  };
}

describe("the Open in links", () => {
  it("are the five apps' documented forms, exactly", () => {
    const url = "https://bot.example.com/verify/AbC_-123";
    expect(Object.fromEntries(openInLinks(url).map((link) => [link.name, link.href]))).toEqual({
      MetaMask: "https://link.metamask.io/dapp/bot.example.com/verify/AbC_-123",
      "Coinbase Wallet":
        "https://go.cb-w.com/dapp?cb_url=https%3A%2F%2Fbot.example.com%2Fverify%2FAbC_-123",
      "Trust Wallet":
        "https://link.trustwallet.com/open_url?coin_id=60&url=https%3A%2F%2Fbot.example.com%2Fverify%2FAbC_-123",
      Rainbow: "https://rnbwapp.com/dapp?url=https%3A%2F%2Fbot.example.com%2Fverify%2FAbC_-123",
      Phantom:
        "https://phantom.app/ul/browse/https%3A%2F%2Fbot.example.com%2Fverify%2FAbC_-123?ref=https%3A%2F%2Fbot.example.com",
    });
  });

  it("keep a port, a query and a fragment: whole in MetaMask's path, encoded in the others' parameters", () => {
    const url = "https://bot.example.com:8443/verify/AbC_-123?lang=en&x=a%20b#top";
    expect(Object.fromEntries(openInLinks(url).map((link) => [link.name, link.href]))).toEqual({
      MetaMask:
        "https://link.metamask.io/dapp/bot.example.com:8443/verify/AbC_-123?lang=en&x=a%20b#top",
      "Coinbase Wallet":
        "https://go.cb-w.com/dapp?cb_url=https%3A%2F%2Fbot.example.com%3A8443%2Fverify%2FAbC_-123%3Flang%3Den%26x%3Da%2520b%23top",
      "Trust Wallet":
        "https://link.trustwallet.com/open_url?coin_id=60&url=https%3A%2F%2Fbot.example.com%3A8443%2Fverify%2FAbC_-123%3Flang%3Den%26x%3Da%2520b%23top",
      Rainbow:
        "https://rnbwapp.com/dapp?url=https%3A%2F%2Fbot.example.com%3A8443%2Fverify%2FAbC_-123%3Flang%3Den%26x%3Da%2520b%23top",
      Phantom:
        "https://phantom.app/ul/browse/https%3A%2F%2Fbot.example.com%3A8443%2Fverify%2FAbC_-123%3Flang%3Den%26x%3Da%2520b%23top?ref=https%3A%2F%2Fbot.example.com%3A8443",
    });
    // Each parameter decodes back to the page's URL, whole.
    for (const link of openInLinks(url).slice(1)) {
      const parsed = new URL(link.href);
      const carried =
        parsed.searchParams.get("cb_url") ??
        parsed.searchParams.get("url") ??
        decodeURIComponent(parsed.pathname.replace("/ul/browse/", ""));
      expect(carried, link.name).toBe(url);
    }
  });

  it("list the five apps, in order", () => {
    expect(WALLET_APPS.map((app) => app.name)).toEqual([
      "MetaMask",
      "Coinbase Wallet",
      "Trust Wallet",
      "Rainbow",
      "Phantom",
    ]);
  });
});

describe("the pieces drawn by the page", () => {
  it("the platforms' marks are Simple Icons' paths and colours", () => {
    expect(PLATFORM_ICONS.discord).toEqual({
      title: siDiscord.title,
      hex: `#${siDiscord.hex}`,
      path: siDiscord.path,
    });
    expect(PLATFORM_ICONS.telegram).toEqual({
      title: siTelegram.title,
      hex: `#${siTelegram.hex}`,
      path: siTelegram.path,
    });
  });

  it("the QR code decodes to its text, with a quiet zone of 4 modules", () => {
    const text = "https://bot.example.com:8443/verify/AbC_-123xyzXYZ0123456789abcdefghijklmnop";
    const { side, path } = qrDrawing(text);
    // Rasterized here from the path (4 pixels a module), dark on white, as the page draws it.
    const scale = 4;
    const width = side * scale;
    const pixels = new Uint8ClampedArray(width * width * 4).fill(255);
    const dark = new Set<string>();
    for (const [, x, y, run] of path.matchAll(/M(\d+) (\d+)h(\d+)v1h-\d+z/g))
      for (let i = 0; i < Number(run); i++) dark.add(`${Number(x) + i},${y}`);
    expect(path.replace(/M\d+ \d+h\d+v1h-\d+z/g, "")).toBe("");
    for (const module of dark) {
      const [mx, my] = module.split(",").map(Number) as [number, number];
      expect(Math.min(mx, my)).toBeGreaterThanOrEqual(QUIET_ZONE);
      expect(Math.max(mx, my)).toBeLessThan(side - QUIET_ZONE);
      for (let py = my * scale; py < (my + 1) * scale; py++)
        for (let px = mx * scale; px < (mx + 1) * scale; px++)
          pixels.fill(0, (py * width + px) * 4, (py * width + px) * 4 + 3);
    }
    expect(jsQR(pixels, width, width)?.data).toBe(text);
  });
});

const PHONES = {
  iPhone: {
    userAgent:
      "Mozilla/5.0 (iPhone; CPU iPhone OS 17_5 like Mac OS X) AppleWebKit/605.1.15 (KHTML, like Gecko) Version/17.5 Mobile/15E148 Safari/604.1",
  },
  Android: {
    userAgent:
      "Mozilla/5.0 (Linux; Android 14; Pixel 8) AppleWebKit/537.36 (KHTML, like Gecko) Chrome/126.0.0.0 Mobile Safari/537.36",
  },
} as const;

let host: HttpHost;
let base: string;
let standIn: StandIn;
let browser: Browser | undefined;
const contexts: BrowserContext[] = [];

beforeAll(async () => {
  ({ host, base, standIn } = await startStandInHost());
  browser = await launchChromium();
}, 60_000);

afterAll(async () => {
  for (const context of contexts) await context.close();
  await browser?.close();
  await host.close();
});

/** A phone's browser with no wallet: its viewport, touch and user agent, a fresh profile. */
async function phone(kind: keyof typeof PHONES) {
  if (!browser) throw new Error("no browser");
  const context = await browser.newContext({
    viewport: { width: 390, height: 844 },
    deviceScaleFactor: 2,
    isMobile: true,
    hasTouch: true,
    userAgent: PHONES[kind].userAgent,
    locale: "en-US",
    timezoneId: "UTC",
    colorScheme: "light",
  });
  contexts.push(context);
  const page = await context.newPage();
  const logged: string[] = [];
  page.on("console", (message) => {
    // Chromium's own request for /favicon.ico (the page has none) is not the page's problem.
    if (message.type() === "error" && !/Failed to load resource: .* 404/.test(message.text()))
      logged.push(message.text());
  });
  page.on("pageerror", (error) => logged.push(`thrown: ${error.message}`));
  return { page, logged };
}

describe("in Chromium, a phone without a wallet", () => {
  it.for(["iPhone", "Android"] as const)(
    "on an %s: Open in links for the five apps, each opening this page's own URL; no QR code",
    async (kind, ctx) => {
      if (!browser) return ctx.skip();
      const url = `${base}/verify/${standIn.link({ place: { platform: "telegram", name: "Pudgy Penguins" } })}`;
      const { page, logged } = await phone(kind);
      await page.goto(url);
      const links = page.locator("#apps a");
      // Offered on its own once no wallet announced itself, before any press.
      await links.first().waitFor();
      const shown = await links.evaluateAll((all) =>
        all.map((a) => [a.textContent ?? "", a.getAttribute("href") ?? ""]),
      );
      expect(Object.fromEntries(shown)).toEqual(expectedLinks(url));
      expect(shown.map(([name]) => name)).toEqual(WALLET_APPS.map((app) => app.name));
      for (const link of await links.all()) expect(await link.isVisible()).toBe(true);
      expect(await page.locator("#scan").isVisible()).toBe(false);
      expect(await page.locator("#qr svg").count()).toBe(0);
      // Nothing wider than the phone.
      expect(await page.evaluate("document.documentElement.scrollWidth")).toBeLessThanOrEqual(390);
      if (kind === "iPhone")
        await page.screenshot({ path: join(IMAGES, "verify-390.png"), fullPage: true });
      // Connect wallet says why, above the button, and points at the links.
      await page.getByRole("button", { name: "Connect wallet" }).click();
      expect(await page.locator("#status.refused").innerText()).toMatch(
        /^No wallet found in this browser\. Open this link in your wallet app's own browser/,
      );
      expect(await page.locator("#open-in").isVisible()).toBe(true);
      expect(await page.locator("#qr svg").count()).toBe(0);
      expect(logged).toEqual([]);
    },
  );
});
