import type { Chain } from "../chains.ts";
import { ACTION_ID_PATTERN, type ActionStore } from "./actions.ts";
import { CHAIN_OPTION } from "./chain-option.ts";
import type { AnyCommand, CommandContext, Invocation } from "./command.ts";
import { type Answer, assertSpam, invokeCommand, userErrorAnswer } from "./invoke.ts";
import { linkedChain } from "./on-chain.ts";
import type { Answered } from "./outcome.ts";
import { assertManager, assertPerson } from "./permissions.ts";
import { RERUN_ACTION } from "./registry.ts";

/** What a button press needs of the runtime (see Runtime.answerButton). */
export interface ButtonRuntime {
  actions: ActionStore;
  /** The chains served, the default first. */
  chains: readonly Chain[];
  now: () => Date;
  find(name: string): AnyCommand | undefined;
  /** Runs `body` as the runtime runs every invocation: admitted, under a deadline, answered. */
  execute(
    invocation: Invocation,
    command: AnyCommand,
    kind: "button",
    requestedChain: string | undefined,
    body: (ctx: CommandContext) => Promise<Answer>,
    linkedChain?: string,
  ): Promise<Answered>;
}

/** A button click: the id is looked up, checked against the chat, and its action run. */
export async function pressButton(
  runtime: ButtonRuntime,
  invocation: Invocation,
  id: string,
): Promise<Answered> {
  if (!ACTION_ID_PATTERN.test(id))
    return userErrorAnswer("button_unknown", "That button is not one of mine.");
  const stored = await runtime.actions.get(id);
  if (!stored || stored.expiresAt <= runtime.now().getTime()) {
    return userErrorAnswer(
      "button_expired",
      "This button has expired. Run the command again for fresh buttons.",
    );
  }
  if (stored.platform !== invocation.platform || stored.chatId !== invocation.chat.id) {
    return userErrorAnswer("button_other_chat", "This button belongs to another chat.");
  }
  const { action, payload } = stored.action;
  const command = runtime.find(stored.action.command);
  if (command && action === RERUN_ACTION) {
    const raw: Record<string, string> = {};
    for (const [key, value] of Object.entries(payload))
      if (typeof value === "string") raw[key] = value;
    return runtime.execute(
      invocation,
      command,
      "button",
      raw[CHAIN_OPTION],
      (ctx) => invokeCommand(ctx, command, raw, "this button"),
      linkedChain(runtime.chains, command, raw),
    );
  }
  const handler = command?.actions?.[action];
  const parsed = handler?.parse(payload);
  if (!command || !handler || parsed === undefined)
    return userErrorAnswer("button_stale", "This button no longer works. Run the command again.");
  const chain = typeof payload.chain === "string" ? payload.chain : undefined;
  return runtime.execute(invocation, command, "button", chain, async (ctx) => {
    assertPerson(command, invocation, "this button");
    await assertManager(command, invocation, "this button");
    assertSpam(command, ctx.chain);
    return { reply: await handler.run(ctx, parsed), outcome: "ok" };
  });
}
