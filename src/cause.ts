/**
 * Why a connection to a service failed, in plain words: the one classifier of network and
 * authentication failures for every start (Telegram, Discord over the gateway or HTTP, `npm run
 * register`, the data service). It reads errors by their shape, not their class, so it needs none
 * of the platform libraries: Node's system errors (`code`, `hostname`, `address`, `port`), fetch
 * and undici's `cause` chains, grammY's HttpError (`error`) and GrammyError (`error_code`,
 * `description`), discord.js's DiscordAPIError (`status`, `rawError`) and its TokenInvalid, and the
 * data-service client's ApiError (`kind`, `status`).
 *
 * It never reads an error's message: node-fetch's message carries the request URL, and grammY's
 * URLs carry the bot token.
 */

export type CauseKind =
  | "dns"
  | "dns_temporary"
  | "refused"
  | "reset"
  | "unreachable"
  | "timeout"
  | "tls"
  | "unauthorized"
  | "forbidden"
  | "not_found"
  | "rate_limited"
  | "server"
  | "unknown";

/** What failed to connect, for the words: "Telegram", its URL, and the setting of its secret. */
export interface Target {
  service: string;
  url: string;
  /** The setting holding the credential, named in a 401 or 403 (TELEGRAM_BOT_TOKEN, API_KEY). */
  credential?: string | undefined;
  /** What the credential is ("bot token", "API key"). */
  credentialName?: string | undefined;
}

export interface Cause {
  kind: CauseKind;
  /** One line naming the service, where, and why; never a secret the URL does not hold. */
  line: string;
  /**
   * Will not fix itself in the next seconds (no such host, nothing listening, a certificate, a
   * refused token): retrying only hides it.
   */
  lasting: boolean;
  /** Recognised: its line says it all, and a stack would only bury it. */
  known: boolean;
}

/** Node's names of a certificate that cannot be trusted, in words. */
const CERTIFICATE_PROBLEMS: Record<string, string> = {
  DEPTH_ZERO_SELF_SIGNED_CERT: "its certificate is self-signed",
  SELF_SIGNED_CERT_IN_CHAIN: "its certificate chain ends in a self-signed certificate",
  CERT_HAS_EXPIRED: "its certificate has expired",
  CERT_NOT_YET_VALID: "its certificate is not valid yet",
  UNABLE_TO_VERIFY_LEAF_SIGNATURE:
    "its certificate is not signed by an authority this machine trusts",
  UNABLE_TO_GET_ISSUER_CERT: "its certificate is not signed by an authority this machine trusts",
  UNABLE_TO_GET_ISSUER_CERT_LOCALLY:
    "its certificate is not signed by an authority this machine trusts",
  ERR_TLS_CERT_ALTNAME_INVALID: "its certificate is for another host name",
  CERT_REVOKED: "its certificate has been revoked",
};

const TIMEOUT_CODES = new Set([
  "ETIMEDOUT",
  "UND_ERR_CONNECT_TIMEOUT",
  "UND_ERR_HEADERS_TIMEOUT",
  "UND_ERR_BODY_TIMEOUT",
  "ESOCKETTIMEDOUT",
]);
const RESET_CODES = new Set(["ECONNRESET", "EPIPE", "UND_ERR_SOCKET", "ECONNABORTED"]);
const UNREACHABLE_CODES = new Set(["EHOSTUNREACH", "ENETUNREACH", "ENETDOWN", "EHOSTDOWN"]);

interface Found {
  code?: string;
  status?: number;
  description?: string;
  hostname?: string;
  address?: string;
  port?: number;
  timeout?: boolean;
}

/** The error and what it wraps (cause, grammY's `error`, an AggregateError's first), nearest first. */
function chain(error: unknown): Record<string, unknown>[] {
  const out: Record<string, unknown>[] = [];
  const queue: unknown[] = [error];
  while (queue.length > 0 && out.length < 8) {
    const current = queue.shift();
    if (typeof current !== "object" || current === null || out.includes(current as never)) continue;
    const record = current as Record<string, unknown>;
    out.push(record);
    queue.push(record.cause, record.error);
    if (Array.isArray(record.errors)) queue.push(record.errors[0]);
  }
  return out;
}

/** The first code (ECONNREFUSED, EADDRINUSE…) anywhere in the error's chain; else undefined. */
export function errorCode(error: unknown): string | undefined {
  return find(error).code;
}

