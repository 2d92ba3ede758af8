/**
 * The managers' page's routes (issue 36) on a real HttpHost on loopback, over an in-memory
 * DashboardApi with two communities (test/fakes/dashboard-api.ts): the one-time link and its
 * cookie, the calls' session taken from the cookie only, their inputs, headers and refusals.
 * test/dashboard-page.test.ts drives the page itself in Chromium.
 */
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { HttpHost } from "../src/http/host.ts";
import {
  DASHBOARD_CSP,
  dashboardRoutes,
  membersQuery,
  SESSION_ENDED,
} from "../src/insights/dashboard/routes.ts";
import type { InsightsView, MemberPage } from "../src/insights/types.ts";
import {
  B_ONLY,
  COMMUNITY_A,
  COMMUNITY_B,
  CSV_HEADER,
  fakeDashboardApi,
  KNOWN,
} from "./fakes/dashboard-api.ts";
import { capturingLogger, freePort } from "./helpers.ts";

const api = fakeDashboardApi();
const log = capturingLogger();
let host: HttpHost;
let base: string;
/** A second host whose PUBLIC_URL is https: its cookie is Secure. */
let secureHost: HttpHost;
let secureBase: string;

async function start(publicUrl?: string): Promise<{ host: HttpHost; base: string }> {
  const server = new HttpHost(log.logger);
  for (const route of dashboardRoutes({ api, logger: log.logger, publicUrl })) server.mount(route);
  const port = await freePort();
  await server.listen(port, "127.0.0.1");
  return { host: server, base: `http://127.0.0.1:${port}` };
}

beforeAll(async () => {
  ({ host, base } = await start());
  ({ host: secureHost, base: secureBase } = await start("https://bot.example.com/"));
});

afterAll(async () => {
  await host.close();
  await secureHost.close();
});

/** Opens a link: the response and the session cookie it set ("dashboard_session=<id>"). */
async function open(token: string, at = base) {
  const response = await fetch(`${at}/dashboard/${token}`, { redirect: "manual" });
  const setCookie = response.headers.getSetCookie();
  const cookie = setCookie[0]?.split(";")[0];
  return { response, setCookie, cookie };
}

async function session(community = COMMUNITY_A): Promise<string> {
  const { cookie } = await open(api.link(community));
  if (!cookie) throw new Error("no cookie");
  return cookie;
}

const get = (path: string, cookie?: string, headers: Record<string, string> = {}) =>
  fetch(`${base}/dashboard/${path}`, {
    headers: { ...(cookie ? { cookie } : {}), ...headers },
  });

