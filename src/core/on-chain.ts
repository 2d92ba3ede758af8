import type { Chain } from "../chains.ts";
import { CHAIN_OPTION } from "./chain-option.ts";
import type { AnyCommand } from "./command.ts";
import type { Answer } from "./invoke.ts";
import type { EarlyButtons } from "./materialize.ts";
import type { ButtonAction, ButtonSpec, Reply } from "./reply.ts";

/**
 * The served chain a pasted link names (basescan.org, opensea.io/item/base/…), read when the
 * command names none: a link is answered from its own chain rather than refused.
 */
export function linkedChain(
  chains: readonly Chain[],
  command: AnyCommand,
  raw: Record<string, string | undefined>,
): string | undefined {
  if (!(CHAIN_OPTION in command.options)) return undefined;
  for (const [name, option] of Object.entries(command.options)) {
    const value = raw[name];
    const chain = value === undefined ? undefined : option.chainOf?.(value);
    if (chain && chains.some((served) => served.id === chain)) return chain;
  }
  return undefined;
}

/**
 * The answer as it goes out on a chain: its buttons remember the chain (a page, a report and a
 * "which one?" pick read the same chain later, whatever the chat's default is by then), and
 * with several chains served (`chains`), a command's answer names its chain in the footer.
 */
export function answerOnChain(
  chains: readonly Chain[],
  command: AnyCommand,
  chain: Chain,
  answer: Answer,
  /** Stored ahead with their chain already: kept as they are, for materialize to find. */
  early: EarlyButtons,
): Reply {
  const { reply } = answer;
  const buttons = reply.buttons?.map(
    (button): ButtonSpec =>
      early.has(button) ? button : { ...button, action: onChainAction(button.action, chain) },
  );
  const named =
    chains.length > 1 &&
    !command.chainless &&
    answer.outcome === "ok" &&
    reply.tone !== "warning" &&
    reply.tone !== "error";
  const { chainsShown, ...rest } = reply;
  const about = chainsShown?.length
    ? chainsShown.map((id) => chains.find((c) => c.id === id)?.name ?? id).join(", ")
    : chain.name;
  return {
    ...rest,
    ...(buttons ? { buttons } : {}),
    ...(named ? { footer: reply.footer ? `${reply.footer} · ${about}` : about } : {}),
  };
}

/** A button's action as stored: it remembers the chain the answer was read from. */
export function onChainAction(action: ButtonAction, chain: Chain): ButtonAction {
  return { ...action, payload: { [CHAIN_OPTION]: chain.id, ...action.payload } };
}
