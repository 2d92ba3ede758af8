import type { IncomingMessage, ServerResponse } from "node:http";
import { z } from "zod";
import type { HttpRoute } from "../../http/host.ts";
import { type PageAssets, pageAssetsLoader, sendAsset } from "../../http/page-assets.ts";
import { type Logger, scrubSecrets } from "../../log.ts";
import { escapeHtml } from "../../render/telegram.ts";
import { bounded } from "../../within.ts";
import type {
  ChatSection,
  DashboardApi,
  DashboardSession,
  GateWithLog,
  InsightsChart,
  InsightsView,
  MemberPage,
  MemberQuery,
  MemberSort,
} from "../types.ts";
import type { WireGate, WireMemberPage, WireSection, WireSort, WireView } from "./page/wire.ts";

/** The page's own copy of the contract's shapes (page/wire.ts) takes what the calls send. */
type Fits<Wire, Sent extends Wire> = Sent;
export type PageReadsWhatIsSent = [
  Fits<WireView, InsightsView>,
  Fits<WireMemberPage, MemberPage>,
  Fits<WireGate[], GateWithLog[]>,
  Fits<WireSection[], ChatSection[]>,
  Fits<WireSort, MemberSort>,
  Fits<MemberSort, WireSort>,
];

/** Where the managers' page lives on the HTTP host: `/dashboard/<token>`, its calls under it. */
export const DASHBOARD_PREFIX = "/dashboard/";

/** The one-time link's token, as the service makes them. */
export const DASHBOARD_TOKEN = /^[A-Za-z0-9_-]{16,100}$/;

/** The session cookie's name; it is sent to /dashboard paths only. */
export const SESSION_COOKIE = "dashboard_session";

/** What a session id may look like: nothing that could end the cookie's value or add to it. */
const SESSION_ID = /^[A-Za-z0-9_-]{16,200}$/;

/** How long the browser keeps the session's cookie (the service decides how long it lives). */
const SESSION_MAX_AGE_S = 3600;

/**
 * What the page may load and reach: its own script, style, API and chart pictures, nothing else;
 * no framing, no form posting anywhere, no base rewriting.
 */
export const DASHBOARD_CSP =
  "default-src 'none'; script-src 'self'; style-src 'self'; connect-src 'self'; img-src 'self'; base-uri 'none'; form-action 'none'; frame-ancestors 'none'";

const SECURITY_HEADERS = {
  "content-security-policy": DASHBOARD_CSP,
  "x-content-type-options": "nosniff",
  "referrer-policy": "no-referrer",
  "x-frame-options": "DENY",
  "cross-origin-resource-policy": "same-origin",
  "x-robots-tag": "noindex, nofollow",
};

/** The page's icon (else the browser asks for /favicon.ico, which nothing serves): a bar chart. */
const ICON_NAME = "icon.svg";
const ICON = `<svg xmlns="http://www.w3.org/2000/svg" viewBox="0 0 16 16"><rect width="16" height="16" rx="3" fill="#0969da"/><path fill="#fff" d="M3 12h2V7H3zm4 0h2V4H7zm4 0h2V9h-2z"/></svg>`;

/** What the page reads when its session is gone (the page shows it and nothing else). */
export const SESSION_ENDED = "Your session has ended: ask /dashboard in the chat for a new link.";

const UNAVAILABLE = "The bot could not answer right now. Try again in a minute.";

const USED_OR_EXPIRED =
  "This link was used or has expired. Ask /dashboard in the chat for a new one.";

const NOT_A_LINK = "This link is not one the bot made. Ask /dashboard in the chat for a new one.";

const CHARTS: readonly InsightsChart[] = ["behaviors", "held", "trend"];

const SORTS = [
  "name",
  "since",
  "volume",
  "purchases",
  "avgPrice",
  "collections",
] as const satisfies readonly MemberSort[];

/** The member table's query string: anything else in it (a chat's id, say) is ignored. */
const MembersQuery = z.object({
  sort: z.enum(SORTS).optional(),
  desc: z.enum(["0", "1", "true", "false"]).optional(),
  page: z
    .string()
    .regex(/^\d{1,6}$/)
    .transform(Number)
    .pipe(z.number().int().min(1))
    .optional(),
  size: z
    .string()
    .regex(/^\d{1,3}$/)
    .transform(Number)
    .pipe(z.number().int().min(1).max(100))
    .optional(),
  q: z.string().max(100).optional(),
});

