import pRetry from "p-retry";
import { Agent, type Dispatcher, request } from "undici";
import type { Logger } from "../log.ts";
import { scrubSecrets } from "../log.ts";
import { stripControlCharacters } from "../strings.ts";
import { type Budget, BudgetExceededError } from "./budget.ts";
import {
  ApiError,
  type ApiErrorKind,
  type ApiResource,
  kindForStatus,
  RETRYABLE_STATUSES,
} from "./errors.ts";

export interface TransportOptions {
  baseUrl: string;
  apiKey: string | undefined;
  /** Per attempt. */
  timeoutMs: number;
  /** Retries after the first attempt, for reads. */
  retries: number;
  retryMinDelayMs: number;
  retryMaxDelayMs: number;
  /** Bound on the whole call, retries and waits included. */
  retryMaxTotalMs: number;
  /** Largest body read from one response; past it the answer is refused. */
  maxBodyBytes: number;
  /** Every attempt, retries included, takes a token from it first. */
  budget?: Budget;
  logger: Logger;
  dispatcher?: Dispatcher;
}

export interface RequestSpec {
  method: "GET" | "POST";
  /** Already URL-encoded, starting with "/". */
  path: string;
  query?: Record<string, string | readonly string[] | undefined>;
  body?: unknown;
  /** Reads are retried; spam reports are not (a retried report could count twice). */
  retry: boolean;
  signal?: AbortSignal | undefined;
  /** The alert poller: first in line for the budget, never refused by it. */
  background?: boolean | undefined;
  /** What the request is about: every error it ends in carries it. */
  resource?: ApiResource | undefined;
}

/** A parsed answer and the size of its body as received (the cache's measure). */
export interface Answer {
  json: unknown;
  bytes: number;
}

export type RequestObserver = (event: {
  method: string;
  path: string;
  status: number | "error";
  ms: number;
  attempt: number;
}) => void;

const sleep = (ms: number, signal?: AbortSignal) =>
  new Promise<void>((resolve, reject) => {
    if (signal?.aborted) return reject(signal.reason);
    const timer = setTimeout(() => {
      signal?.removeEventListener("abort", onAbort);
      resolve();
    }, ms);
    const onAbort = () => {
      clearTimeout(timer);
      reject(signal?.reason);
    };
    signal?.addEventListener("abort", onAbort, { once: true });
  });

/** Retry-After is either delta-seconds or an HTTP date. */
export function parseRetryAfter(
  header: string | string[] | undefined,
  now = Date.now(),
): number | undefined {
  const value = Array.isArray(header) ? header[0] : header;
  if (!value) return undefined;
  if (/^\d+(\.\d+)?$/.test(value.trim())) return Number(value.trim());
  const date = Date.parse(value);
  return Number.isNaN(date) ? undefined : Math.max(0, (date - now) / 1000);
}

const NETWORK_ERROR_CODES = new Set([
  "ECONNREFUSED",
  "ECONNRESET",
  "EPIPE",
  "ENOTFOUND",
  "EAI_AGAIN",
  "ETIMEDOUT",
  "UND_ERR_SOCKET",
  "UND_ERR_CONNECT_TIMEOUT",
  "UND_ERR_CLOSED",
]);

/**
 * HTTP to the data service on undici: the API key in one header, a timeout on every attempt,
 * retries with exponential backoff and jitter for reads (honouring Retry-After), one ApiError for
 * every failure, and no secret in any error or log line.
 */
export class Transport {
  private readonly dispatcher: Dispatcher;
  private readonly ownsDispatcher: boolean;
  private readonly secrets: string[];
  observer: RequestObserver | undefined;
  /** Requests done in this turn of the event loop, told to the observer on the next (report). */
  private observed: Parameters<RequestObserver>[0][] = [];

  constructor(private readonly options: TransportOptions) {
    this.ownsDispatcher = options.dispatcher === undefined;
    this.dispatcher =
      options.dispatcher ??
      new Agent({ keepAliveTimeout: 30_000, connections: 64, headersTimeout: 0, bodyTimeout: 0 });
    this.secrets = options.apiKey ? [options.apiKey] : [];
  }

  get baseUrl(): string {
    return this.options.baseUrl;
  }

