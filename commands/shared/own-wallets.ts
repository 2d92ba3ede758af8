import type { CommandContext } from "../../src/core/command.ts";

/**
 * Whether a wallet is the person's own for spam reports: one they proved, or a cold wallet that
 * delegated all its rights to one of theirs (issue 37). A report teaches the classifier for that
 * wallet, so no other wallet's buttons are offered to them (issue 38). One read of the person's
 * wallets: the verification service's (proofs with delegations) where the bot has it.
 */
export async function isOwnWallet(ctx: CommandContext, address: string): Promise<boolean> {
  const { platform, user } = ctx.invocation;
  const lower = address.toLowerCase();
  if (ctx.verify) {
    const held = await ctx.verify.holdings(platform, user.id);
    return held.wallets.some(
      (w) => w.address === lower && (w.how !== "delegation" || w.contract === undefined),
    );
  }
  const wallets = await ctx.store.wallets.list(platform, user.id);
  return wallets.some((w) => w.provedAt !== undefined && w.address.toLowerCase() === lower);
}
