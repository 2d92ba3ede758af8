/**
 * The verification page and its routes (issue 27) in a real Chromium (test/browser.ts), with a
 * wallet injected whose signatures come from a viem local account. The service behind the routes
 * here is a small stand-in of VerifyService (test/verify-bot.test.ts runs the real bot): what this
 * file checks is the page and its HTTP side: the button, the wallet's calls, what the person reads
 * for each refusal, and the headers and limits of the routes; the heading (place, bot, platform's
 * mark, a hostile name as text), what stays on screen once proved or refused, and, without a
 * wallet on a desktop, the QR code of the page's own link. test/verify-phone.test.ts has the
 * phone. Saves docs/images/verify-1280.png.
 */
import { dirname, join } from "node:path";
import { createCanvas, loadImage } from "@napi-rs/canvas";
import jsQRModule from "jsqr";
import type { Page } from "playwright-core";
import { generatePrivateKey, privateKeyToAccount } from "viem/accounts";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import type { HttpHost } from "../src/http/host.ts";
import { MANAGERS_SEE } from "../src/verify/consent.ts";
import { PAGE_CSP } from "../src/verify/routes.ts";
import type { VerifyRefusal } from "../src/verify/types.ts";
import { type BrowserHarness, launchBrowser } from "./browser.ts";
import { type StandIn, startStandInHost } from "./verify-stand-in.ts";

const IMAGES = join(dirname(new URL(import.meta.url).pathname), "..", "docs", "images");

let host: HttpHost;
let base: string;
let browser: BrowserHarness | undefined;
let standIn: StandIn;
const pages: Page[] = [];

beforeAll(async () => {
  ({ host, base, standIn } = await startStandInHost());
  browser = await launchBrowser();
}, 60_000);

afterAll(async () => {
  for (const page of pages) await page.close();
  await browser?.close();
  await host.close();
});

const account = privateKeyToAccount(generatePrivateKey());

async function open(token: string, wallet?: Parameters<BrowserHarness["open"]>[1]) {
  if (!browser) throw new Error("no browser");
  const opened = await browser.open(`${base}/verify/${token}`, wallet);
  pages.push(opened.page);
  return opened;
}

/** What the page says once it has settled: Verified and the address, or its refusal. */
async function outcome(page: Page): Promise<{ verified: boolean; text: string }> {
  await page.locator("#status.refused, #status.verified").waitFor();
  const verified = await page.locator("#verified").isVisible();
  const text = verified
    ? `${await page.locator("#verified").innerText()}\n${await page.locator("#status").innerText()}`
    : await page.locator("#status").innerText();
  return { verified, text };
}

