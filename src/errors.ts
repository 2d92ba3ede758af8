import type { ErrorCode } from "./error-codes.ts";

export type { ErrorCode } from "./error-codes.ts";

/** What a log may hold about a refusal: plain values, never a secret, never shown to the person. */
export type ErrorContext = Readonly<Record<string, string | number | boolean | undefined>>;

/**
 * An expected failure the person can fix (bad input, a missing permission, nothing found).
 * Its message is shown to them as it is, so it must be plain, polite and free of secrets. Its code
 * (one of ERROR_CODES) says what kind of refusal it is, for logs, metrics and tests; its context,
 * for the log only.
 */
export class UserError extends Error {
  override name = "UserError";

  constructor(
    readonly code: ErrorCode,
    message: string,
    readonly context?: ErrorContext,
  ) {
    super(message);
  }
}

/**
 * A start-up failure the operator must fix. Its message says what failed and where (a path, a
 * URL), in one line, with no secret: it is printed as it is before the process exits.
 */
export class StartupError extends Error {
  override name = "StartupError";
}
