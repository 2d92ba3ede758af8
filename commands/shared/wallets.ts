import type { CommandContext } from "../../src/core/command.ts";
import { UserError } from "../../src/errors.ts";
import type { LinkedWalletRepository } from "../../src/store/reports.ts";

/** The linked-wallets repository, or a plain refusal where the bot runs without a store. */
export function walletsOf(ctx: CommandContext): LinkedWalletRepository {
  if (!ctx.store) throw new UserError("Linking wallets is not available on this bot.");
  return ctx.store.wallets;
}