describe("the routes", () => {
  it("serve the page with a strict CSP, its hashed script and style, and nothing cached", async () => {
    const token = standIn.link();
    const response = await fetch(`${base}/verify/${token}`);
    expect(response.status).toBe(200);
    expect(response.headers.get("content-security-policy")).toBe(PAGE_CSP);
    expect(PAGE_CSP).toContain("default-src 'none'");
    expect(PAGE_CSP).toContain("script-src 'self'");
    expect(response.headers.get("x-content-type-options")).toBe("nosniff");
    expect(response.headers.get("referrer-policy")).toBe("no-referrer");
    expect(response.headers.get("cache-control")).toBe("no-store");
    expect(response.headers.get("access-control-allow-origin")).toBeNull();
    const html = await response.text();
    expect(html).toContain('name="viewport"');
    expect(html).toContain(">Connect wallet</button>");
    // Only this host's files: no CDN, no inline script.
    const sources = [...html.matchAll(/(?:src|href)="([^"]+)"/g)].map((m) => m[1] ?? "");
    expect(sources.length).toBe(2);
    for (const source of sources) expect(source).toMatch(/^assets\/[a-z]+-[A-Z0-9]+\.(js|css)$/);
    expect(html).not.toMatch(/<script>|<style>|style="/);
    for (const source of sources) {
      const asset = await fetch(`${base}/verify/${source}`);
      expect(asset.status).toBe(200);
      expect(asset.headers.get("content-type")).toMatch(
        source.endsWith(".js") ? /^text\/javascript/ : /^text\/css/,
      );
      expect((await asset.text()).length).toBeGreaterThan(100);
    }
    expect((await fetch(`${base}/verify/assets/page-NOPE.js`)).status).toBe(404);
    // Exact routes stay exact: nothing else under the host is served by the prefix.
    expect((await fetch(`${base}/verifyx`)).status).toBe(404);
  });

  it("say in plain words why a link does not work, without asking the service for a malformed one", async () => {
    const before = standIn.calls.length;
    const malformed = await fetch(`${base}/verify/not%20a%20token`);
    expect(malformed.status).toBe(404);
    expect(await malformed.text()).toContain("This link is not one the bot made.");
    expect(standIn.calls.length).toBe(before);
    const expired = await fetch(`${base}/verify/${standIn.link({ expiresAt: Date.now() - 1 })}`);
    expect(expired.status).toBe(410);
    expect(await expired.text()).toContain("This link has expired");
  });

  it("take small JSON bodies from the page's own origin only, and change nothing otherwise", async () => {
    const token = standIn.link();
    const post = (path: string, body: string, headers: Record<string, string> = {}) =>
      fetch(`${base}/verify/${token}/${path}`, {
        method: "POST",
        headers: { "content-type": "application/json", ...headers },
        body,
      });
    const address = JSON.stringify({ address: account.address });
    const before = standIn.calls.length;
    const foreign = await post("challenge", address, { origin: "https://evil.example" });
    expect(foreign.status).toBe(403);
    const crossSite = await post("challenge", address, { "sec-fetch-site": "cross-site" });
    expect(crossSite.status).toBe(403);
    const form = await post("challenge", address, { "content-type": "text/plain" });
    expect(form.status).toBe(415);
    const big = await post("challenge", JSON.stringify({ address: "0x".padEnd(4000, "0") }));
    expect(big.status).toBe(413);
    const garbage = await post("proof", "{not json");
    expect(garbage.status).toBe(400);
    expect(((await garbage.json()) as { refusal: VerifyRefusal }).refusal.message).toMatch(
      /does not understand/,
    );
    const notAnAddress = await post("challenge", JSON.stringify({ address: "vitalik.eth" }));
    expect(notAnAddress.status).toBe(400);
    expect((await fetch(`${base}/verify/${token}/challenge`)).status).toBe(405);
    expect(standIn.calls.length).toBe(before);
    expect(standIn.links.get(token)?.nonce).toBeUndefined();
    // The page's own origin is served.
    const own = await post("challenge", address, { origin: base });
    expect(own.status).toBe(200);
    expect(((await own.json()) as { message: string }).message).toContain(account.address);
  });
});

describe("in Chromium, with a wallet", () => {
  it("Connect wallet, sign: Verified, with the address", async (ctx) => {
    if (!browser) return ctx.skip();
    const token = standIn.link();
    const { page, calls, logged } = await open(token, { account });
    await page.getByRole("button", { name: "Connect wallet" }).click();
    const result = await outcome(page);
    expect(result.verified).toBe(true);
    expect(result.text).toContain("Verified");
    expect(result.text).toContain(account.address);
    expect(standIn.proved).toContainEqual({ address: account.address, token });
    expect(calls.map((c) => c.method)).toEqual(["eth_requestAccounts", "personal_sign"]);
    // personal_sign got the SIWE message as hex of its UTF-8 bytes, with the address.
    const [hex, from] = (calls[1]?.params ?? []) as string[];
    expect(from).toBe(account.address);
    expect(Buffer.from(String(hex).slice(2), "hex").toString("utf8")).toMatch(
      /^127\.0\.0\.1:\d+ wants you to sign in with your Ethereum account:\n0x/,
    );
    // The page ran under its CSP with nothing refused (Chromium logs each violation).
    expect(logged.filter((line) => /Content Security Policy/i.test(line))).toEqual([]);
  });

  it("with several wallets, lists them and signs with the one chosen", async (ctx) => {
    if (!browser) return ctx.skip();
    const other = privateKeyToAccount(generatePrivateKey());
    const token = standIn.link();
    const { page, calls } = await open(token, {
      account: other,
      name: "Wallet One",
      also: [{ account, name: "Wallet Two" }],
    });
    await page.getByRole("button", { name: "Connect wallet" }).click();
    await page.getByRole("button", { name: "Wallet Two" }).click();
    const result = await outcome(page);
    expect(result.verified).toBe(true);
    expect(result.text).toContain(account.address);
    expect(new Set(calls.map((c) => c.wallet))).toEqual(new Set(["Wallet Two"]));
  });

  it.for([
    [
      "no wallet in the browser",
      undefined,
      {},
      /No wallet found in this browser\. Scan the code below with your phone/,
    ],
    [
      "the person rejects the connection",
      "connect",
      {},
      /You declined the connection in your wallet/,
    ],
    [
      "the person rejects the signature",
      "sign",
      {},
      /You declined to sign in your wallet, so nothing was proved/,
    ],
    ["a signature by another key than the address", "forged", {}, /not made by this wallet's key/],
    [
      "an expired link",
      "none",
      { expiresAt: Date.now() - 1 },
      /This link has expired: links work for 10 minutes/,
    ],
    ["a used link", "none", { usedAt: 1 }, /This link was used already/],
    ["the rate limit", "none", { rateLimited: true }, /Too many tries with this link/],
  ] as const)(
    "refuses %s, saying why, and proves nothing",
    async ([, how, linkState, words], ctx) => {
      if (!browser) return ctx.skip();
      // An expired or used link already refuses when the page opens; the others once it is used.
      const token = standIn.link(linkState);
      const fresh = how !== "none" && !("expiresAt" in linkState) && !("usedAt" in linkState);
      const wallet =
        how === undefined
          ? undefined
          : {
              account,
              ...(how === "connect" || how === "sign" ? { reject: how } : {}),
              ...(how === "forged" ? { signer: privateKeyToAccount(generatePrivateKey()) } : {}),
            };
      const { page } = await open(token, wallet);
      const button = page.getByRole("button", { name: "Connect wallet" });
      if (fresh || "rateLimited" in linkState) await button.click();
      const result = await outcome(page);
      expect(result.verified).toBe(false);
      expect(result.text).toMatch(words);
      expect(standIn.proved.some((p) => p.token === token)).toBe(false);
    },
  );
});

/**
 * What the page logged that is a problem: a CSP violation, an error thrown or logged. The one
 * 404 Chromium may log is its own request for /favicon.ico (the page has none).
 */
const problems = (logged: string[]) =>
  logged.filter((line) => !/^error: Failed to load resource: .* 404 \(Not Found\)$/.test(line));

/** jsQR is CommonJS, its function both the module and its `default` (typed as the latter). */
const jsQR = (jsQRModule as unknown as { default: typeof jsQRModule.default }).default;

/** The text a QR code in a PNG holds (decoded with jsQR), or undefined. */
async function decodeQr(png: Buffer): Promise<string | undefined> {
  const image = await loadImage(png);
  const canvas = createCanvas(image.width, image.height);
  const context = canvas.getContext("2d");
  context.drawImage(image, 0, 0);
  const { data, width, height } = context.getImageData(0, 0, image.width, image.height);
  return jsQR(new Uint8ClampedArray(data), width, height)?.data;
}

describe("in Chromium, the heading", () => {
  it("names the server and the bot, with Discord's mark drawn in the page, and says what managers see and where a proof holds", async (ctx) => {
    if (!browser) return ctx.skip();
    const token = standIn.link();
    const html = await (await fetch(`${base}/verify/${token}`)).text();
    expect(html).toMatch(/<svg class="platform"[^>]*aria-label="Discord"/);
    const { page, logged } = await open(token);
    expect(await page.locator("h1").innerText()).toBe(
      "Prove a wallet to Bored Apes Club for Audience Bot",
    );
    expect(await page.title()).toBe("Prove a wallet for Audience Bot");
    expect(await page.locator("h1 svg.platform").isVisible()).toBe(true);
    expect(await page.locator("h1 strong").allInnerTexts()).toEqual([
      "Bored Apes Club",
      "Audience Bot",
    ]);
    const intro = await page.locator("#intro").innerText();
    expect(intro).toContain(MANAGERS_SEE);
    expect(intro).toContain(
      "A proof by an ordinary wallet (its key's signature) holds on every EVM chain the bot serves: Ethereum, Base and Polygon. A smart-contract wallet's proof holds only on the chain it is signed on, here Ethereum.",
    );
    expect(problems(logged)).toEqual([]);
  });

  it.for([
    [
      "a Telegram group",
      { platform: "telegram", name: "Pudgy Penguins" },
      "Prove a wallet to Pudgy Penguins for Audience Bot",
      "Telegram",
    ],
    [
      "a private chat on Telegram",
      { platform: "telegram" },
      "Prove a wallet for Audience Bot on Telegram",
      "Telegram",
    ],
    [
      "a private chat on Discord",
      { platform: "discord" },
      "Prove a wallet for Audience Bot on Discord",
      "Discord",
    ],
    ["the console", { platform: "console" }, "Prove a wallet for Audience Bot", undefined],
  ] as const)("from %s: %s", async ([, place, words, mark], ctx) => {
    if (!browser) return ctx.skip();
    const { page } = await open(standIn.link({ place }));
    expect(await page.locator("h1").innerText()).toBe(words);
    const icons = page.locator("h1 svg");
    expect(await icons.count()).toBe(mark ? 1 : 0);
    if (mark) expect(await icons.getAttribute("aria-label")).toBe(mark);
  });

  it("shows a hostile name as text: markup, direction marks, NUL bytes and 200 characters", async (ctx) => {
    if (!browser) return ctx.skip();
    const hostile = `<img src=x onerror="alert(1)">\u202e\u0000<b>"&amp;</b>${"W".repeat(200)}`;
    const bot = `\u200fBot<script>alert(2)</script>`;
    const token = standIn.link({ place: { platform: "discord", name: hostile }, botName: bot });
    const html = await (await fetch(`${base}/verify/${token}`)).text();
    expect(html).not.toContain("<img");
    expect(html).not.toContain("<script>alert");
    expect(html).not.toContain("\u0000");
    expect(html).toContain("&lt;img src=x onerror=&quot;alert(1)&quot;&gt;");
    const { page, logged } = await open(token);
    const heading = page.locator("h1");
    // Nothing of the names became an element: two <bdi> holding text, and the mark.
    expect(await heading.locator("img, script, b").count()).toBe(0);
    expect(await heading.locator("bdi").count()).toBe(2);
    const [place, botName] = await heading.locator("bdi").allTextContents();
    // Cut to 100 characters, the NUL byte dropped.
    expect(place).toBe(`${hostile.replace("\u0000", "").slice(0, 99)}…`);
    expect(botName).toBe(`\u200fBot<script>alert(2)</script>`);
    // The words after the names are not reordered into them, nor pushed past the page's width.
    expect(await heading.innerText()).toMatch(/ for .*Bot<script>alert\(2\)<\/script>$/s);
    const box = await heading.boundingBox();
    expect(box?.width).toBeLessThanOrEqual(1280);
    expect(await page.evaluate("document.documentElement.scrollWidth")).toBeLessThanOrEqual(
      await page.evaluate("window.innerWidth"),
    );
    expect(problems(logged)).toEqual([]);
  });
});

describe("in Chromium, what stays on screen", () => {
  it("once proved: only Verified, the address, the chain and that the page can close", async (ctx) => {
    if (!browser) return ctx.skip();
    const { page } = await open(standIn.link(), { account });
    await page.getByRole("button", { name: "Connect wallet" }).click();
    expect((await outcome(page)).verified).toBe(true);
    for (const shown of ["#verified", "#address", "#proved-on", "#status"])
      expect(await page.locator(shown).isVisible(), shown).toBe(true);
    for (const gone of [
      "h1",
      "#intro",
      ".consent",
      "#connect",
      "#wallets",
      "#no-wallet",
      "#expiry",
    ])
      expect(await page.locator(gone).isVisible(), gone).toBe(false);
    // What a person reads, top to bottom, is exactly that.
    expect((await page.locator("main").innerText()).split(/\n+/)).toEqual([
      "Verified",
      account.address,
      "Proved on Ethereum.",
      "You can close this page: the bot tells the chat where you asked.",
    ]);
  });

  it("a rejected signature: Connect wallet stays visible and enabled, the reason above it", async (ctx) => {
    if (!browser) return ctx.skip();
    const { page } = await open(standIn.link(), { account, reject: "sign" });
    const button = page.getByRole("button", { name: "Connect wallet" });
    await button.click();
    const result = await outcome(page);
    expect(result.text).toMatch(/You declined to sign in your wallet/);
    expect(await button.isVisible()).toBe(true);
    await expect.poll(() => button.isEnabled()).toBe(true);
    const status = await page.locator("#status").boundingBox();
    const connect = await button.boundingBox();
    if (!status || !connect) throw new Error("no boxes");
    expect(status.y + status.height).toBeLessThanOrEqual(connect.y);
    expect(await page.locator("#expiry").isVisible()).toBe(true);
    expect(await page.locator("#verified").isVisible()).toBe(false);
  });
});

describe("in Chromium, a desktop without a wallet", () => {
  it("shows this page's own link as a QR code, and says to install an extension; no Open in links", async (ctx) => {
    if (!browser) return ctx.skip();
    const token = standIn.link();
    const { page, logged } = await open(token);
    const qr = page.locator("#qr svg");
    // Offered on its own once no wallet announced itself, before any press.
    await qr.waitFor();
    expect(await page.locator("#open-in").isVisible()).toBe(false);
    expect(await page.locator("#scan").innerText()).toMatch(
      /Scan this code with your phone's camera[\s\S]*install a wallet extension in this browser/,
    );
    expect(await decodeQr(await qr.screenshot())).toBe(`${base}/verify/${token}`);
    // Dark on white with the quiet zone, whatever the theme: the drawing's own white square.
    expect(await qr.locator("rect").getAttribute("fill")).toBe("#fff");
    await page.screenshot({ path: join(IMAGES, "verify-1280.png"), fullPage: true });
    expect(problems(logged)).toEqual([]);
  });
});