export interface DashboardRoutesOptions {
  api: DashboardApi;
  logger: Logger;
  /** PUBLIC_URL: when it is https, the session cookie is Secure. */
  publicUrl?: string | undefined;
  /**
   * How long one call may take (the bot's COMMAND_DEADLINE_MS): a read that takes longer is
   * answered 503 and its reads are told to stop. Default 20 s.
   */
  callTimeoutMs?: number | undefined;
}

/** The page's built script and style: dist/dashboard, else built on the fly. */
const assets = pageAssetsLoader("dashboard");

/**
 * The managers' insights page on the HTTP host (issue 36), all GET:
 * - /dashboard/<token>: uses the one-time link, sets the session cookie and serves the page (a
 *   shell: its script reads everything through the calls below); a used or expired link with a
 *   live session's cookie (a reload) serves the page again; else 410 and why (with the script,
 *   which shows the page after all when its own call carries a live session's cookie).
 * - /dashboard/assets/<hashed name>: the page's script and style.
 * - /dashboard/api/view, /members?sort=&desc=&page=&size=&q=, /members.csv, /gates, /sections,
 *   /chart/<behaviors|held|trend>.png: the session's community's data, the session taken from the
 *   cookie only (never a chat's id from the request), 401 without one.
 */
export function dashboardRoutes(options: DashboardRoutesOptions): HttpRoute[] {
  const { api, logger } = options;
  const secure = options.publicUrl?.toLowerCase().startsWith("https://") ?? false;
  const callMs = options.callTimeoutMs ?? 20_000;
  /** Every call's answer, bounded: a stalled read is a 503, never a request held open. */
  const timely = <T>(answer: Promise<T>) => bounded(answer, callMs, "the dashboard's data");

  const send = (
    res: ServerResponse,
    status: number,
    type: string,
    body: string | Uint8Array,
    extra: Record<string, string> = {},
  ) => {
    res
      .writeHead(status, {
        ...SECURITY_HEADERS,
        "content-type": type,
        "cache-control": "no-store",
        ...extra,
      })
      .end(body);
  };
  const json = (res: ServerResponse, status: number, value: unknown) =>
    send(res, status, "application/json; charset=utf-8", JSON.stringify(value));
  const html = (
    res: ServerResponse,
    status: number,
    page: string,
    extra?: Record<string, string>,
  ) => send(res, status, "text/html; charset=utf-8", page, extra);

  /** A failure of the service is logged without the link's token or the session's id. */
  const failed = (error: unknown, what: string, secrets: string[]) => {
    logger.error({ err: redacted(error, secrets), what }, "dashboard failed");
  };

  /** The live session behind the request's cookie, if any. */
  async function sessionOf(
    req: IncomingMessage,
  ): Promise<{ id: string; session: DashboardSession } | undefined> {
    for (const id of cookieValues(req.headers.cookie, SESSION_COOKIE)) {
      if (!SESSION_ID.test(id)) continue;
      const session = await api.session(id);
      if (session) return { id, session };
    }
    return undefined;
  }

  function cookie(id: string): string {
    if (!SESSION_ID.test(id)) throw new Error("the service made a session id unfit for a cookie");
    return `${SESSION_COOKIE}=${id}; HttpOnly; SameSite=Strict; Path=/dashboard; Max-Age=${SESSION_MAX_AGE_S}${secure ? "; Secure" : ""}`;
  }

  async function page(req: IncomingMessage, res: ServerResponse, token: string): Promise<void> {
    const secrets = [token];
    try {
      const loaded = await assets();
      if (!DASHBOARD_TOKEN.test(token)) {
        html(res, 404, messagePage(NOT_A_LINK, loaded));
        return;
      }
      const opened = await api.open(token);
      if (opened) {
        secrets.push(opened.id);
        const setCookie = cookie(opened.id);
        html(res, 200, dashboardPage(loaded), { "set-cookie": setCookie });
        return;
      }
      // A reload: the link is spent, the session it made lives on.
      if (await sessionOf(req)) {
        html(res, 200, dashboardPage(loaded));
        return;
      }
      // No cookie came, but a reload of a page first opened from a chat (another site) is itself
      // cross-site to the browser, which then keeps the SameSite=Strict cookie back: the page's
      // script asks for the view with its own same-origin call, which carries the cookie, and
      // shows the page if the session lives; else these words stay.
      html(res, 410, spentPage(loaded));
    } catch (error) {
      failed(error, "open", secrets);
      if (!res.headersSent) html(res, 503, messagePage(UNAVAILABLE, undefined));
    }
  }

  async function call(req: IncomingMessage, res: ServerResponse, path: string[]): Promise<void> {
    const [what = "", extra] = path;
    const known =
      extra === undefined
        ? ["view", "members", "members.csv", "gates", "sections"].includes(what)
        : what === "chart" && path.length === 2;
    if (!known) return json(res, 404, { error: "No such call." });
    // Only the page calls (a browser's request from another site is refused before the cookie).
    const site = req.headers["sec-fetch-site"];
    if (site !== undefined && site !== "same-origin" && site !== "none")
      return json(res, 403, { error: "Only the dashboard page may call this." });
    const secrets: string[] = [];
    try {
      const found = await sessionOf(req);
      if (!found) return json(res, 401, { error: SESSION_ENDED });
      secrets.push(found.id);
      const { session } = found;
      res.setHeader(SCOPE_HEADER, scopeOf(session));
      switch (what) {
        case "view": {
          const aborted = new AbortController();
          const abort = () => {
            if (!res.writableFinished) aborted.abort();
          };
          res.once("close", abort);
          // A closed tab or the call's time ends the reads.
          const signal = AbortSignal.any([aborted.signal, AbortSignal.timeout(callMs)]);
          try {
            return json(res, 200, await timely(api.view(session, signal)));
          } finally {
            res.off("close", abort);
          }
        }
        case "members": {
          const query = membersQuery(req.url ?? "");
          if (!query.ok) return json(res, 400, { error: query.error });
          return json(res, 200, await timely(api.members(session, query.query)));
        }
        case "members.csv": {
          const { name, csv } = await timely(api.membersCsv(session));
          return send(res, 200, "text/csv; charset=utf-8", csv, {
            "content-disposition": attachment(name),
          });
        }
        case "gates":
          return json(res, 200, await timely(api.gates(session)));
        case "sections":
          return json(res, 200, await timely(api.sections(session)));
        case "chart": {
          const chart = CHARTS.find((name) => extra === `${name}.png`);
          if (!chart) return json(res, 404, { error: "No such chart." });
          const png = await timely(api.chart(session, chart));
          if (!png) return json(res, 404, { error: "This chart has nothing to show yet." });
          return send(res, 200, "image/png", png);
        }
      }
      return json(res, 404, { error: "No such call." });
    } catch (error) {
      failed(error, what, secrets);
      if (!res.headersSent) json(res, 503, { error: UNAVAILABLE });
    }
  }

  async function asset(res: ServerResponse, name: string): Promise<void> {
    if (name === ICON_NAME) {
      res
        .writeHead(200, {
          ...SECURITY_HEADERS,
          "content-type": "image/svg+xml",
          "cache-control": "public, max-age=86400",
        })
        .end(ICON);
      return;
    }
    let file: { body: Buffer; type: string } | undefined;
    try {
      file = (await assets()).files.get(name);
    } catch (error) {
      failed(error, "assets", []);
      return send(res, 503, "text/plain; charset=utf-8", `${UNAVAILABLE}\n`);
    }
    if (!file) return send(res, 404, "text/plain; charset=utf-8", "not found\n");
    sendAsset(res, file, SECURITY_HEADERS);
  }

  return [
    {
      path: DASHBOARD_PREFIX,
      prefix: true,
      handle: async (req, res) => {
        // Nothing here reads a body.
        req.resume();
        const path = (req.url ?? "/").split("?")[0] ?? "/";
        const parts = path.slice(DASHBOARD_PREFIX.length).split("/");
        const [first = "", ...rest] = parts;
        const method = req.method ?? "GET";
        const isAsset = first === "assets" && rest.length === 1;
        if (method !== "GET" && !(isAsset && method === "HEAD")) {
          res
            .writeHead(405, {
              ...SECURITY_HEADERS,
              allow: isAsset ? "GET, HEAD" : "GET",
              "cache-control": "no-store",
            })
            .end();
          return;
        }
        try {
          if (isAsset) return await asset(res, rest[0] ?? "");
          if (first === "api") return await call(req, res, rest);
          if (rest.length === 0 && first !== "") return await page(req, res, first);
          send(res, 404, "text/plain; charset=utf-8", "not found\n");
        } catch (error) {
          // Never left to the host, whose log line would name the path (the link's token).
          failed(error, "request", first === "api" || first === "assets" ? [] : [first]);
          if (!res.headersSent) send(res, 500, "text/plain; charset=utf-8", "failed\n");
        }
      },
    },
  ];
}

