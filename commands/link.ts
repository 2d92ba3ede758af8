import { isAddressLike } from "../src/api/validate.ts";
import { defineCommand } from "../src/core/command.ts";
import { fullAddress } from "../src/core/format.ts";
import { opt } from "../src/core/options.ts";

export default defineCommand({
  name: "link",
  description: "Link your wallet, so spam reports from alerts and /nft are made for it",
  help: "Spam is classified per wallet, so a report says which wallet's view is wrong. Under /wallet replies the wallet is known; elsewhere (alerts, /nft) the bot uses the wallet you link here. Only the address is kept, per chat platform.",
  options: {
    wallet: opt.wallet("Your wallet address or ENS name", { required: true }),
  },
  chainless: true,
  examples: ["/link vitalik.eth", "/link 0xd8dA6BF26964aF9D7eEd9e03E53415D37aA96045"],
  requiresPerson: true,
  async run(ctx, { wallet }) {
    let address: string;
    let label: string;
    // The option gives a checksummed address or a normalized ENS name.
    if (isAddressLike(wallet)) {
      address = wallet;
      label = address;
    } else {
      const { entity } = await ctx.api.wallets.ensByName(wallet, { signal: ctx.signal });
      address = fullAddress(entity.resolvedAddress);
      label = wallet;
    }
    const { platform, user } = ctx.invocation;
    await ctx.store.wallets.link(platform, user.id, address, label, ctx.now().getTime());
    return {
      text: `Linked: your reports will be made for ${label === address ? address : `${label} (${address})`}. /unlink removes it.`,
      tone: "success",
      private: true,
    };
  },
});