  async request(spec: RequestSpec): Promise<Answer> {
    const { options } = this;
    if (!spec.retry) return this.attempt(spec, 1);
    const started = performance.now();
    // The first attempt runs bare (pRetry costs ~20 µs a call, on every cold read); its failure is
    // handed to pRetry as pRetry's own first attempt, so waits, logs and limits are pRetry's.
    let firstFailure: unknown;
    try {
      return await this.attempt(spec, 1);
    } catch (error) {
      if (!(error instanceof ApiError && isRetryable(error)) || options.retries <= 0) throw error;
      firstFailure = error;
    }
    return pRetry(
      (attempt) => (attempt === 1 ? Promise.reject(firstFailure) : this.attempt(spec, attempt)),
      {
        retries: options.retries,
        factor: 2,
        minTimeout: options.retryMinDelayMs,
        maxTimeout: options.retryMaxDelayMs,
        randomize: true,
        maxRetryTime: Math.max(0, options.retryMaxTotalMs - (performance.now() - started)),
        ...(spec.signal ? { signal: spec.signal } : {}),
        shouldRetry: ({ error }) => error instanceof ApiError && isRetryable(error),
        onFailedAttempt: async ({ error, retriesLeft, attemptNumber }) => {
          if (!(error instanceof ApiError) || !isRetryable(error) || retriesLeft <= 0) return;
          options.logger.debug(
            {
              method: spec.method,
              path: spec.path,
              kind: error.kind,
              status: error.status,
              attempt: attemptNumber,
            },
            "data service request failed, will retry",
          );
          if (error.retryAfter !== undefined) {
            const waitMs = error.retryAfter * 1000;
            // Waiting past the call's time budget helps nobody: say "busy, try again in N s" now.
            if (performance.now() - started + waitMs > options.retryMaxTotalMs) throw error;
            await sleep(waitMs, spec.signal);
          }
        },
      },
    );
  }

  private async attempt(spec: RequestSpec, attempt: number): Promise<Answer> {
    const { options } = this;
    const url = new URL(options.baseUrl + spec.path);
    for (const [key, value] of Object.entries(spec.query ?? {})) {
      if (value === undefined) continue;
      for (const item of typeof value === "string" ? [value] : value)
        url.searchParams.append(key, item);
    }
    const headers: Record<string, string> = { accept: "application/json" };
    if (options.apiKey !== undefined) headers["x-api-key"] = options.apiKey;
    let requestBody: string | null = null;
    if (spec.body !== undefined) {
      headers["content-type"] = "application/json";
      requestBody = JSON.stringify(spec.body);
    }
    const fail = (
      kind: ApiErrorKind,
      message: string,
      status?: number,
      retryAfter?: number,
      code?: string,
    ) =>
      new ApiError({
        kind,
        status,
        method: spec.method,
        path: spec.path,
        resource: spec.resource,
        message: scrubSecrets(message, this.secrets),
        ...(retryAfter !== undefined ? { retryAfter } : {}),
        ...(code !== undefined ? { code } : {}),
      });
    const cancelled = () =>
      fail("timeout", "The request was cancelled: the command ran out of time.");

    try {
      // A free token is taken without an await: each of a command's parallel reads leaves at once
      // instead of after the others' preparations.
      const { budget } = options;
      if (budget && (spec.signal?.aborted || !budget.tryTake?.()))
        await budget.take({ background: spec.background, signal: spec.signal });
    } catch (error) {
      if (!(error instanceof BudgetExceededError)) throw cancelled();
      throw fail(
        "rate_limited",
        "The bot's budget of requests to the data service is spent for now.",
        undefined,
        Math.max(1, Math.ceil(error.retryAfterMs / 1000)),
      );
    }

    // One deadline for the whole attempt: connecting, headers and every byte of the body. One
    // controller and a timer: AbortSignal.timeout and AbortSignal.any cost ~35 µs a request.
    const controller = new AbortController();
    let timedOut = false;
    const timer = setTimeout(() => {
      timedOut = true;
      controller.abort(new DOMException("The attempt timed out", "TimeoutError"));
    }, options.timeoutMs);
    const onCallerAbort = () => controller.abort(spec.signal?.reason);
    if (spec.signal?.aborted) onCallerAbort();
    else spec.signal?.addEventListener("abort", onCallerAbort, { once: true });
    const signal = controller.signal;
    const started = performance.now();

    let status: number;
    let body: { text: string; bytes: number } | undefined;
    let retryAfterHeader: string | string[] | undefined;
    try {
      const response = await request(url, {
        method: spec.method,
        headers,
        body: requestBody,
        signal,
        dispatcher: this.dispatcher,
      });
      status = response.statusCode;
      retryAfterHeader = response.headers["retry-after"];
      body = await readCapped(response, options.maxBodyBytes);
    } catch (error) {
      this.report({
        method: spec.method,
        path: spec.path,
        status: "error",
        ms: performance.now() - started,
        attempt,
      });
      if (spec.signal?.aborted) throw cancelled();
      if (timedOut)
        throw fail("timeout", `The data service did not answer within ${options.timeoutMs} ms.`);
      const code =
        (error as { code?: string }).code ?? (error as { cause?: { code?: string } }).cause?.code;
      const known = code && NETWORK_ERROR_CODES.has(code) ? code : undefined;
      // Any system code is kept (a certificate's too), for the start's one line (src/cause.ts);
      // the message, which people may see, names only the codes above.
      throw fail(
        "unavailable",
        `Could not reach the data service (${known ?? "network error"}).`,
        undefined,
        undefined,
        typeof code === "string" && /^[A-Z][A-Z0-9_]+$/.test(code) ? code : undefined,
      );
    } finally {
      clearTimeout(timer);
      spec.signal?.removeEventListener("abort", onCallerAbort);
    }
    this.report({
      method: spec.method,
      path: spec.path,
      status,
      ms: performance.now() - started,
      attempt,
    });

    if (status >= 200 && status < 300) {
      if (!body) {
        throw fail(
          "invalid_response",
          `The data service sent an answer larger than ${options.maxBodyBytes} bytes.`,
          status,
        );
      }
      if (body.text.length === 0) return { json: {}, bytes: 0 };
      try {
        return { json: JSON.parse(body.text) as unknown, bytes: body.bytes };
      } catch {
        throw fail(
          "invalid_response",
          "The data service sent a response that is not JSON.",
          status,
        );
      }
    }
    throw fail(
      kindForStatus(status),
      errorMessage(status, body?.text ?? ""),
      status,
      parseRetryAfter(retryAfterHeader),
    );
  }

