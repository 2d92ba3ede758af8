/**
 * The managers' insights page (issue 36) in a real Chromium (test/browser.ts's launchChromium),
 * served by its routes on a real HttpHost over the in-memory DashboardApi of
 * test/fakes/dashboard-api.ts (charts drawn by the bot's own chart drawing). What the person
 * sees and does: the overview, the member table sorted, searched and paged, the CSV, the gates and
 * the chat's sections; a spent link; a session that ends; the cookie out of the script's reach;
 * nothing refused by the page's CSP; a phone's width. Saves docs/images/dashboard-{390,1280}.png.
 */
import { readFileSync } from "node:fs";
import { dirname, join } from "node:path";
import type { Browser, BrowserContext, Page } from "playwright-core";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { HttpHost } from "../src/http/host.ts";
import { dashboardRoutes } from "../src/insights/dashboard/routes.ts";
import { silentLogger } from "../src/log.ts";
import { launchChromium } from "./browser.ts";
import {
  B_ONLY,
  COMMUNITY_A,
  COMMUNITY_B,
  CSV_HEADER,
  fakeDashboardApi,
  KNOWN,
} from "./fakes/dashboard-api.ts";
import { freePort } from "./helpers.ts";

const IMAGES = join(dirname(new URL(import.meta.url).pathname), "..", "docs", "images");
const SESSION_ENDED = "Your session has ended: ask /dashboard in the chat for a new link.";

const api = fakeDashboardApi();
api.chartMode = "drawn";
let host: HttpHost;
let port: number;
let base: string;
let browser: Browser | undefined;
const contexts: BrowserContext[] = [];

beforeAll(async () => {
  host = new HttpHost(silentLogger());
  for (const route of dashboardRoutes({ api, logger: silentLogger() })) host.mount(route);
  // Another site (localhost is not 127.0.0.1's site) linking to the page, as a chat does.
  host.mount({
    path: "/chat",
    handle: (req, res) => {
      const token = new URL(req.url ?? "/", "http://x").searchParams.get("link") ?? "";
      res
        .writeHead(200, { "content-type": "text/html; charset=utf-8" })
        .end(
          `<!doctype html><a id="link" href="http://127.0.0.1:${port}/dashboard/${encodeURIComponent(token)}">Open the dashboard</a>`,
        );
    },
  });
  port = await freePort();
  await host.listen(port, "127.0.0.1");
  base = `http://127.0.0.1:${port}`;
  browser = await launchChromium();
}, 30_000);

afterAll(async () => {
  for (const context of contexts) await context.close();
  await browser?.close();
  await host.close();
});

interface Opened {
  page: Page;
  context: BrowserContext;
  /** The page's console errors and warnings, errors thrown, and CSP violations it saw. */
  problems: string[];
}

/** A fresh browser profile (cookies of its own) at a width, with its problems recorded. */
async function fresh(width: number): Promise<Opened> {
  if (!browser) throw new Error("no browser");
  const context = await browser.newContext({
    viewport: { width, height: 900 },
    locale: "en-US",
    timezoneId: "UTC",
    acceptDownloads: true,
    colorScheme: "light",
  });
  contexts.push(context);
  const page = await context.newPage();
  const problems: string[] = [];
  page.on("console", (message) => {
    if (message.type() === "error" || message.type() === "warning")
      problems.push(`${message.type()}: ${message.text()}`);
  });
  page.on("pageerror", (error) => problems.push(`thrown: ${error.message}`));
  // Run by the browser before the page's own script, whatever its CSP (an inline one is refused).
  await page.addInitScript({
    content: `document.addEventListener("securitypolicyviolation", (event) => {
      console.error("CSP violation: " + event.violatedDirective + " " + event.blockedURI);
    });`,
  });
  return { page, context, problems };
}

/** What is read of a chart's <img> (the tests' TypeScript has no DOM types). */
interface Picture {
  alt: string;
  naturalWidth: number;
  getAttribute(name: string): string | null;
}

/** Waits until the charts' pictures have loaded (or failed: then their width is 0). */
async function chartsLoaded(page: Page): Promise<void> {
  await page.waitForFunction(
    `[...document.querySelectorAll("#charts img")].every((img) => img.complete)`,
  );
}

