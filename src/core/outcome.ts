import type { ErrorCode } from "../error-codes.ts";
import type { RenderableReply } from "./reply.ts";

/** How an invocation ended, as metrics count it and adapters show it. */

export type Outcome = "ok" | "user_error" | "api_error" | "rate_limited" | "deadline" | "bug";

export interface OutcomeEvent {
  command: string;
  kind: "command" | "button";
  outcome: Outcome;
  /** Why it was refused, for a "user_error" or a "rate_limited" (a closed set: bounded labels). */
  code?: ErrorCode;
  ms: number;
}

/**
 * What the runtime gives an adapter: the reply, and how the invocation ended. An adapter shows a
 * refusal (any outcome but "ok") apart from an answer: see `isRefusal` in src/adapters/types.ts.
 */
export interface Answered {
  reply: RenderableReply;
  outcome: Outcome;
  /** Why it was refused, for a "user_error" or a "rate_limited". */
  code?: ErrorCode;
}
