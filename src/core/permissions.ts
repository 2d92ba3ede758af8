import { UserError } from "../errors.ts";
import type { AnyCommand, Invocation } from "./command.ts";

/** Who may run a command or press its buttons: the checks every entry shares. */

export async function assertManager(
  command: AnyCommand,
  invocation: Invocation,
  what: string,
): Promise<void> {
  if (command.requiresManageChannel && !(await invocation.canManageChannel()))
    throw new UserError("not_manager", `Only people who can manage this channel may use ${what}.`);
}

export function assertPerson(command: AnyCommand, invocation: Invocation, what: string): void {
  if (command.requiresPerson && invocation.user.anonymous) {
    throw new UserError(
      "anonymous_sender",
      `Anonymous admins and channels cannot use ${what}: send it from your own account.`,
    );
  }
}
