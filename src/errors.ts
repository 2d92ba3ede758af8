/**
 * An expected failure the person can fix (bad input, a missing permission, nothing found).
 * Its message is shown to them as it is, so it must be plain, polite and free of secrets.
 */
export class UserError extends Error {
  override name = "UserError";
}

/**
 * A start-up failure the operator must fix. Its message says what failed and where (a path, a
 * URL), in one line, with no secret: it is printed as it is before the process exits.
 */
export class StartupError extends Error {
  override name = "StartupError";
}