/** The first code, status and address anywhere in the chain. */
function find(error: unknown): Found {
  const found: Found = {};
  for (const link of chain(error)) {
    const { code, status, error_code, kind, name, hostname, address, port, description } = link;
    if (found.code === undefined && typeof code === "string" && /^[A-Z][A-Z0-9_]+$/.test(code))
      found.code = code;
    // discord.js: a gateway closed with 4004, or a 401 on /gateway/bot.
    if (found.code === undefined && code === "TokenInvalid") found.status = 401;
    const httpStatus =
      typeof error_code === "number" ? error_code : typeof status === "number" ? status : undefined;
    if (found.status === undefined && httpStatus !== undefined && httpStatus >= 400) {
      found.status = httpStatus;
      const raw = link.rawError as { message?: unknown } | undefined;
      const words = typeof description === "string" ? description : raw?.message;
      if (typeof words === "string") found.description = words.replace(/^\d{3}:\s*/, "");
    }
    if (kind === "timeout" || name === "TimeoutError" || code === "ABORT_ERR") found.timeout = true;
    if (found.hostname === undefined && typeof hostname === "string") found.hostname = hostname;
    if (found.address === undefined && typeof address === "string") found.address = address;
    if (found.port === undefined && typeof port === "number") found.port = port;
  }
  return found;
}

/** host and host:port of the target, preferring what the error says it tried. */
function where(target: Target, found: Found): { host: string; hostPort: string } {
  let host = found.hostname ?? "";
  let port = found.port;
  try {
    const url = new URL(target.url);
    host ||= url.hostname;
    port ??= Number(url.port || (url.protocol === "https:" ? 443 : 80));
  } catch {
    // Not a URL: what the error said is all there is.
  }
  const address = found.address ?? host;
  const shown = address.includes(":") ? `[${address}]` : address;
  return { host, hostPort: port === undefined ? shown : `${shown}:${port}` };
}

const STATUS_WORDS: Record<number, string> = {
  401: "Unauthorized",
  403: "Forbidden",
  404: "Not Found",
  429: "Too Many Requests",
};

/** Why the connection to `target` failed, in one line, and whether waiting could help. */
export function explainFailure(error: unknown, target: Target): Cause {
  const found = find(error);
  const { host, hostPort } = where(target, found);
  const { service, url } = target;
  const reach = (why: string) => `Cannot reach ${service} at ${url}: ${why}`;
  const make = (kind: CauseKind, line: string, lasting: boolean): Cause => ({
    kind,
    // "the data service rejected…" starts a line.
    line: line.charAt(0).toUpperCase() + line.slice(1),
    lasting,
    known: kind !== "unknown",
  });
  const { code, status } = found;

  if (status !== undefined) {
    const words = found.description ?? STATUS_WORDS[status] ?? "";
    const answered = `${status}${words ? ` ${words}` : ""}`;
    const credential = target.credentialName ?? "credentials";
    const check = target.credential ? `: check ${target.credential}` : "";
    if (status === 401)
      return make(
        "unauthorized",
        `${service} rejected the ${credential} (${answered})${check}`,
        true,
      );
    if (status === 403)
      return make(
        "forbidden",
        `${service} refused access (${answered})${check}${target.credential ? " and what it is allowed to do" : ""}`,
        true,
      );
    if (status === 404)
      return make(
        "not_found",
        `${service} answered ${answered} at ${url}: check the address`,
        true,
      );
    if (status === 429) return make("rate_limited", reach(`rate limited (${answered})`), false);
    if (status >= 500)
      return make("server", reach(`it answered ${answered}, a fault on its side`), false);
  }
  if (code === "ENOTFOUND")
    return make("dns", reach(`DNS lookup failed for ${host} (no such host name)`), true);
  if (code === "EAI_AGAIN")
    return make(
      "dns_temporary",
      reach(`DNS lookup failed for ${host} (the name server did not answer)`),
      false,
    );
  if (code === "ECONNREFUSED")
    return make(
      "refused",
      reach(`connection refused by ${hostPort} (nothing listening there)`),
      true,
    );
  if (code !== undefined && CERTIFICATE_PROBLEMS[code] !== undefined)
    return make("tls", reach(`TLS failure: ${CERTIFICATE_PROBLEMS[code]} (${code})`), true);
  if (code !== undefined && (/^(ERR_SSL_|ERR_TLS_)|CERT/.test(code) || code === "EPROTO"))
    return make("tls", reach(`TLS failure: certificate or handshake problem (${code})`), true);
  if (found.timeout || (code !== undefined && TIMEOUT_CODES.has(code)))
    return make("timeout", reach(`timed out talking to ${hostPort}`), false);
  if (code !== undefined && RESET_CODES.has(code))
    return make(
      "reset",
      reach(`connection to ${hostPort} closed before an answer (${code})`),
      false,
    );
  if (code !== undefined && UNREACHABLE_CODES.has(code))
    return make(
      "unreachable",
      reach(`no route to ${hostPort} (${code}): is the network up?`),
      false,
    );
  if (status !== undefined)
    return make(
      "unknown",
      `${service} answered ${status} at ${url}${found.description ? `: ${found.description}` : ""}`,
      true,
    );
  const message = error instanceof Error ? error.message : String(error);
  return make("unknown", reach(code ? `${code}: ${message}` : message), true);
}
