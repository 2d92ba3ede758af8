import { type CommandContext, defineCommand } from "../src/core/command.ts";
import { type ErrorCode, UserError } from "../src/errors.ts";
import { MANAGERS_SEE } from "../src/verify/consent.ts";
import type { VerifyRefusal } from "../src/verify/types.ts";

/** The start payload that runs /verify <chain> in the private chat (Telegram's group button). */
export function verifyStart(chain: string, group?: string): string {
  // A Telegram group's id is a number (negative): anything else is left out of the payload.
  return group !== undefined && /^-?\d{1,20}$/.test(group)
    ? `verify_${chain}_${group}`
    : `verify_${chain}`;
}

/**
 * The community a /verify is asked from: a Discord server, a Telegram group (directly, or through
 * the group's button that opened the private chat), none in a private chat or on the console.
 */
function placeOf(invocation: CommandContext["invocation"]): string | undefined {
  if (invocation.guild) return invocation.guild.id;
  if (invocation.startedFrom) return invocation.startedFrom;
  return invocation.chat.kind === "group" ? invocation.chat.id : undefined;
}

export default defineCommand({
  name: "verify",
  description: "Prove a wallet is yours by signing on the bot's page; spam reports use it",
  help: "Gives you a link, for you alone, to the bot's own page: open it in your wallet's browser (or a browser with a wallet extension), press Connect wallet and sign the message it shows. Signing is free, moves nothing and gives no access; never type a recovery phrase or private key anywhere. The link works once, for 10 minutes. Spam reports are then made for the wallet you proved; /wallets lists yours.",
  options: {},
  examples: ["/verify"],
  requiresPerson: true,
  async run(ctx) {
    const { invocation, chain } = ctx;
    // A group is no place for a personal link, and the bot may not write to the person first:
    // a button opens their private chat with the bot, which runs /verify there.
    if (invocation.privateStart) {
      return {
        text: "Your verification link is for you alone, so I give it in our private chat: press the button, then Start.",
        openButton: {
          label: "Verify in private chat",
          url: invocation.privateStart(
            verifyStart(
              chain.id,
              invocation.platform === "telegram" ? invocation.chat.id : undefined,
            ),
          ),
        },
      };
    }
    if (!ctx.verify)
      throw new UserError(
        "feature_unavailable",
        "Wallet verification is not available on this bot.",
      );
    const made = await ctx.verify.createLink(
      {
        platform: invocation.platform,
        userId: invocation.user.id,
        chatId: invocation.chat.id,
        place: placeOf(invocation),
        name: invocation.user.name,
        ...(await invocation.names?.()),
        ...(invocation.confirm === undefined ? {} : { confirm: invocation.confirm }),
      },
      chain.id,
    );
    if (!made.ok) throw new UserError(verifyCode(made.refusal.code), made.refusal.message);
    const { link } = made;
    const minutes = Math.max(1, Math.round((link.expiresAt - ctx.now().getTime()) / 60_000));
    return {
      title: `Verify a wallet on ${chain.name}`,
      text: `Open the link below in your wallet's browser (or a browser with a wallet extension), press Connect wallet and sign. It works once, for you alone, for ${minutes} minutes. Signing is free and moves nothing; never type a recovery phrase or private key. ${MANAGERS_SEE}`,
      // Shown whole, so it can be copied into a wallet's browser.
      links: [{ label: link.url, url: link.url }],
      private: true,
    };
  },
});

/** A refused verification link, as a refusal code: too soon, not offered, or refused. */
function verifyCode(code: VerifyRefusal["code"]): ErrorCode {
  if (code === "rate_limited") return "rate_limited";
  if (code === "unavailable" || code === "wrong_chain") return "feature_unavailable";
  return "verify_refused";
}
