import type { z } from "zod";
import type { Logger } from "../log.ts";
import type { AnswerCache } from "./cache.ts";
import { ApiError, type ApiResource } from "./errors.ts";
import { createSchemas, type Out, type Schemas } from "./schemas.ts";
import type { Transport } from "./transport.ts";
import { InvalidInputError } from "./validate.ts";

/** The groups of the spec's freshness table: each read is cached for its group's TTL. */
export type TtlGroup = "behaviors" | "audience" | "contracts" | "top" | "ownership" | "nft" | "ens";
export type TtlSeconds = Record<TtlGroup, number>;

export interface CallOptions {
  signal?: AbortSignal | undefined;
  /** Skip the cache (the alert poller must see the service's newest answer). */
  fresh?: boolean;
  /** Background work (the alert poller): first in line for the upstream budget, never refused. */
  background?: boolean;
}

export interface Page {
  limit?: number;
  offset?: number;
}

/** One request of one endpoint, as the area clients describe it. */
export interface EndpointRequest {
  method: "GET" | "POST";
  path: string;
  query?: Record<string, string | readonly string[] | undefined>;
  body?: unknown;
  ttl?: TtlGroup;
  retry?: boolean;
  /** What the request is about: every error it ends in carries it. */
  resource: ApiResource;
}

/** One request: through the cache for reads with a TTL group, then parsed with its schema. */
export type Call = <K extends keyof Schemas>(
  schema: K,
  request: EndpointRequest,
  options: CallOptions | undefined,
) => Promise<Out<K>>;

export const seg = (value: string) => encodeURIComponent(value);

export function oneOf<T extends string>(value: string, allowed: readonly T[], what: string): T {
  if ((allowed as readonly string[]).includes(value)) return value as T;
  throw new InvalidInputError(
    "invalid_choice",
    `"${value}" is not a valid ${what}; use one of ${allowed.join(", ")}.`,
  );
}

export function pageQuery(
  page: Page | undefined,
  maxLimit = 500,
): Record<string, string | undefined> {
  const check = (value: number | undefined, what: string, min: number, max: number) => {
    if (value === undefined) return undefined;
    if (!Number.isInteger(value) || value < min || value > max) {
      throw new InvalidInputError(
        "number_out_of_range",
        `${what} must be a whole number from ${min} to ${max}.`,
      );
    }
    return String(value);
  };
  return {
    limit: check(page?.limit, "limit", 1, maxLimit),
    offset: check(page?.offset, "offset", 0, 1_000_000),
  };
}

/** An ISO 8601 timestamp given as a query bound, checked before it is sent. */
export function checkTimestamp(value: string | undefined, what: string): void {
  if (value !== undefined && Number.isNaN(Date.parse(value))) {
    throw new InvalidInputError("invalid_argument", `${what} must be an ISO 8601 timestamp.`);
  }
}

/**
 * Unknown enum values are logged once each. The bot remembers this many; past them it says so
 * once and stops logging them, so a hostile answer cannot flood the log or grow memory.
 */
const MAX_REMEMBERED_UNKNOWN = 1000;
/** An unknown value is logged (and remembered) cut to this length. */
const MAX_LOGGED_ENUM_VALUE = 100;

function unknownEnumLogger(logger: Logger): (enumName: string, value: string) => void {
  const reported = new Set<string>();
  let overflow = false;
  return (enumName, value) => {
    if (overflow) return;
    const shown =
      value.length > MAX_LOGGED_ENUM_VALUE ? `${value.slice(0, MAX_LOGGED_ENUM_VALUE)}…` : value;
    const key = `${enumName}:${shown}`;
    if (reported.has(key)) return;
    if (reported.size >= MAX_REMEMBERED_UNKNOWN) {
      overflow = true;
      reported.clear();
      logger.warn(
        { enum: enumName, remembered: MAX_REMEMBERED_UNKNOWN },
        "the data service sent more unknown enum values than the bot remembers: further ones are not logged one by one",
      );
      return;
    }
    reported.add(key);
    logger.warn(
      { enum: enumName, value: shown },
      "data service sent an enum value the spec does not list",
    );
  };
}

export interface CallDeps {
  transport: Transport;
  cache: AnswerCache;
  ttlSeconds: TtlSeconds;
  logger: Logger;
}

/** The one way every endpoint is called: cache, single flight, transport, schema. */
export function createCall({ transport, cache, ttlSeconds, logger }: CallDeps): Call {
  const schemas = createSchemas(unknownEnumLogger(logger));

  const parse = <K extends keyof Schemas>(
    schema: K,
    json: unknown,
    request: EndpointRequest,
  ): Out<K> => {
    const result = (schemas[schema] as z.ZodType).safeParse(json);
    if (result.success) return result.data as Out<K>;
    const issue = result.error.issues[0];
    const field = issue?.path.map(String).join(".") || "(root)";
    throw new ApiError({
      kind: "invalid_response",
      status: 200,
      method: request.method,
      path: request.path,
      resource: request.resource,
      field,
      message: `The data service's answer was not in the expected form at ${field}: ${issue?.message ?? "invalid"}.`,
    });
  };

  return async (schema, request, options) => {
    const load = async () => {
      const { json, bytes } = await transport.request({
        method: request.method,
        path: request.path,
        query: request.query ?? {},
        body: request.body,
        retry: request.retry ?? true,
        signal: request.ttl && !options?.fresh ? undefined : options?.signal,
        background: options?.background,
        resource: request.resource,
      });
      return { value: parse(schema, json, request), bytes };
    };
    if (!request.ttl || options?.fresh) return (await load()).value;
    const key = JSON.stringify([
      transport.baseUrl,
      request.method,
      request.path,
      request.query ?? {},
      request.body ?? null,
    ]);
    return cache.getOrLoad(key, ttlSeconds[request.ttl], load, {
      signal: options?.signal,
      check: (stored) => parse(schema, stored, request),
    });
  };
}
