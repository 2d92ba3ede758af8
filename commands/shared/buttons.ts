import type { ActionPayload } from "../../src/core/command.ts";
import type { ButtonAction } from "../../src/core/reply.ts";

/**
 * Every command action a button may name. A button's target is checked against this list when
 * it compiles, and the list against the registry by the command-definition test: renaming a
 * command or an action cannot leave buttons that point nowhere. (Buttons already issued under an
 * old name answer "This button no longer works".)
 */
export const BUTTON_TARGETS = {
  audience: ["samples"],
  common: ["page"],
  nft: ["raw"],
  report: ["ask", "confirm", "cancel"],
  reports: ["export"],
  segment: ["page", "csv"],
  top: ["page"],
  wallet: ["page"],
} as const;

type Targets = typeof BUTTON_TARGETS;

/** One command action, by name, as the list above allows. */
export type ButtonTarget = {
  [C in keyof Targets]: { command: C; action: Targets[C][number] };
}[keyof Targets];

/** What a button does: a checked target and the payload its action's schema reads. */
export function to(action: ButtonTarget & { payload: ActionPayload }): ButtonAction {
  return action;
}
