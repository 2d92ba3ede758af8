/**
 * How a send failed, as the platform adapter tells it. `rate_limited`: the platform said when
 * to come back; `transient`: worth another try later; `permanent`: the chat refuses the bot
 * (gone, blocked, kicked, no right to post); `moved`: the chat has a new id (a Telegram group
 * upgraded to a supergroup).
 */
export type SendFailure =
  | { kind: "rate_limited"; retryAfterMs: number }
  | { kind: "transient"; reason: string }
  | { kind: "permanent"; reason: string }
  | { kind: "moved"; newChatId: string };

/**
 * What the sender does next. `retry`: try again after `afterMs` (`countsTry`: the try counts
 * towards the sender's give-up limit; a rate limit never does); `follow`: move the chat's things
 * to the new id and try there at once (the try counts, so a chat that keeps "moving" cannot loop
 * for ever); `pause`: stop sending to that chat, keep the reason to show its managers, and resume
 * when the chat works again.
 */
export type SendStep =
  | { step: "retry"; afterMs: number; countsTry: boolean; reason: string }
  | { step: "follow"; newChatId: string; reason: string }
  | { step: "pause"; reason: string };

export interface BackoffOptions {
  /** The first wait; doubles with every failed try. Default 2 s. */
  baseMs?: number;
  /** Spread each wait ±25% so senders that failed together do not retry together. Default on. */
  jitter?: boolean;
}

/**
 * The wait before the try after `attempts` failed ones: doubling from `baseMs`, at most 15 min,
 * spread ±25% unless `jitter` is off.
 */
export function backoffMs(
  attempts: number,
  { baseMs = 2_000, jitter = true }: BackoffOptions = {},
): number {
  const ms = Math.min(15 * 60_000, baseMs * 2 ** Math.min(attempts, 10));
  return jitter ? ms * (0.75 + Math.random() / 2) : ms;
}

/** The failures worth another try of the same send (a report retry meets only these). */
export type RetryableFailure = Extract<SendFailure, { kind: "rate_limited" | "transient" }>;

/**
 * When to try again: a rate limit waits exactly its Retry-After and never counts a try; a
 * transient failure backs off from the `attempts` failed tries before it, and counts.
 */
export function retryWait(
  failure: RetryableFailure,
  attempts: number,
  backoff: BackoffOptions = {},
): { afterMs: number; countsTry: boolean; reason: string } {
  return failure.kind === "rate_limited"
    ? { afterMs: Math.max(0, failure.retryAfterMs), countsTry: false, reason: "rate limited" }
    : { afterMs: backoffMs(attempts, backoff), countsTry: true, reason: failure.reason };
}

/**
 * The one send policy that alerts, digests and watches follow: a rate limit waits its
 * Retry-After, a transient failure backs off, a move is followed, a refusal pauses. `attempts`:
 * the failed tries before this one. A new kind of failure fails to compile here until it has its
 * step.
 */
export function sendStep(
  failure: SendFailure,
  attempts: number,
  backoff: BackoffOptions = {},
): SendStep {
  switch (failure.kind) {
    case "rate_limited":
    case "transient":
      return { step: "retry", ...retryWait(failure, attempts, backoff) };
    case "moved":
      return {
        step: "follow",
        newChatId: failure.newChatId,
        reason: `the chat moved to ${failure.newChatId}`,
      };
    case "permanent":
      return { step: "pause", reason: failure.reason };
    default:
      return unknownFailure(failure);
  }
}

function unknownFailure(failure: never): never {
  throw new Error(`no send step for ${JSON.stringify(failure)}`);
}