/** The member table's rows as text, cell by cell. */
async function rows(page: Page): Promise<string[][]> {
  return page
    .locator("#member-rows tr")
    .evaluateAll((trs) =>
      trs.map((tr) => [...tr.querySelectorAll("td")].map((td) => td.textContent ?? "")),
    );
}

/** Waits until the member table shows something else than `before`. */
async function changed(page: Page, before: string[][]): Promise<string[][]> {
  await expect.poll(async () => JSON.stringify(await rows(page))).not.toBe(JSON.stringify(before));
  return rows(page);
}

const NAME = 0;
const WALLETS = 2;
const VOLUME = 5;

const volumeOf = (cell: string | undefined) =>
  cell === undefined || cell === "—" ? -1 : Number(cell.replace(/[^0-9.]/g, ""));

describe("the managers' page in Chromium", () => {
  let usedToken = "";

  it("opens on the link: the overview, the charts, the members; sorts, pages, searches, downloads", async (ctx) => {
    if (!browser) return ctx.skip();
    const { page, context, problems } = await fresh(1280);
    usedToken = api.link(COMMUNITY_A);
    const response = await page.goto(`${base}/dashboard/${usedToken}`);
    expect(response?.status()).toBe(200);
    await page.locator("#member-rows tr").first().waitFor();

    await expect.poll(() => page.title()).toBe(`Insights of ${COMMUNITY_A.title}`);
    await expect(page.locator("h1").innerText()).resolves.toBe(`Insights of ${COMMUNITY_A.title}`);
    const top = await page.locator("header.top").innerText();
    expect(top).toContain("Ethereum");
    expect(await page.locator("#simulated").innerText()).toMatch(/^Simulated data/);
    const overview = await page.locator("#overview").innerText();
    expect(overview).toMatch(/Members\s+31/);
    expect(overview).toMatch(/Private members\s+3/);
    expect(overview).toContain(
      "Holdings from 27 of 36 wallets so far, complete in about 7 minutes.",
    );
    expect(await page.locator("#floor").count()).toBe(0);
    expect(await page.locator("#behaviors").innerText()).toMatch(
      /whale\s+7\s+18\.4%\s+6\.3%\s+\+12\.1 pts/,
    );
    expect(await page.locator("#spend").innerText()).toMatch(
      /Volume bought\s+26\s+1\.8 ETH\s+7\.45 ETH\s+31\.2 ETH/,
    );
    expect(await page.locator("#last-purchase").innerText()).toContain(
      "23.5% of the members' wallets bought within 7 days",
    );
    expect(await page.locator("#held").innerText()).toContain("Moonbirds Oddities");

    // The charts: the routes' PNGs, each with words for who cannot see it.
    await chartsLoaded(page);
    const images = await page.locator("#charts img").evaluateAll((all) =>
      (all as unknown as Picture[]).map((img) => ({
        src: img.getAttribute("src"),
        alt: img.alt,
        width: img.naturalWidth,
      })),
    );
    expect(images.map((i) => i.src)).toEqual([
      "api/chart/behaviors.png",
      "api/chart/held.png",
      "api/chart/trend.png",
    ]);
    for (const image of images) {
      expect(image.alt.length).toBeGreaterThan(20);
      expect(image.width).toBe(800);
    }

    // The members: name order first, the known member with a short wallet and the whole in its title.
    expect(await page.locator("#page-label").innerText()).toBe("Page 1 of 2");
    expect(await page.locator("#member-count").innerText()).toBe("28 members listed");
    const first = await rows(page);
    expect(first).toHaveLength(25);
    const known = first.find((row) => row[NAME] === KNOWN.name);
    expect(known?.[WALLETS]).toBe(`${KNOWN.wallet.slice(0, 6)}…${KNOWN.wallet.slice(-4)}`);
    await expect(
      page.locator(`#member-rows .wallet[title="${KNOWN.wallet}"]`).count(),
    ).resolves.toBe(1);
    // An untrusted name is text, never markup.
    expect(first.map((row) => row[NAME])).toContain("oliver<b>bold</b>");
    expect(await page.locator("#member-rows b").count()).toBe(0);

    // The gates, each folded with its log; the chat's sections.
    const gates = page.locator("#gates details");
    expect(await gates.count()).toBe(3);
    expect(await gates.first().locator("table").isVisible()).toBe(false);
    await gates.first().locator("summary").click();
    expect(await gates.first().locator("tbody tr").count()).toBe(9);
    expect(await gates.nth(2).innerText()).toContain("fewer than 5 admitted");
    const chat = await page.locator("#chat").innerText();
    expect(chat).toContain("#alerts: sales of Moonbirds over 5 ETH");
    expect(chat).toMatch(/Watches\s+none/);

    // The screenshot with the first gate's log open.
    await page.screenshot({ path: join(IMAGES, "dashboard-1280.png"), fullPage: true });
    // On a desktop the member table fits its box: every column in sight.
    const box = (await page.evaluate(
      `(({ scrollWidth, clientWidth }) => ({ scrollWidth, clientWidth }))(document.querySelector("#member-table").parentElement)`,
    )) as { scrollWidth: number; clientWidth: number };
    expect(box.scrollWidth).toBeLessThanOrEqual(box.clientWidth);

    // Sorting by volume: largest first, another order than by name.
    await page.getByRole("button", { name: "Volume" }).click();
    const byVolume = await changed(page, first);
    const volumes = byVolume.map((row) => volumeOf(row[VOLUME]));
    expect(volumes).toEqual([...volumes].sort((a, b) => b - a));
    expect(byVolume.map((row) => row[NAME])).not.toEqual(first.map((row) => row[NAME]));
    expect(
      await page
        .locator("th", { has: page.getByRole("button", { name: "Volume" }) })
        .getAttribute("aria-sort"),
    ).toBe("descending");
    // Again: smallest first.
    await page.getByRole("button", { name: "Volume" }).click();
    const ascending = await changed(page, byVolume);
    const up = ascending.map((row) => volumeOf(row[VOLUME])).filter((v) => v >= 0);
    expect(up).toEqual([...up].sort((a, b) => a - b));

    // Paging.
    await page.getByRole("button", { name: "Next" }).click();
    const second = await changed(page, ascending);
    expect(second).toHaveLength(3);
    expect(await page.locator("#page-label").innerText()).toBe("Page 2 of 2");
    expect(await page.locator("#next").isDisabled()).toBe(true);
    await page.getByRole("button", { name: "Previous" }).click();
    expect(await changed(page, second)).toHaveLength(25);
    expect(await page.locator("#previous").isDisabled()).toBe(true);

    // Searching by a part of a wallet, in any case: one row.
    const before = await rows(page);
    await page.locator("#search").fill(KNOWN.wallet.slice(5, 13).toUpperCase());
    const found = await changed(page, before);
    expect(found).toHaveLength(1);
    expect(found[0]?.[NAME]).toBe(KNOWN.name);
    expect(await page.locator("#member-count").innerText()).toBe("1 member match");
    expect(await page.locator("#page-label").innerText()).toBe("Page 1 of 1");
    await page.locator("#search").fill("nobody-is-called-this");
    expect((await changed(page, found))[0]?.[0]).toBe("No member matches this search.");

    // The CSV, through the browser's own download.
    const [download] = await Promise.all([
      page.waitForEvent("download"),
      page.getByRole("link", { name: "Download CSV" }).click(),
    ]);
    expect(download.suggestedFilename()).toBe("members-moonbirds-parliament-2026-11-28.csv");
    const csv = readFileSync(await download.path(), "utf8");
    expect(csv.split("\r\n")[0]).toBe(CSV_HEADER);
    expect(csv).toContain(KNOWN.name);
    expect(csv).toContain(KNOWN.wallet);

    // The cookie is out of the script's reach.
    expect(await page.evaluate("document.cookie")).toBe("");
    const cookies = await context.cookies();
    expect(cookies.map((c) => [c.name, c.httpOnly, c.sameSite, c.path])).toEqual([
      ["dashboard_session", true, "Strict", "/dashboard"],
    ]);

    expect(problems).toEqual([]);
  }, 40_000);

  it("at a phone's 390 px: the page never scrolls sideways (the table scrolls in its own box)", async (ctx) => {
    if (!browser) return ctx.skip();
    const { page, problems } = await fresh(390);
    await page.goto(`${base}/dashboard/${api.link(COMMUNITY_A)}`);
    await page.locator("#member-rows tr").first().waitFor();
    await chartsLoaded(page);
    const widths = (await page.evaluate(`({
      page: document.documentElement.scrollWidth,
      body: document.body.scrollWidth,
      table: document.querySelector("#member-table").parentElement.scrollWidth,
      box: document.querySelector("#member-table").parentElement.clientWidth,
    })`)) as { page: number; body: number; table: number; box: number };
    expect(widths.page).toBeLessThanOrEqual(390);
    expect(widths.body).toBeLessThanOrEqual(390);
    expect(widths.table).toBeGreaterThan(widths.box);
    await page.screenshot({ path: join(IMAGES, "dashboard-390.png"), fullPage: true });
    expect(problems).toEqual([]);
  });

  it("a used link in another browser: 'used or expired', no page and no data", async (ctx) => {
    if (!browser) return ctx.skip();
    expect(usedToken).not.toBe("");
    const { page, context } = await fresh(1280);
    const probed = page.waitForResponse((r) => r.url().endsWith("/dashboard/api/view"));
    const response = await page.goto(`${base}/dashboard/${usedToken}`);
    expect(response?.status()).toBe(410);
    const text = await page.locator("body").innerText();
    expect(text).toContain(
      "This link was used or has expired. Ask /dashboard in the chat for a new one.",
    );
    expect(text).not.toContain(COMMUNITY_A.title);
    // Its script asked for the view (the session lives? no: 401) and left the words alone.
    expect((await probed).status()).toBe(401);
    expect(await page.locator("#status").innerText()).toBe(
      "This link was used or has expired. Ask /dashboard in the chat for a new one.",
    );
    expect(await page.locator("main > *").count()).toBe(2);
    expect(await page.locator("#member-rows").count()).toBe(0);
    expect(await context.cookies()).toEqual([]);
  });

  it("opened from another site (a chat's link), then reloaded: still the page", async (ctx) => {
    if (!browser) return ctx.skip();
    const { page, problems } = await fresh(1280);
    await page.goto(`http://localhost:${port}/chat?link=${api.link(COMMUNITY_A)}`);
    await page.locator("#link").click();
    await page.locator("#member-rows tr").first().waitFor();
    expect(page.url()).toMatch(/^http:\/\/127\.0\.0\.1:\d+\/dashboard\//);
    // The browser keeps the SameSite=Strict cookie back from this reload (it counts as the
    // chat's navigation): the link is spent, so 410; the page's own call carries the cookie.
    const reloaded = await page.reload();
    expect(reloaded?.status()).toBe(410);
    await page.locator("#member-rows tr").first().waitFor();
    expect(await page.locator("#status").count()).toBe(0);
    expect(await page.locator("h1").innerText()).toBe(`Insights of ${COMMUNITY_A.title}`);
    // Chromium logs the 410 (and the chat page's missing icon): nothing else.
    expect(
      problems.filter((line) => !/^error: Failed to load resource: .* (410|404)/.test(line)),
    ).toEqual([]);
  });

  it("another link opened in the same browser since: the first page stops rather than show the other's data", async (ctx) => {
    if (!browser) return ctx.skip();
    const { page, context } = await fresh(1280);
    await page.goto(`${base}/dashboard/${api.link(COMMUNITY_A)}`);
    await page.locator("#member-rows tr").first().waitFor();
    const other = await context.newPage();
    await other.goto(`${base}/dashboard/${api.link(COMMUNITY_B)}`);
    await other.locator("#member-rows tr").first().waitFor();
    expect(await other.locator("h1").innerText()).toBe(`Insights of ${COMMUNITY_B.title}`);
    await page.getByRole("button", { name: "Volume" }).click();
    await expect
      .poll(() => page.locator("main").innerText())
      .toBe(
        "Another /dashboard link was opened in this browser since this page was: reload the page to see that one.",
      );
    expect(await page.locator("body").innerText()).not.toContain(B_ONLY.name);
  });

  it("when the session ends: says so and nothing else", async (ctx) => {
    if (!browser) return ctx.skip();
    const { page } = await fresh(1280);
    await page.goto(`${base}/dashboard/${api.link(COMMUNITY_A)}`);
    await page.locator("#member-rows tr").first().waitFor();
    api.endSessions();
    await page.getByRole("button", { name: "Volume" }).click();
    await expect.poll(() => page.locator("main").innerText()).toBe(SESSION_ENDED);
    expect(await page.locator("main *").count()).toBe(1);
    expect(await page.locator("body").innerText()).not.toContain(KNOWN.name);
  });
});
