import { defineCommand } from "../src/core/command.ts";
import { formatTimestamp, fullAddress, short } from "../src/core/format.ts";
import { opt } from "../src/core/options.ts";
import { UserError } from "../src/errors.ts";
import { MANAGERS_SEE } from "../src/verify/consent.ts";

/** Why a delegated wallet does not count for the person: it is another account's, or theirs already. */
const ELSEWHERE = {
  proved: "another account here proved it",
  earlier: "another account here held it by delegation first",
  own: "you proved it yourself",
} as const;

const CHOICES = [
  { value: "private", name: "private", aliases: ["hide"] },
  { value: "shared", name: "shared", aliases: ["public", "visible"] },
] as const;

export default defineCommand({
  name: "wallets",
  description: "Your wallets: which are proved, on which chains, how and when",
  help: `Lists each wallet you proved with /verify once, with every chain it was proved on, how (your wallet's signature, which holds on every chain the bot serves; a contract wallet, whose proof holds only on the chains it was proved on) and when; cold wallets that delegated to one of yours on delegate.xyz, which count for you too; and wallets linked before proofs existed, shown as not proved. Spam reports are made for the most recently proved one. Only you see the list. ${MANAGERS_SEE} /wallets private keeps your wallets out of member lists and exports; /wallets shared lets them be shown again.`,
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
    // Each proved wallet's kind, and the delegations to them (issue 37), through the service.
    const held = await ctx.verify?.holdings(platform, user.id);
    const kinds = new Map(held?.proved.map((w) => [w.address, w.kind]));
    const chainName = (id: string) => ctx.chains.find((c) => c.id === id)?.name ?? id;
    const lines = wallets.map((wallet) => {
      const address = fullAddress(wallet.address);
      if (wallet.provedAt === undefined)
        return `${address}: not proved (linked before proofs; /verify proves it)`;
      const when = formatTimestamp(new Date(wallet.provedAt).toISOString(), now);
      const on = wallet.chains.map(chainName).join(", ");
      return kinds.get(wallet.address) === "contract"
        ? `${address}: a contract wallet, proved on ${on} (its proof holds only there), ${when}`
        : `${address}: proved by signature on ${on}, ${when}; it holds on every chain the bot serves`;
    });
    for (const d of held?.delegations ?? []) {
      const rights = d.contract === "" ? "all rights" : `rights for ${short(d.contract)} only`;
      const not = d.heldElsewhere ? ` (not counted: ${ELSEWHERE[d.heldElsewhere]})` : "";
      lines.push(
        `${fullAddress(d.cold)} via delegation to ${short(d.hot)} on ${chainName(d.chain)}, ${rights}${not}`,
      );
    }
    if (held && held.readOn.length === 0 && held.delegations.length === 0)
      lines.push(
        "",
        "Delegations (delegate.xyz) are not read here: the bot has no RPC URL for any chain.",
      );
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
