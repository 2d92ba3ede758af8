import type { CommandContext } from "../../src/core/command.ts";

/**
 * Whether a wallet is the person's own for spam reports: one they proved, or a cold wallet that
 * delegated all its rights to one of theirs (issue 37). A report teaches the classifier for that
 * wallet, so no other wallet's buttons are offered to them (issue 38).
 */
export async function isOwnWallet(ctx: CommandContext, address: string): Promise<boolean> {
  const { platform, user } = ctx.invocation;
  const lower = address.toLowerCase();
  const wallets = await ctx.store.wallets.list(platform, user.id);
  if (wallets.some((w) => w.provedAt !== undefined && w.address.toLowerCase() === lower))
    return true;
  if (!ctx.verify || !wallets.some((w) => w.provedAt !== undefined)) return false;
  const held = await ctx.verify.holdings(platform, user.id);
  return held.wallets.some(
    (w) => w.how === "delegation" && w.contract === undefined && w.address === lower,
  );
}
