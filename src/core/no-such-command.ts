import { closest, distance } from "fastest-levenshtein";
import { sliceChars } from "../strings.ts";

/**
 * What a person hears for a command name the bot does not have: "There is no /audiense command.
 * Did you mean /audience?" when one is near (one slip in a short name, two in a longer one: a
 * swap of two letters counts two), else a pointer to /help. For a typed command and /help <name>.
 */
export function noSuchCommand(name: string, names: readonly string[]): string {
  const typed = sliceChars(name.toLowerCase(), 32);
  const near = names.length > 0 ? closest(typed, [...names]) : undefined;
  const allowed = typed.length >= 5 ? 2 : 1;
  const hint =
    near !== undefined && distance(typed, near) <= allowed
      ? `Did you mean /${near}? /help lists them all.`
      : "Try /help.";
  return `There is no /${typed} command. ${hint}`;
}
