/**
 * The page's calls: same-origin, under /dashboard/api/, carrying the session's cookie (HttpOnly:
 * this script never sees it). A 401 ends the page: it says so and nothing else.
 */
import { app, el } from "./dom.ts";
import type { WireView } from "./wire.ts";

const SESSION_ENDED = "Your session has ended: ask /dashboard in the chat for a new link.";
const REPLACED =
  "Another /dashboard link was opened in this browser since this page was: reload the page to see that one.";
/** Which community and chain the calls answer of (routes.ts's SCOPE_HEADER). */
const SCOPE_HEADER = "x-dashboard-scope";

/** The calls, relative to the page's own address (/dashboard/<token>): /dashboard/api/…. */
export const API = "api/";

/** The session is gone: the page says so and nothing else, and stops. */
export class SessionEnded extends Error {}
let ended = false;
/** What stops with the page (a pending search). */
const stops: (() => void)[] = [];
/** The first answer's scope: every later answer must be of the same. */
let scope: string | undefined;

export function endSession(message: string): void {
  if (ended) return;
  ended = true;
  for (const stop of stops) stop();
  document.title = "Session ended";
  const status = el("p", { class: "refused", id: "status", role: "alert" }, message);
  app.replaceChildren(status);
}

export async function get<T>(path: string): Promise<T> {
  if (ended) throw new SessionEnded();
  const response = await fetch(`${API}${path}`, {
    credentials: "same-origin",
    headers: { accept: "application/json" },
  });
  if (response.status === 401) {
    let message = SESSION_ENDED;
    try {
      const body = (await response.json()) as { error?: unknown };
      if (typeof body.error === "string" && body.error) message = body.error;
    } catch {
      // The words above, then.
    }
    endSession(message);
    throw new SessionEnded();
  }
  if (!response.ok) throw new Error(`${path}: ${response.status}`);
  // The cookie now holds another link's session: its data must not show under this page's title.
  const answered = response.headers.get(SCOPE_HEADER) ?? "";
  scope ??= answered;
  if (answered !== scope) {
    endSession(REPLACED);
    throw new SessionEnded();
  }
  return (await response.json()) as T;
}

/** Whether the page has ended (its session gone or replaced). */
export function hasEnded(): boolean {
  return ended;
}

/** Runs `stop` when the page ends. */
export function onEnd(stop: () => void): void {
  stops.push(stop);
}

/**
 * A spent link's page (410): the browser may have kept the session's cookie back from the reload
 * of a page opened from a chat (SameSite=Strict, the chat another site), but sends it with this
 * same-origin call. A live session: the page after all; else the link's refusal stays.
 */
export async function probe(): Promise<WireView | undefined> {
  try {
    const response = await fetch(`${API}view`, {
      credentials: "same-origin",
      headers: { accept: "application/json" },
    });
    if (!response.ok) return undefined;
    scope = response.headers.get(SCOPE_HEADER) ?? "";
    return (await response.json()) as WireView;
  } catch {
    return undefined;
  }
}
