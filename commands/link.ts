import { defineCommand } from "../src/core/command.ts";
import { opt } from "../src/core/options.ts";

export default defineCommand({
  name: "link",
  description: "Linking a wallet on your word is gone: /verify proves one instead",
  help: "A wallet taken on a person's word let anyone report spam in another's name, so spam reports are now made only for a wallet you proved by signing: use /verify. /wallets lists yours, with those linked before as not proved.",
  options: {
    // Taken and ignored, so `/link 0x…` from habit gets the way to /verify, not a usage error.
    wallet: opt.string("Ignored: prove your wallet with /verify", {
      placeholder: "wallet",
      rest: true,
    }),
  },
  chainless: true,
  // Retired: answered for old habits, listed nowhere (/help, the README, menus, Discord).
  hidden: true,
  examples: ["/link"],
  requiresPerson: true,
  async run() {
    return {
      text: "Wallets are no longer linked on your word: prove yours with /verify (you sign a message on the bot's page; free, moves nothing). Spam reports are made only for a proved wallet; /wallets lists yours.",
      tone: "info",
      private: true,
    };
  },
});
