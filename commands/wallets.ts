import { defineCommand } from "../src/core/command.ts";
import { formatTimestamp, fullAddress } from "../src/core/format.ts";
import { opt } from "../src/core/options.ts";
import { UserError } from "../src/errors.ts";
import { MANAGERS_SEE } from "../src/verify/consent.ts";

const CHOICES = [
  { value: "private", name: "private", aliases: ["hide"] },
  { value: "shared", name: "shared", aliases: ["public", "visible"] },
] as const;

export default defineCommand({
  name: "wallets",
  description: "Your wallets: which are proved, on which chain and when",
  help: `Lists the wallets you proved with /verify (with the chain and when), and those linked before proofs existed, shown as not proved. Spam reports are made for the most recently proved one. Only you see the list. ${MANAGERS_SEE} /wallets private keeps your wallets out of member lists and exports; /wallets shared lets them be shown again.`,
  options: {
    visibility: opt.choice(
      "private or shared: whether community managers may list your wallets",
      CHOICES,
      {
        placeholder: "private|shared",
      },
    ),
  },
  chainless: true,
  examples: ["/wallets", "/wallets private", "/wallets shared"],
  requiresPerson: true,
  async run(ctx, { visibility }) {
    const { platform, user } = ctx.invocation;
    if (visibility) {
      if (!ctx.insights)
        throw new UserError(
          "feature_unavailable",
          "Member lists are not kept on this bot: there is nothing to hide your wallets from.",
        );
      const keep = visibility === "private";
      await ctx.insights.store.setPrivate(platform, user.id, keep, ctx.now().getTime());
      return {
        text: keep
          ? "Your wallets are now private: community managers no longer see them in member lists or exports. You still count in totals (never shown for fewer than 5 people). /wallets shared undoes this."
          : "Your proved wallets may be listed again for the managers of the communities you proved them in. /wallets private hides them.",
        tone: "success",
        private: true,
      };
    }
    const wallets = await ctx.store.wallets.list(platform, user.id);
    if (wallets.length === 0) {
      return {
        text: `You have no wallets here yet: /verify proves one (you sign a message on the bot's page; free, moves nothing). ${MANAGERS_SEE}`,
        private: true,
      };
    }
    const now = ctx.now();
    const lines = wallets.map((wallet) => {
      const address = fullAddress(wallet.address);
      return wallet.provedAt === undefined
        ? `${address}: not proved (linked before proofs; /verify proves it)`
        : `${address} on ${wallet.chain}: proved ${formatTimestamp(new Date(wallet.provedAt).toISOString(), now)}`;
    });
    const reporting = wallets.find((wallet) => wallet.provedAt !== undefined);
    const hidden = await ctx.insights?.store.isPrivate(platform, user.id);
    lines.push(
      "",
      hidden === true
        ? "Private: community managers do not see your wallets in member lists or exports (/wallets shared undoes it)."
        : hidden === false
          ? `${MANAGERS_SEE}`
          : "",
    );
    return {
      title: `Your wallets (${wallets.length})`,
      text: lines.join("\n"),
      footer: reporting
        ? `Spam reports are made for ${fullAddress(reporting.address)}, the latest proved. /unlink <wallet|all> forgets.`
        : "None is proved, so no spam report can be made for you: /verify proves one. /unlink <wallet|all> forgets.",
      confidential: { what: "your wallets" },
    };
  },
});
