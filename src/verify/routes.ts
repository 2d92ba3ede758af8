import type { IncomingMessage, ServerResponse } from "node:http";
import { z } from "zod";
import type { HttpRoute, RequestBody } from "../http/host.ts";
import { sendAsset } from "../http/page-assets.ts";
import type { Logger } from "../log.ts";
import { escapeHtml } from "../render/telegram.ts";
import { type PageAssets, pageAssets } from "./assets.ts";
import { MANAGERS_SEE } from "./consent.ts";
import { PLATFORM_ICONS } from "./page/platform-icons.ts";
import {
  LINK_TOKEN,
  type VerifyPageState,
  type VerifyRefusal,
  type VerifyService,
} from "./types.ts";

/** Where the page lives on the HTTP host: `/verify/<token>`, its calls under it. */
export const VERIFY_PREFIX = "/verify/";

/**
 * What the page may load and reach: its own script, style and API, nothing else; no framing, no
 * form posting anywhere, no base rewriting. Wallet icons (EIP-6963) are data: URIs.
 */
export const PAGE_CSP =
  "default-src 'none'; script-src 'self'; style-src 'self'; connect-src 'self'; img-src 'self' data:; base-uri 'none'; form-action 'none'; frame-ancestors 'none'";

const SECURITY_HEADERS = {
  "content-security-policy": PAGE_CSP,
  "x-content-type-options": "nosniff",
  "referrer-policy": "no-referrer",
  "x-frame-options": "DENY",
};

/** A challenge's body is an address; a proof's a message and a signature (ERC-6492 ones are long). */
const CHALLENGE_BYTES = 1024;
const PROOF_BYTES = 24 * 1024;

const ChallengeBody = z.object({ address: z.string().regex(/^0x[0-9a-fA-F]{40}$/) });
const ProofBody = z.object({
  message: z.string().min(1).max(4096),
  signature: z
    .string()
    .regex(/^0x[0-9a-fA-F]+$/)
    .max(20_000),
});

/** The HTTP status a refusal is answered with (the page reads the JSON either way). */
const STATUS: Record<VerifyRefusal["code"], number> = {
  unknown_link: 404,
  expired: 410,
  used: 410,
  wrong_domain: 400,
  wrong_chain: 400,
  bad_message: 400,
  stale_nonce: 409,
  bad_signature: 400,
  contract_wallet_needs_rpc: 400,
  rate_limited: 429,
  too_many_wallets: 409,
  unavailable: 503,
};

const UNAVAILABLE: VerifyRefusal = {
  code: "unavailable",
  message: "The bot could not check this right now. Try again in a minute.",
};

export { publicBaseUrl as verifyBaseUrl } from "../http/host.ts";

export interface VerifyRoutesOptions {
  service: VerifyService;
  logger: Logger;
  /** PUBLIC_URL: the page's calls come from its origin (else from the host they were sent to). */
  publicUrl?: string | undefined;
}

/**
 * The verification page's routes on the HTTP host (issue 27): GET /verify/<token> (the page, or
 * why the link does not work), GET /verify/assets/<hashed name> (its script and style), POST
 * /verify/<token>/challenge {address} → {message}, POST /verify/<token>/proof {message,
 * signature} → {address, chain}. The calls take small JSON bodies from the page's own origin
 * only; no CORS, so no other site's script can make them.
 */
