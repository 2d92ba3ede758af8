import { badRequest, HttpError } from "./errors.ts";
import type { World } from "./records.ts";

export interface SpamReport {
  kind: "spam" | "not_spam";
  walletAddress: string;
  contractAddress: string;
  tokenId?: string;
  feedback?: string;
  /** Date.now() when received. */
  at: number;
}

export interface RequestContext {
  world: World;
  /** Decoded path placeholders, in the order of the route's pattern. */
  params: string[];
  query: URLSearchParams;
  /** Parsed JSON body; undefined when there was none. */
  body: unknown;
  /** The simulator's clock (ms). */
  now: () => number;
  reports: SpamReport[];
  reportNotSpamSupported: boolean;
}

/** Returns the JSON body of a 200 answer, or throws an HttpError. */
export type Handler = (context: RequestContext) => unknown;

export interface Route {
  method: "GET" | "POST";
  /** Literal segments and `:name` placeholders, e.g. "/wallets/v1beta2/:wallet/nfts". */
  pattern: string;
  handler: Handler;
}

interface CompiledRoute extends Route {
  segments: string[];
}

export type RouteMatch =
  | { kind: "found"; route: Route; params: string[] }
  | { kind: "method_not_allowed"; allowed: string[] }
  | { kind: "not_found" };

export class Router {
  private readonly routes: CompiledRoute[];

  constructor(routes: readonly Route[]) {
    this.routes = routes.map((route) => ({ ...route, segments: route.pattern.split("/") }));
  }

  match(method: string, pathname: string): RouteMatch {
    const segments = pathname.split("/");
    const allowed: string[] = [];
    for (const route of this.routes) {
      const params = matchSegments(route.segments, segments);
      if (!params) continue;
      if (route.method === method) return { kind: "found", route, params };
      allowed.push(route.method);
    }
    return allowed.length > 0 ? { kind: "method_not_allowed", allowed } : { kind: "not_found" };
  }
}

function matchSegments(
  pattern: readonly string[],
  actual: readonly string[],
): string[] | undefined {
  if (pattern.length !== actual.length) return undefined;
  const params: string[] = [];
  for (const [index, expected] of pattern.entries()) {
    const segment = actual[index] ?? "";
    if (expected.startsWith(":")) {
      if (segment === "") return undefined;
      params.push(decodeSegment(segment));
    } else if (expected !== segment) {
      return undefined;
    }
  }
  return params;
}

function decodeSegment(segment: string): string {
  try {
    return decodeURIComponent(segment);
  } catch {
    throw badRequest("malformed percent-encoding in path");
  }
}

export function param(context: RequestContext, index: number): string {
  const value = context.params[index];
  if (value === undefined) throw new HttpError(500, `route parameter ${index} missing`);
  return value;
}