/** The members' query, from the request's query string. */
export function membersQuery(
  url: string,
): { ok: true; query: MemberQuery } | { ok: false; error: string } {
  const at = url.indexOf("?");
  const params = new URLSearchParams(at === -1 ? "" : url.slice(at + 1));
  const raw: Record<string, string> = {};
  for (const key of ["sort", "desc", "page", "size", "q"]) {
    const value = params.get(key);
    if (value !== null) raw[key] = value;
  }
  const parsed = MembersQuery.safeParse(raw);
  if (!parsed.success) {
    const field = parsed.error.issues[0]?.path[0];
    return {
      ok: false,
      error: `Bad ${typeof field === "string" ? field : "query"}: sort one of ${SORTS.join(", ")}; page 1 or more; size 1 to 100; q up to 100 characters.`,
    };
  }
  const { sort, desc, page, size, q } = parsed.data;
  const query: MemberQuery = {};
  if (sort !== undefined) query.sort = sort;
  if (desc !== undefined) query.descending = desc === "1" || desc === "true";
  if (page !== undefined) query.page = page;
  if (size !== undefined) query.pageSize = size;
  const search = q?.trim();
  if (search) query.search = search;
  return { ok: true, query };
}

/**
 * Which community and chain an answer is of. A browser holds one session cookie: a second
 * /dashboard link opened in it replaces the first's session, and an open page of the first would
 * then be answered with the other community's data; the page compares this header with its first
 * answer's and stops, saying why, when it changes.
 */