describe("the link", () => {
  it("opens the page once, setting an HttpOnly, SameSite=Strict session cookie for /dashboard, with a strict CSP and nothing cached", async () => {
    const token = api.link(COMMUNITY_A);
    const { response, setCookie } = await open(token);
    expect(response.status).toBe(200);
    expect(setCookie).toHaveLength(1);
    expect(setCookie[0]).toMatch(
      /^dashboard_session=[A-Za-z0-9_-]{16,}; HttpOnly; SameSite=Strict; Path=\/dashboard; Max-Age=3600$/,
    );
    expect(response.headers.get("content-type")).toBe("text/html; charset=utf-8");
    expect(response.headers.get("content-security-policy")).toBe(DASHBOARD_CSP);
    expect(DASHBOARD_CSP).toContain("default-src 'none'");
    expect(DASHBOARD_CSP).toContain("img-src 'self';");
    expect(response.headers.get("x-content-type-options")).toBe("nosniff");
    expect(response.headers.get("referrer-policy")).toBe("no-referrer");
    expect(response.headers.get("x-frame-options")).toBe("DENY");
    expect(response.headers.get("cache-control")).toBe("no-store");
    expect(response.headers.get("access-control-allow-origin")).toBeNull();
    const html = await response.text();
    // A shell: no data in it, only this host's script and style, nothing inline.
    expect(html).not.toContain(COMMUNITY_A.title);
    expect(html).not.toContain(KNOWN.name);
    const sources = [...html.matchAll(/(?:src|href)="([^"]+)"/g)].map((m) => m[1] ?? "");
    expect(sources).toHaveLength(3);
    const [icon, ...built] = sources;
    expect(icon).toBe("assets/icon.svg");
    for (const source of built) expect(source).toMatch(/^assets\/[a-z]+-[A-Z0-9]+\.(js|css)$/);
    expect(html).not.toMatch(/<script>|<style>|style="/);
    for (const source of built) {
      const asset = await fetch(`${base}/dashboard/${source}`);
      expect(asset.status).toBe(200);
      expect(asset.headers.get("content-type")).toMatch(
        source.endsWith(".js") ? /^text\/javascript/ : /^text\/css/,
      );
      expect(asset.headers.get("cache-control")).toContain("immutable");
      expect((await asset.text()).length).toBeGreaterThan(500);
    }
    const served = await fetch(`${base}/dashboard/assets/icon.svg`);
    expect(served.headers.get("content-type")).toBe("image/svg+xml");
    expect(await served.text()).toMatch(/^<svg /);
    expect((await fetch(`${base}/dashboard/assets/page-NOPE.js`)).status).toBe(404);
    expect((await fetch(`${base}/dashboardx`)).status).toBe(404);
  });

  it("is Secure when PUBLIC_URL is https", async () => {
    const { response, setCookie } = await open(api.link(COMMUNITY_A), secureBase);
    expect(response.status).toBe(200);
    expect(setCookie[0]).toMatch(
      /^dashboard_session=[A-Za-z0-9_-]+; HttpOnly; SameSite=Strict; Path=\/dashboard; Max-Age=3600; Secure$/,
    );
  });

  it("used, expired or unknown: 410 and why, no cookie, no script; malformed: 404 without asking the service", async () => {
    const token = api.link(COMMUNITY_A);
    expect((await open(token)).response.status).toBe(200);
    for (const spent of [token, api.link(COMMUNITY_A, { expired: true }), "A".repeat(43)]) {
      const { response, setCookie } = await open(spent);
      expect(response.status).toBe(410);
      expect(setCookie).toEqual([]);
      expect(response.headers.get("content-security-policy")).toBe(DASHBOARD_CSP);
      expect(response.headers.get("cache-control")).toBe("no-store");
      const html = await response.text();
      expect(html).toContain(
        "This link was used or has expired. Ask /dashboard in the chat for a new one.",
      );
      // The page's script comes along, to show the page after all should its own call carry a
      // live session's cookie (a reload the browser kept the cookie back from); no data.
      expect(html).toContain('<main id="app" data-link="spent">');
      expect(html).not.toContain(COMMUNITY_A.title);
    }
    const before = api.calls.length;
    for (const malformed of ["short", "not%20a%20token%20at%20all", `${"a".repeat(101)}`]) {
      const { response, setCookie } = await open(malformed);
      expect(response.status).toBe(404);
      expect(setCookie).toEqual([]);
      const html = await response.text();
      expect(html).toContain("This link is not one the bot made.");
      expect(html).not.toContain("<script");
    }
    expect(api.calls.slice(before)).toEqual([]);
    expect((await fetch(`${base}/dashboard/${"a".repeat(20)}/more`)).status).toBe(404);
    expect((await fetch(`${base}/dashboard/`)).status).toBe(404);
  });

  it("a reload (the link spent) with the session's cookie serves the page again, without a new cookie", async () => {
    const token = api.link(COMMUNITY_A);
    const { cookie } = await open(token);
    const again = await fetch(`${base}/dashboard/${token}`, { headers: { cookie: cookie ?? "" } });
    expect(again.status).toBe(200);
    expect(again.headers.getSetCookie()).toEqual([]);
    expect(await again.text()).toContain("<script src=");
    const other = await fetch(`${base}/dashboard/${token}`, {
      headers: { cookie: "dashboard_session=someoneElsesSessionId0123" },
    });
    expect(other.status).toBe(410);
  });
});

describe("the calls", () => {
  it("without a session's cookie: 401 with the words the page shows", async () => {
    for (const path of [
      "api/view",
      "api/members",
      "api/members.csv",
      "api/gates",
      "api/sections",
      "api/chart/behaviors.png",
    ]) {
      for (const cookie of [
        undefined,
        "dashboard_session=unknownSessionId012345",
        "dashboard_session=bad;;value",
        "other=1",
      ]) {
        const response = await get(path, cookie);
        expect(response.status, `${path} ${cookie}`).toBe(401);
        expect(response.headers.get("cache-control")).toBe("no-store");
        expect(await response.json()).toEqual({ error: SESSION_ENDED });
      }
    }
    expect(SESSION_ENDED).toBe(
      "Your session has ended: ask /dashboard in the chat for a new link.",
    );
    // A session that ended answers the same.
    const cookie = await session();
    expect((await get("api/view", cookie)).status).toBe(200);
    api.endSessions();
    expect((await get("api/view", cookie)).status).toBe(401);
  });

  it("read the session's community only: a chat's id in the request changes nothing", async () => {
    const a = await session(COMMUNITY_A);
    const b = await session(COMMUNITY_B);
    for (const query of [
      "",
      `?chat=${COMMUNITY_B.id}`,
      `?community=${COMMUNITY_B.id}&chatId=${COMMUNITY_B.id}&guild=${COMMUNITY_B.id}`,
    ]) {
      const view = (await (await get(`api/view${query}`, a)).json()) as InsightsView;
      expect(view.community.id).toBe(COMMUNITY_A.id);
      const members = (await (
        await get(`api/members${query}${query ? "&" : "?"}size=100`, a)
      ).json()) as MemberPage;
      expect(members.rows.map((r) => r.name)).toContain(KNOWN.name);
      expect(members.rows.map((r) => r.name)).not.toContain(B_ONLY.name);
      const csv = await (await get(`api/members.csv${query}`, a)).text();
      expect(csv).toContain(KNOWN.wallet);
      expect(csv).not.toContain(B_ONLY.wallet);
      const gates = await (await get(`api/gates${query}`, a)).json();
      expect(gates).toHaveLength(3);
    }
    // Each answer says whose it is (the page stops should its cookie change under it).
    expect((await get("api/view", a)).headers.get("x-dashboard-scope")).toBe(
      `discord:${COMMUNITY_A.id}:ethereum`,
    );
    expect((await get("api/members", b)).headers.get("x-dashboard-scope")).toBe(
      `telegram:${COMMUNITY_B.id}:ethereum`,
    );
    // Another community's cookie beside A's in the same header: the first live one is used.
    const view = (await (await get("api/view", `${a}; ${b}`)).json()) as InsightsView;
    expect(view.community.id).toBe(COMMUNITY_A.id);
    const own = (await (await get("api/view", b)).json()) as InsightsView;
    expect(own.community.id).toBe(COMMUNITY_B.id);
  });

  it("the members' query: sorted, paged, searched; anything malformed 400 with why", async () => {
    const cookie = await session();
    const page = async (query: string) => {
      const response = await get(`api/members?${query}`, cookie);
      expect(response.status, query).toBe(200);
      return (await response.json()) as MemberPage;
    };
    const first = await page("sort=volume&desc=1&page=1&size=10");
    expect(first.rows).toHaveLength(10);
    expect(first.total).toBe(28);
    const volumes = first.rows.map((r) => r.volume ?? -1);
    expect(volumes).toEqual([...volumes].sort((x, y) => y - x));
    expect((await page("sort=volume&desc=1&page=3&size=10")).rows).toHaveLength(8);
    const found = await page(`q=${KNOWN.wallet.slice(2, 10).toLowerCase()}`);
    expect(found.rows.map((r) => r.name)).toEqual([KNOWN.name]);
    expect(api.calls.at(-1)).toBe(
      `members ${JSON.stringify({ search: KNOWN.wallet.slice(2, 10).toLowerCase() })}`,
    );
    for (const bad of [
      "sort=bogus",
      "sort=userId",
      "page=0",
      "page=-1",
      "page=abc",
      "page=1.5",
      "size=0",
      "size=101",
      "size=ten",
      `q=${"x".repeat(101)}`,
      "desc=yes",
    ]) {
      const response = await get(`api/members?${bad}`, cookie);
      expect(response.status, bad).toBe(400);
      expect(response.headers.get("content-type")).toMatch(/^application\/json/);
      const body = (await response.json()) as { error: string };
      expect(body.error, bad).toMatch(/^Bad (sort|page|size|q|desc):/);
    }
    expect(
      membersQuery("/dashboard/api/members?sort=avgPrice&desc=0&page=2&size=100&q=%20ab%20"),
    ).toEqual({
      ok: true,
      query: { sort: "avgPrice", descending: false, page: 2, pageSize: 100, search: "ab" },
    });
  });

  it("the CSV: an attachment, its name from the service, text/csv in UTF-8", async () => {
    const cookie = await session();
    const response = await get("api/members.csv", cookie);
    expect(response.status).toBe(200);
    expect(response.headers.get("content-type")).toBe("text/csv; charset=utf-8");
    expect(response.headers.get("content-disposition")).toBe(
      `attachment; filename="members-moonbirds-parliament-2026-11-28.csv"; filename*=UTF-8''members-moonbirds-parliament-2026-11-28.csv`,
    );
    expect(response.headers.get("cache-control")).toBe("no-store");
    expect(response.headers.get("x-content-type-options")).toBe("nosniff");
    const csv = await response.text();
    expect(csv.split("\r\n")[0]).toBe(CSV_HEADER);
    expect(csv).toContain(KNOWN.wallet);
    expect(csv).toContain(KNOWN.name);
  });

  it("the charts: PNG when drawn, 404 when the service has none or the name is unknown", async () => {
    const a = await session(COMMUNITY_A);
    for (const chart of ["behaviors", "held", "trend"]) {
      const response = await get(`api/chart/${chart}.png`, a);
      expect(response.status).toBe(200);
      expect(response.headers.get("content-type")).toBe("image/png");
      expect(response.headers.get("cache-control")).toBe("no-store");
      expect(
        Buffer.from(await response.arrayBuffer())
          .subarray(1, 4)
          .toString(),
      ).toBe("PNG");
    }
    const b = await session(COMMUNITY_B);
    const none = await get("api/chart/behaviors.png", b);
    expect(none.status).toBe(404);
    expect(await none.json()).toEqual({ error: "This chart has nothing to show yet." });
    for (const path of [
      "api/chart/pie.png",
      "api/chart/behaviors",
      "api/chart/x/held.png",
      "api/nope",
    ])
      expect((await get(path, a)).status, path).toBe(404);
  });

  it("GET only: anything else 405, and a call from another site 403", async () => {
    const cookie = await session();
    const token = api.link(COMMUNITY_A);
    for (const [path, method] of [
      [`${token}`, "POST"],
      [`${token}`, "HEAD"],
      ["api/view", "POST"],
      ["api/members", "PUT"],
      ["api/members.csv", "DELETE"],
      ["api/view", "HEAD"],
    ] as const) {
      const response = await fetch(`${base}/dashboard/${path}`, {
        method,
        headers: { cookie },
        ...(method === "POST" || method === "PUT" ? { body: "{}" } : {}),
      });
      expect(response.status, `${method} ${path}`).toBe(405);
      expect(response.headers.get("allow")).toBe("GET");
    }
    // The link was not used by any of that.
    expect((await open(token)).response.status).toBe(200);
    const crossSite = await get("api/view", cookie, { "sec-fetch-site": "cross-site" });
    expect(crossSite.status).toBe(403);
    expect((await get("api/view", cookie, { "sec-fetch-site": "same-origin" })).status).toBe(200);
  });

  it("a failure of the service: 503 in plain words, logged without the link's token or the session's id", async () => {
    const token = api.link(COMMUNITY_A);
    api.failNext.add("open");
    const page = await open(token);
    expect(page.response.status).toBe(503);
    expect(page.setCookie).toEqual([]);
    expect(await page.response.text()).toContain("The bot could not answer right now.");
    const cookie = await session();
    const id = cookie.split("=")[1] ?? "";
    for (const what of ["view", "members"] as const) {
      api.failNext.add(what);
      const response = await get(`api/${what}`, cookie);
      expect(response.status).toBe(503);
      expect(await response.json()).toEqual({
        error: "The bot could not answer right now. Try again in a minute.",
      });
    }
    const lines = log.lines.filter((line) => line.includes("dashboard failed"));
    expect(lines).toHaveLength(3);
    expect(lines.join("\n")).toContain("database is down");
    for (const line of log.lines) {
      expect(line).not.toContain(token);
      expect(line).not.toContain(id);
    }
  });

  it("a read that stalls is answered 503 within the call's time, and its reads are told to stop", async () => {
    const stalled = fakeDashboardApi();
    let viewSignal: AbortSignal | undefined;
    const never = new Promise<never>(() => {});
    const slow = {
      ...stalled,
      members: () => never,
      view: (_session: unknown, signal?: AbortSignal) => {
        viewSignal = signal;
        return never;
      },
    } as typeof stalled;
    const server = new HttpHost(log.logger);
    for (const route of dashboardRoutes({ api: slow, logger: log.logger, callTimeoutMs: 300 }))
      server.mount(route);
    const port = await freePort();
    await server.listen(port, "127.0.0.1");
    try {
      const at = `http://127.0.0.1:${port}/dashboard/`;
      const opened = await fetch(`${at}${stalled.link(COMMUNITY_A)}`);
      const cookie = (opened.headers.getSetCookie()[0] ?? "").split(";")[0] ?? "";
      for (const what of ["members", "view"]) {
        const response = await fetch(`${at}api/${what}`, { headers: { cookie } });
        expect(response.status, what).toBe(503);
      }
      expect(viewSignal?.aborted).toBe(true);
    } finally {
      await server.close();
    }
  });
});