export function verifyRoutes(options: VerifyRoutesOptions): HttpRoute[] {
  const { service, logger } = options;
  const publicOrigin = options.publicUrl ? new URL(options.publicUrl).origin : undefined;

  const json = (res: ServerResponse, status: number, value: unknown) => {
    res
      .writeHead(status, {
        ...SECURITY_HEADERS,
        "content-type": "application/json; charset=utf-8",
        "cache-control": "no-store",
      })
      .end(JSON.stringify(value));
  };
  const refuse = (res: ServerResponse, refusal: VerifyRefusal) =>
    json(res, STATUS[refusal.code] ?? 400, { ok: false, refusal });
  const html = (res: ServerResponse, status: number, page: string) => {
    res
      .writeHead(status, {
        ...SECURITY_HEADERS,
        "content-type": "text/html; charset=utf-8",
        "cache-control": "no-store",
      })
      .end(page);
  };

  /** A browser's call from another site (or a form) is refused: only the page calls. */
  const sameOrigin = (req: IncomingMessage): boolean => {
    const site = req.headers["sec-fetch-site"];
    if (site !== undefined && site !== "same-origin") return false;
    const origin = req.headers.origin;
    if (origin === undefined) return true;
    if (origin === publicOrigin) return true;
    try {
      return new URL(origin).host === req.headers.host;
    } catch {
      return false;
    }
  };

  async function readJson<T>(
    req: IncomingMessage,
    res: ServerResponse,
    body: RequestBody,
    maxBytes: number,
    schema: z.ZodType<T>,
  ): Promise<T | undefined> {
    if (!sameOrigin(req)) {
      req.resume();
      json(res, 403, {
        ok: false,
        refusal: { code: "bad_message", message: "Only the verification page may call this." },
      });
      return undefined;
    }
    const type = req.headers["content-type"] ?? "";
    if (!/^application\/json\s*(;|$)/i.test(type)) {
      req.resume();
      json(res, 415, {
        ok: false,
        refusal: { code: "bad_message", message: "The request must be JSON." },
      });
      return undefined;
    }
    const raw = await body.read(maxBytes, "unauthenticated");
    if (raw === undefined) return undefined;
    let value: unknown;
    try {
      value = JSON.parse(raw.toString("utf8"));
    } catch {
      value = undefined;
    }
    const parsed = schema.safeParse(value);
    if (!parsed.success) {
      refuse(res, {
        code: "bad_message",
        message: "The page sent something the bot does not understand. Reload it and try again.",
      });
      return undefined;
    }
    return parsed.data;
  }

  /** The service's own failure (a database down) is logged; the person hears plain words. */
  async function ask<T>(
    res: ServerResponse,
    what: string,
    call: () => Promise<T>,
  ): Promise<T | undefined> {
    try {
      return await call();
    } catch (error) {
      logger.error({ err: error, what }, "verification failed");
      refuse(res, UNAVAILABLE);
      return undefined;
    }
  }

  async function page(res: ServerResponse, token: string, assets: PageAssets): Promise<void> {
    const opened = LINK_TOKEN.test(token)
      ? await ask(res, "open", () => service.open(token))
      : { ok: false as const, refusal: unknownLink() };
    if (opened === undefined) return;
    if (!opened.ok) {
      html(res, STATUS[opened.refusal.code] ?? 400, refusalPage(opened.refusal, assets));
      return;
    }
    html(res, 200, verifyPage(opened.state, assets));
  }

  return [
    {
      path: VERIFY_PREFIX,
      prefix: true,
      handle: async (req, res, body) => {
        const path = (req.url ?? "/").split("?")[0] ?? "/";
        const rest = path.slice(VERIFY_PREFIX.length).split("/");
        const [first = "", action, extra] = rest;
        const method = req.method ?? "GET";
        if (first === "assets" && action !== undefined && extra === undefined) {
          if (method !== "GET" && method !== "HEAD") return notAllowed(req, res, "GET, HEAD");
          const file = (await pageAssets()).files.get(action);
          if (!file) return notFound(req, res);
          sendAsset(res, file, SECURITY_HEADERS);
          return;
        }
        if (action === undefined) {
          if (method !== "GET" && method !== "HEAD") return notAllowed(req, res, "GET, HEAD");
          return page(res, first, await pageAssets());
        }
        if ((action !== "challenge" && action !== "proof") || extra !== undefined)
          return notFound(req, res);
        if (method !== "POST") return notAllowed(req, res, "POST");
        if (!LINK_TOKEN.test(first)) {
          req.resume();
          return refuse(res, unknownLink());
        }
        if (action === "challenge") {
          const input = await readJson(req, res, body, CHALLENGE_BYTES, ChallengeBody);
          if (!input) return;
          const answer = await ask(res, "challenge", () => service.challenge(first, input.address));
          if (!answer) return;
          if (!answer.ok) return refuse(res, answer.refusal);
          return json(res, 200, { ok: true, message: answer.challenge.message });
        }
        const input = await readJson(req, res, body, PROOF_BYTES, ProofBody);
        if (!input) return;
        const answer = await ask(res, "proof", () =>
          service.prove(first, input.message, input.signature),
        );
        if (!answer) return;
        if (!answer.ok) return refuse(res, answer.refusal);
        return json(res, 200, { ok: true, address: answer.address, chain: answer.chain });
      },
    },
  ];
}

function unknownLink(): VerifyRefusal {
  return {
    code: "unknown_link",
    message: "This link is not one the bot made. Ask the bot for a new one with /verify.",
  };
}

function notFound(req: IncomingMessage, res: ServerResponse): void {
  req.resume();
  res.writeHead(404, { ...SECURITY_HEADERS, "content-type": "text/plain" }).end("not found\n");
}

function notAllowed(req: IncomingMessage, res: ServerResponse, allow: string): void {
  req.resume();
  res.writeHead(405, { ...SECURITY_HEADERS, allow }).end();
}

/** The page's frame: readable on a phone, its style and script from this host only. */
function layout(title: string, content: string, assets: PageAssets, script: boolean): string {
  return `<!doctype html>
<html lang="en">
<head>
<meta charset="utf-8">
<meta name="viewport" content="width=device-width, initial-scale=1">
<meta name="referrer" content="no-referrer">
<title>${escapeHtml(title)}</title>
<link rel="stylesheet" href="assets/${escapeHtml(assets.style)}">
${script ? `<script src="assets/${escapeHtml(assets.script)}" defer></script>\n` : ""}</head>
<body>
<main>
${content}
</main>
</body>
</html>
`;
}

/** How much of a name the heading shows, in characters (Discord's server names go to 100). */
const NAME_MAX = 100;

