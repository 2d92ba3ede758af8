import type { Chain } from "../chains.ts";
import { type ErrorCode, UserError } from "../errors.ts";
import { spamUnavailable } from "./chain-option.ts";
import type { AnyCommand, CommandContext } from "./command.ts";
import type { Answered } from "./outcome.ts";
import { assertManager, assertPerson } from "./permissions.ts";
import { RERUN_ACTION } from "./registry.ts";
import { type Reply, userErrorReply } from "./reply.ts";
import type { Resolution } from "./resolver.ts";
import { parseArgs } from "./text-args.ts";

/** What a command or button gives back, and how it counts (a name not found is the person's to fix). */
export interface Answer {
  reply: Reply;
  outcome: "ok" | "user_error";
  code?: ErrorCode;
}

/** A refusal the person can fix, answered before any command runs (an unknown name, a stale button). */
export function userErrorAnswer(code: ErrorCode, text: string): Answered {
  return { reply: userErrorReply(text), outcome: "user_error", code };
}

/**
 * Parses the raw arguments, checks who may run the command, looks up the names among them, and
 * runs it. A name that needs a choice, or matches nothing, is answered instead, with buttons
 * that run the command again with the chosen collection (what `what` was: "/x" or a button).
 */
export async function invokeCommand(
  ctx: CommandContext,
  command: AnyCommand,
  raw: Record<string, string | undefined>,
  what: string,
): Promise<Answer> {
  const args = parseArgs(command, raw);
  assertPerson(command, ctx.invocation, what);
  await assertManager(command, ctx.invocation, what);
  assertSpam(command, ctx.chain);
  for (const [name, option] of Object.entries(command.options)) {
    if (!option.resolve || !raw[name]?.trim()) continue;
    const resolution: Resolution<unknown> = await option.resolve(args[name], ctx.resolver);
    if (resolution.kind === "found") {
      args[name] = resolution.value;
      continue;
    }
    const given: Record<string, string> = {};
    for (const [key, value] of Object.entries(raw)) if (value !== undefined) given[key] = value;
    return {
      outcome: resolution.kind === "choose" ? "ok" : "user_error",
      ...(resolution.kind === "choose" ? {} : { code: "name_not_found" as const }),
      reply: {
        text: resolution.text,
        tone: resolution.kind === "choose" ? "info" : "warning",
        private: true,
        buttons: resolution.choices.map((choice) => ({
          label: choice.label,
          action: {
            command: command.name,
            action: RERUN_ACTION,
            payload: { ...given, [name]: choice.value },
          },
        })),
      },
    };
  }
  return { reply: await command.run(ctx, args as never), outcome: "ok" };
}

/** Commands that report spam are refused on a chain without spam detection. */
export function assertSpam(command: AnyCommand, chain: Chain): void {
  if (command.requiresSpam && !chain.spam)
    throw new UserError("spam_unavailable", spamUnavailable(chain));
}