export const SCOPE_HEADER = "x-dashboard-scope";

function scopeOf(session: DashboardSession): string {
  return [session.community.platform, session.community.id, session.chain]
    .map(encodeURIComponent)
    .join(":");
}

/** The values of a cookie in a Cookie header, in order. */
function cookieValues(header: string | undefined, name: string): string[] {
  if (!header) return [];
  const out: string[] = [];
  for (const part of header.split(";")) {
    const at = part.indexOf("=");
    if (at === -1) continue;
    if (part.slice(0, at).trim() === name) out.push(part.slice(at + 1).trim());
  }
  return out.slice(0, 4);
}

/** Content-Disposition for a download: an ASCII name, and the exact one encoded beside it. */
function attachment(name: string): string {
  const ascii = name.replace(/[^A-Za-z0-9._-]+/g, "_").slice(0, 120) || "members.csv";
  return `attachment; filename="${ascii}"; filename*=UTF-8''${encodeURIComponent(name)}`;
}

/** An error as logged: its name, message and stack with the request's secrets scrubbed out. */
function redacted(error: unknown, secrets: string[]): unknown {
  const live = secrets.filter((secret) => secret.length > 0);
  if (!(error instanceof Error)) return scrubSecrets(String(error), live);
  const copy = new Error(scrubSecrets(error.message, live));
  copy.name = error.name;
  if (error.stack) copy.stack = scrubSecrets(error.stack, live);
  return copy;
}

/** The page's frame: its style and script from this host only, relative to /dashboard/<token>. */
function layout(
  title: string,
  content: string,
  assets: PageAssets | undefined,
  script: boolean,
  link: "open" | "spent" = "open",
) {
  const style = assets ? `<link rel="stylesheet" href="assets/${escapeHtml(assets.style)}">\n` : "";
  const code =
    script && assets ? `<script src="assets/${escapeHtml(assets.script)}" defer></script>\n` : "";
  return `<!doctype html>
<html lang="en">
<head>
<meta charset="utf-8">
<meta name="viewport" content="width=device-width, initial-scale=1">
<meta name="referrer" content="no-referrer">
<meta name="robots" content="noindex, nofollow">
<link rel="icon" href="assets/${ICON_NAME}">
<title>${escapeHtml(title)}</title>
${style}${code}</head>
<body>
<main id="app" data-link="${link}">
${content}
</main>
</body>
</html>
`;
}

/** The page itself: a shell its script fills from the calls (it holds no data of its own). */
function dashboardPage(assets: PageAssets): string {
  return layout(
    "Insights",
    `<h1>Insights</h1>
<p id="loading" role="status">Loading…</p>
<noscript><p>This page needs JavaScript to show the community's insights.</p></noscript>`,
    assets,
    true,
  );
}

/** A spent link: why, and the page's script, which shows the page if a session lives after all. */
function spentPage(assets: PageAssets): string {
  return layout(
    "Insights",
    `<h1>Insights</h1>
<p id="status" class="refused" role="alert">${escapeHtml(USED_OR_EXPIRED)}</p>`,
    assets,
    true,
    "spent",
  );
}

function messagePage(message: string, assets: PageAssets | undefined): string {
  return layout(
    "Insights",
    `<h1>Insights</h1>
<p id="status" class="refused" role="alert">${escapeHtml(message)}</p>`,
    assets,
    false,
  );
}