/**
 * A name someone chose (a server's, a group's, the bot's): untrusted. Control characters (NUL
 * included) are dropped and a long one is cut; empty, it is none.
 */
function cleanName(name: string | undefined): string | undefined {
  const clean = (name ?? "").replace(/[\u0000-\u001f\u007f-\u009f]/g, "").trim();
  if (!clean) return undefined;
  const chars = [...clean];
  return chars.length > NAME_MAX ? `${chars.slice(0, NAME_MAX - 1).join("")}…` : clean;
}

/**
 * A name as the heading shows it: as text, isolated in <bdi> so that a right-to-left name or
 * direction marks in it cannot reorder the words around it.
 */
function shownName(name: string | undefined): string | undefined {
  const clean = cleanName(name);
  return clean === undefined ? undefined : `<bdi>${escapeHtml(clean)}</bdi>`;
}

/** The platform's mark, inline: drawn here, nothing fetched. */
function platformIcon(platform: keyof typeof PLATFORM_ICONS): string {
  const { title, hex, path } = PLATFORM_ICONS[platform];
  return `<svg class="platform" viewBox="0 0 24 24" width="32" height="32" role="img" aria-label="${title}"><title>${title}</title><path fill="${hex}" d="${path}"/></svg>`;
}

/**
 * "Prove a wallet to <server or group> for <bot>", with the platform's mark; where the platform
 * gave no name (a private chat): "Prove a wallet for <bot> on Discord".
 */
function heading(state: VerifyPageState): string {
  const { platform } = state.place;
  const bot = `<strong>${shownName(state.botName) ?? "the bot"}</strong>`;
  const place = shownName(state.place.name);
  const icon = platform === "console" ? "" : platformIcon(platform);
  const on =
    place === undefined && platform !== "console" ? ` on ${PLATFORM_ICONS[platform].title}` : "";
  const to = place === undefined ? "" : ` to <strong>${place}</strong>`;
  return `<h1 id="heading">${icon}<span>Prove a wallet${to} for ${bot}${on}</span></h1>`;
}

/** "A, B and C". */
function listed(names: string[]): string {
  const shown = names.map((name) => escapeHtml(name));
  return shown.length < 2
    ? (shown[0] ?? "")
    : `${shown.slice(0, -1).join(", ")} and ${shown.at(-1)}`;
}

function verifyPage(state: VerifyPageState, assets: PageAssets): string {
  const minutes = Math.max(1, Math.ceil((state.expiresAt - Date.now()) / 60_000));
  const chainName = escapeHtml(state.chainName);
  const served = state.chainsServed.length > 0 ? state.chainsServed : [state.chainName];
  // Before Connect wallet: #intro, #status above #connect, the wallets, what to do without one
  // (#no-wallet: "Open in" links on a phone, a QR code on a desktop) and the link's time. Once
  // proved, the script hides all but #verified, #proved-on and #status.
  return layout(
    `Prove a wallet for ${cleanName(state.botName) ?? "the bot"}`,
    `<header id="intro">
${heading(state)}
<p>Connect the wallet you hold on ${chainName} and sign a message: that proves to the bot the wallet is yours. Signing is free: it sends no transaction and moves nothing.</p>
<p>A proof by an ordinary wallet (its key's signature) holds on every EVM chain the bot serves: ${listed(served)}. A smart-contract wallet's proof holds only on the chain it is signed on, here ${chainName}.</p>
<p>The bot never asks for your recovery phrase or private key. Never type them anywhere.</p>
<p class="consent">${escapeHtml(MANAGERS_SEE)}</p>
</header>
<section id="verified" hidden>
<h2 tabindex="-1">Verified</h2>
<p class="address" id="address"></p>
</section>
<p id="proved-on" data-chain="${escapeHtml(state.chain)}" data-chain-name="${chainName}" hidden></p>
<p id="status" role="status"></p>
<button type="button" id="connect">Connect wallet</button>
<div id="wallets"></div>
<section id="no-wallet" hidden>
<div id="open-in" hidden>
<h2>Open this page in your wallet app</h2>
<p>This browser has no wallet. Tap your wallet app: it opens this page in its own browser, where you can sign.</p>
<ul id="apps"></ul>
<p class="small">Without the app, its link leads to where you can install it.</p>
</div>
<div id="scan" hidden>
<h2>Use the wallet on your phone</h2>
<p>Scan this code with your phone's camera to open this page there, then open it in your wallet app. Or install a wallet extension in this browser (MetaMask, Coinbase Wallet, Rabby…) and reload this page.</p>
<div id="qr"></div>
</div>
</section>
<p class="small" id="expiry">This link works once, for ${minutes} more minute${minutes === 1 ? "" : "s"}.</p>`,
    assets,
    true,
  );
}

function refusalPage(refusal: VerifyRefusal, assets: PageAssets): string {
  return layout(
    "This link does not work",
    `<h1>This link does not work</h1>
<p id="status" class="refused" role="alert">${escapeHtml(refusal.message)}</p>`,
    assets,
    false,
  );
}
