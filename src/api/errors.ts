export type ApiErrorKind =
  | "bad_request"
  | "not_found"
  | "unauthorized"
  | "rate_limited"
  | "unavailable"
  | "timeout"
  | "invalid_response";

/**
 * What a request was about, so a failure can be told in words about it (src/core/api-errors.ts)
 * without reading the URL path back. Addresses and names are in the canonical form sent.
 */
export type ApiResource =
  | { kind: "collection"; address: string }
  | { kind: "token"; contract: string; tokenId: string }
  | { kind: "wallet"; wallet: string }
  /** Endpoint 13: a wallet's tokens, maybe in one collection. */
  | { kind: "holdings"; owner: string }
  /** Endpoints 1 and 5: a list of wallets. */
  | { kind: "wallets" }
  | { kind: "segment" }
  | { kind: "contracts" }
  | { kind: "ranking" }
  | { kind: "ens"; name: string }
  | { kind: "ens_address"; address: string };

export interface ApiErrorInit {
  kind: ApiErrorKind;
  status: number | undefined;
  method: string;
  /** Path without the base URL and without the query string: never carries a secret. */
  path: string;
  resource?: ApiResource | undefined;
  message: string;
  /** Seconds, from a Retry-After header. */
  retryAfter?: number;
  /** For invalid_response: the dotted path of the first field that did not match. */
  field?: string;
  /** For a network failure: the system or undici error code (ECONNREFUSED, UND_ERR_SOCKET…). */
  code?: string;
}

/** Every failure of the data service, as one typed error. */
export class ApiError extends Error {
  override name = "ApiError";
  readonly kind: ApiErrorKind;
  readonly status: number | undefined;
  readonly method: string;
  readonly path: string;
  readonly resource: ApiResource | undefined;
  readonly retryAfter: number | undefined;
  readonly field: string | undefined;
  readonly code: string | undefined;

  constructor(init: ApiErrorInit) {
    super(init.message);
    this.kind = init.kind;
    this.status = init.status;
    this.method = init.method;
    this.path = init.path;
    this.resource = init.resource;
    this.retryAfter = init.retryAfter;
    this.field = init.field;
    this.code = init.code;
  }

  /** Worth another try later: the service was busy or briefly broken. */
  get transient(): boolean {
    return this.kind === "rate_limited" || this.kind === "unavailable" || this.kind === "timeout";
  }
}

/**
 * How loud a failure of the data service is in the log. Not found, refused and busy are answers
 * people meet every day (debug); the service down is worth a warning; a refused key or an answer
 * the bot cannot read is the operator's to fix (error). None is a bug: no stack is logged.
 */
export function apiErrorLevel(error: ApiError): "debug" | "warn" | "error" {
  switch (error.kind) {
    case "not_found":
    case "bad_request":
    case "rate_limited":
      return "debug";
    case "unavailable":
    case "timeout":
      return "warn";
    case "unauthorized":
    case "invalid_response":
      return "error";
  }
}

/** The one place an HTTP status becomes an error kind. */
export function kindForStatus(status: number): ApiErrorKind {
  if (status === 400 || status === 422) return "bad_request";
  if (status === 401 || status === 403) return "unauthorized";
  if (status === 404) return "not_found";
  if (status === 408) return "timeout";
  if (status === 429) return "rate_limited";
  if (status >= 500) return "unavailable";
  return "bad_request";
}

/** Statuses a read may be retried on (the service's docs advise backoff for 429 and 5xx). */
export const RETRYABLE_STATUSES: ReadonlySet<number> = new Set([429, 500, 502, 503, 504]);
