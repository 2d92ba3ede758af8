import { shownOptions } from "./chain-option.ts";
import type { AnyCommand } from "./command.ts";

/** The command registry: names checked once, before anything connects, and usage lines. */

const COMMAND_NAME = /^[a-z][a-z0-9_]{0,31}$/;

/**
 * The action of the buttons that answer "which one?": the runtime runs the command again with
 * the payload as its raw arguments (the chosen collection put in). No command may define it.
 */
export const RERUN_ACTION = "rerun";

/** Builds the registry, failing fast on a bad or duplicate name (before anything connects). */
export function buildRegistry(commands: readonly AnyCommand[]): Map<string, AnyCommand> {
  const registry = new Map<string, AnyCommand>();
  for (const command of commands) {
    if (!COMMAND_NAME.test(command.name)) {
      throw new Error(
        `Command name "${command.name}" must be 1-32 characters of a-z, 0-9 and _, starting with a letter.`,
      );
    }
    if (registry.has(command.name)) throw new Error(`Two commands are named "${command.name}".`);
    const names = Object.keys(command.options);
    for (const name of names) {
      if (!COMMAND_NAME.test(name))
        throw new Error(`Option "${name}" of /${command.name} is not a valid option name.`);
    }
    if (command.actions && RERUN_ACTION in command.actions)
      throw new Error(
        `/${command.name} defines the action "${RERUN_ACTION}", which the runtime keeps.`,
      );
    for (const [key, handler] of Object.entries(command.actions ?? {})) {
      // A button names its action by the definition it was made from: listed under another
      // command or name, its buttons would point nowhere.
      if (handler.command !== command.name || handler.name !== key)
        throw new Error(
          `/${command.name} lists the action "${key}" defined as ${handler.command}.${handler.name}.`,
        );
    }
    const restCount = Object.values(command.options).filter((option) => option.rest).length;
    if (restCount > 1)
      throw new Error(`/${command.name} has more than one option that takes the rest of the line.`);
    registry.set(command.name, command);
  }
  return registry;
}

/** "/top <metric> <duration> [limit]". */
export function usage(command: AnyCommand): string {
  const parts = shownOptions(command).map(([name, option]) => {
    const label = option.placeholder || name;
    return option.required ? `<${label}>` : `[${label}]`;
  });
  return [`/${command.name}`, ...parts].join(" ");
}
