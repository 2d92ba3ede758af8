import { createHash } from "node:crypto";

/**
 * A send's idempotency key from what identifies the message: the same for every try at it (Discord
 * drops a re-send by its nonce, at most 25 characters).
 */
export const sendKey = (identity: string): string =>
  createHash("sha256").update(identity).digest("base64url").slice(0, 25);
