/**
 * The verification page and its routes (issue 27) in a real Chromium (test/browser.ts), with a
 * wallet injected whose signatures come from a viem local account. The service behind the routes
 * here is a small stand-in of VerifyService (test/verify-bot.test.ts runs the real bot): what this
 * file checks is the page and its HTTP side: the button, the wallet's calls, what the person reads
 * for each refusal, and the headers and limits of the routes.
 */
import { randomBytes } from "node:crypto";
import type { Page } from "playwright-core";
import { verifyMessage } from "viem";
import { generatePrivateKey, privateKeyToAccount } from "viem/accounts";
import { createSiweMessage, generateSiweNonce, parseSiweMessage } from "viem/siwe";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { HttpHost } from "../src/http/host.ts";
import { silentLogger } from "../src/log.ts";
import { PAGE_CSP, verifyRoutes } from "../src/verify/routes.ts";
import type { VerifyRefusal, VerifyResult, VerifyService } from "../src/verify/types.ts";
import { type BrowserHarness, launchBrowser } from "./browser.ts";
import { freePort } from "./helpers.ts";

interface StandInLink {
  expiresAt: number;
  usedAt?: number;
  nonce?: string;
  rateLimited?: boolean;
}

/** Just enough of the service to drive the page: a SIWE message, checked with viem on return. */
function standInService(origin: () => string) {
  const links = new Map<string, StandInLink>();
  const proved: { address: string; token: string }[] = [];
  const calls: string[] = [];
  const refusal = (code: VerifyRefusal["code"], message: string) => ({
    ok: false as const,
    refusal: { code, message },
  });
  const check = (token: string): VerifyResult<{ link: StandInLink }> => {
    const link = links.get(token);
    if (!link) return refusal("unknown_link", "This link is not one the bot made.");
    if (link.usedAt !== undefined)
      return refusal("used", "This link was used already. Ask the bot for a new one with /verify.");
    if (link.expiresAt <= Date.now())
      return refusal(
        "expired",
        "This link has expired: links work for 10 minutes. Ask the bot for a new one with /verify.",
      );
    return { ok: true, link };
  };
  const service: VerifyService = {
    async createLink() {
      throw new Error("not used here");
    },
    async prune() {
      throw new Error("not used here");
    },
    async open(token) {
      calls.push("open");
      const found = check(token);
      if (!found.ok) return found;
      return {
        ok: true,
        state: {
          chain: "ethereum",
          chainName: "Ethereum",
          chainId: 1,
          expiresAt: found.link.expiresAt,
        },
      };
    },
    async challenge(token, address) {
      calls.push("challenge");
      const found = check(token);
      if (!found.ok) return found;
      if (found.link.rateLimited)
        return refusal(
          "rate_limited",
          "Too many tries with this link: wait a minute, then press Connect wallet again.",
        );
      found.link.nonce = generateSiweNonce();
      const url = new URL(origin());
      const message = createSiweMessage({
        domain: url.host,
        uri: url.origin,
        address: address as `0x${string}`,
        version: "1",
        chainId: 1,
        nonce: found.link.nonce,
        statement: "Prove to the bot that this wallet is yours. This costs nothing.",
        issuedAt: new Date(),
        expirationTime: new Date(found.link.expiresAt),
      });
      return { ok: true, challenge: { message } };
    },
    async prove(token, message, signature) {
      calls.push("prove");
      const found = check(token);
      if (!found.ok) return found;
      const fields = parseSiweMessage(message);
      if (!fields.address || fields.nonce !== found.link.nonce)
        return refusal("stale_nonce", "This message is not the one the bot asked you to sign.");
      const valid = await verifyMessage({
        address: fields.address,
        message,
        signature: signature as `0x${string}`,
      });
      if (!valid)
        return refusal(
          "bad_signature",
          "The signature was not made by this wallet's key, so nothing was proved.",
        );
      found.link.usedAt = Date.now();
      proved.push({ address: fields.address, token });
      return { ok: true, address: fields.address, chain: "ethereum" };
    },
  };
  const link = (options: Partial<StandInLink> = {}) => {
    const token = randomBytes(32).toString("base64url");
    links.set(token, { expiresAt: Date.now() + 600_000, ...options });
    return token;
  };
  return { service, link, links, proved, calls };
}

let host: HttpHost;
let base: string;
let browser: BrowserHarness | undefined;
const standIn = standInService(() => base);
const pages: Page[] = [];

beforeAll(async () => {
  host = new HttpHost(silentLogger());
  for (const route of verifyRoutes({ service: standIn.service, logger: silentLogger() }))
    host.mount(route);
  const port = await freePort();
  await host.listen(port, "127.0.0.1");
  base = `http://127.0.0.1:${port}`;
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
      /No wallet found in this browser\. Open this link in your wallet app's own browser/,
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
