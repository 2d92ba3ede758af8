import type { ErrorJson } from "./types.ts";

/**
 * An error the simulator answers with. The body format is not in the spec; the simulator uses
 * `{"code": <gRPC status code>, "message": "..."}`, the shape gRPC-gateway services produce.
 */
export class HttpError extends Error {
  readonly status: number;

  constructor(status: number, message: string) {
    super(message);
    this.name = "HttpError";
    this.status = status;
  }
}

const GRPC_CODE_BY_STATUS: Readonly<Record<number, number>> = {
  400: 3, // INVALID_ARGUMENT
  401: 16, // UNAUTHENTICATED
  404: 5, // NOT_FOUND
  405: 12, // UNIMPLEMENTED
  413: 3,
  429: 8, // RESOURCE_EXHAUSTED
  500: 13, // INTERNAL
  502: 14, // UNAVAILABLE
  503: 14,
  504: 4, // DEADLINE_EXCEEDED
};

const DEFAULT_MESSAGES: Readonly<Record<number, string>> = {
  400: "invalid argument",
  401: "missing or invalid API key",
  404: "not found",
  429: "rate limit exceeded",
  500: "internal error",
  502: "bad gateway",
  503: "service unavailable",
  504: "upstream timeout",
};

export function errorBody(status: number, message?: string): ErrorJson {
  return {
    code: GRPC_CODE_BY_STATUS[status] ?? 2, // 2 = UNKNOWN
    message: message ?? DEFAULT_MESSAGES[status] ?? `status ${status}`,
  };
}

export function badRequest(message: string): HttpError {
  return new HttpError(400, message);
}

export function notFound(message: string): HttpError {
  return new HttpError(404, message);
}
