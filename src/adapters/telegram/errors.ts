import { GrammyError, HttpError } from "grammy";
import type { SendFailure } from "../../outbound/types.ts";

/**
 * Telegram's words for "the bot may not post here": a group that took its right to send, a
 * channel where it is not an admin. (A group that only forbids media says "to send photos":
 * that one is not meant, the text still gets through.)
 */
const NO_RIGHT_TO_POST =
  /not enough rights to send text messages|have no rights to send a message|CHAT_WRITE_FORBIDDEN|need administrator rights in the channel/i;

/** Permanent send failures: retrying them only burns the bot's budget. */
export function isPermanentTelegramError(error: unknown): boolean {
  if (!(error instanceof GrammyError)) return false;
  return (
    error.error_code === 403 ||
    (error.error_code === 400 && /chat not found/i.test(error.description)) ||
    NO_RIGHT_TO_POST.test(error.description)
  );
}

/**
 * A photo or document refused for what it is rather than where it goes: a 4xx other than the
 * chat being gone (or moved, or a 429 that auto-retry already waited out). "not enough rights to
 * send photos", a URL Telegram cannot fetch, a file too large, a Bot API without the method.
 */
export function isAttachmentRefused(error: unknown): boolean {
  return (
    error instanceof GrammyError &&
    error.error_code >= 400 &&
    error.error_code < 500 &&
    error.error_code !== 429 &&
    error.parameters.migrate_to_chat_id === undefined &&
    !isPermanentTelegramError(error)
  );
}

/** How delivery treats a failed alert send (see ChatSender.classifySendError, src/outbound). */
export function classifyTelegramError(error: unknown): SendFailure {
  if (error instanceof GrammyError) {
    if (error.error_code === 429) {
      return { kind: "rate_limited", retryAfterMs: (error.parameters.retry_after ?? 5) * 1000 };
    }
    // A group upgraded to a supergroup: the same chat under a new id.
    const movedTo = error.parameters.migrate_to_chat_id;
    if (movedTo !== undefined) return { kind: "moved", newChatId: String(movedTo) };
    if (isPermanentTelegramError(error))
      return { kind: "permanent", reason: `Telegram: ${error.description}` };
    return { kind: "transient", reason: `Telegram ${error.error_code}: ${error.description}` };
  }
  if (error instanceof HttpError)
    return { kind: "transient", reason: "network error reaching Telegram" };
  return { kind: "transient", reason: error instanceof Error ? error.message : String(error) };
}
