import { ApiError, apiErrorLevel } from "../api/errors.ts";
import type { ErrorCode, ErrorContext } from "../errors.ts";
import type { Logger } from "../log.ts";
import { apiErrorMessage, asUserError } from "./api-errors.ts";
import type { Invocation } from "./command.ts";
import type { Outcome } from "./outcome.ts";
import { type RenderableReply, userErrorReply } from "./reply.ts";

/** The command ran past its deadline (COMMAND_DEADLINE_MS): its signal aborts with it. */
export class DeadlineError extends Error {
  override name = "DeadlineError";
}

/** How an invocation that failed ends: what the person is shown, and how it counts. */
export interface Failure {
  outcome: Outcome;
  reply: RenderableReply;
  code?: ErrorCode;
  context?: ErrorContext;
}

/**
 * What a command (or button) that threw answers: the deadline passed (its own, or a data-service
 * read cut short by the aborted `signal`); a refusal the person can fix, its code and context
 * counted and logged; the data service's failure, in plain words; else a bug, logged, with the
 * ref the person can give the operator.
 */
export function failureOf(
  error: unknown,
  invocation: Invocation,
  logger: Logger,
  signal: AbortSignal,
  deadlineMs: number,
): Failure {
  if (error instanceof DeadlineError || (error instanceof ApiError && signal.aborted)) {
    return {
      outcome: "deadline",
      reply: userErrorReply(
        `That took longer than ${Math.round(deadlineMs / 1000)} s, so I stopped. Try again, or ask for less.`,
      ),
    };
  }
  const userError = asUserError(error);
  if (userError) {
    return {
      outcome: "user_error",
      reply: userErrorReply(userError.message),
      code: userError.code,
      ...(userError.context ? { context: userError.context } : {}),
    };
  }
  if (error instanceof ApiError) {
    logger[apiErrorLevel(error)]({ err: error, kind: error.kind }, "data service error");
    const text = apiErrorMessage(error);
    return {
      outcome: "api_error",
      reply: {
        text: error.kind === "invalid_response" ? `${text} (ref ${invocation.id})` : text,
        tone: error.kind === "not_found" || error.kind === "bad_request" ? "warning" : "error",
        private: true,
      },
    };
  }
  logger.error({ err: error }, "command failed");
  return {
    outcome: "bug",
    reply: {
      text: `Sorry, something went wrong on my side. If it keeps happening, tell the bot's operator: ref ${invocation.id}.`,
      tone: "error",
      private: true,
    },
  };
}