  /**
   * Tells the observer (metrics) of a request on the next turn of the event loop, with the others
   * of this turn: counting is no part of an answer's way to the command that waits for it.
   */
  private report(event: Parameters<RequestObserver>[0]): void {
    if (!this.observer) return;
    this.observed.push(event);
    if (this.observed.length > 1) return;
    setImmediate(() => {
      const events = this.observed;
      this.observed = [];
      for (const observed of events) this.observer?.(observed);
    });
  }

  async close(): Promise<void> {
    if (this.ownsDispatcher) await this.dispatcher.close();
  }
}

/**
 * The body as text, or undefined when it is larger than `max` bytes (declared or as it streams
 * in): the rest is not read and the connection is dropped, so a body that never ends costs at
 * most `max` bytes.
 */
async function readCapped(
  response: Dispatcher.ResponseData,
  max: number,
): Promise<{ text: string; bytes: number } | undefined> {
  if (Number(response.headers["content-length"]) > max) {
    // undici 6 reports its own abort of a destroyed body as an 'error' event: expected here.
    response.body.once("error", () => {});
    response.body.destroy();
    return undefined;
  }
  // Events rather than `for await`: the async iterator costs promise hops per chunk.
  const body = response.body;
  return new Promise((resolve, reject) => {
    const chunks: Buffer[] = [];
    let bytes = 0;
    body.on("data", (chunk: Buffer) => {
      bytes += chunk.length;
      if (bytes > max) {
        body.destroy();
        resolve(undefined);
        return;
      }
      chunks.push(chunk);
    });
    body.once("end", () => resolve({ text: Buffer.concat(chunks, bytes).toString("utf8"), bytes }));
    body.once("error", reject);
    // Settled already unless the body stopped without an end or an error.
    body.once("close", () => reject(new Error("the response body closed before its end")));
  });
}

function isRetryable(error: ApiError): boolean {
  if (error.status !== undefined) return RETRYABLE_STATUSES.has(error.status);
  return error.kind === "unavailable";
}

/** The error body format is not in the spec: a JSON `message` when there is one, else the status. */
function errorMessage(status: number, text: string): string {
  try {
    const parsed = JSON.parse(text) as unknown;
    if (
      parsed &&
      typeof parsed === "object" &&
      "message" in parsed &&
      typeof parsed.message === "string"
    ) {
      return stripControlCharacters(parsed.message).slice(0, 500);
    }
  } catch {
    // not JSON: fall through to the status text
  }
  return `HTTP ${status}`;
}
