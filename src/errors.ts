/**
 * An expected failure the person can fix (bad input, a missing permission, nothing found).
 * Its message is shown to them as it is, so it must be plain, polite and free of secrets.
 */
export class UserError extends Error {
  override name = "UserError";
}
