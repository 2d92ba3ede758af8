import type { SendFailure } from "./types.ts";

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
 * The one send decision that every post sent unasked follows (alerts, digests, watches, through
 * src/outbound/outbound.ts): a rate limit waits its Retry-After, a transient failure backs off, a
 * move is followed, a refusal pauses. `attempts`: the failed tries before this one. A new kind of failure fails to compile here until it has its
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

/**
 * How a kind of post is retried: how many failed tries it gets and how its waits grow. Only
 * these numbers differ between alerts, digests and watches; the decision and its counting are
 * the same for all (sendStep, spentBy).
 */
export interface SendPolicy {
  /** Failed tries after which a post is given up (a rate limit counts none); Infinity: never. */
  maxAttempts: number;
  /** The waits after failed tries: doubling from `baseMs` with the tries counted before. */
  backoff: BackoffOptions;
}

/** Whether one more counted failure after `attempts` spends a post's tries. */
export const spentBy = (policy: Pick<SendPolicy, "maxAttempts">, attempts: number): boolean =>
  attempts + 1 >= policy.maxAttempts;
