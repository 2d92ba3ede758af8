import { z } from "zod";
import type { SpamFilter } from "../src/api/schemas.ts";
import { isAddressLike } from "../src/api/validate.ts";
import { defineAction, payloadField } from "../src/core/button-actions.ts";
import { spamUnavailable } from "../src/core/chain-option.ts";
import { type CommandContext, defineCommand } from "../src/core/command.ts";
import {
  collectionName,
  explorer,
  formatCount,
  fullAddress,
  short,
  shortTokenId,
} from "../src/core/format.ts";
import { opt } from "../src/core/options.ts";
import { pageButtons, pageOf } from "../src/core/paging.ts";
import type { Reply } from "../src/core/reply.ts";
import { UserError } from "../src/errors.ts";
import { reportButton } from "../src/reports/buttons.ts";
import { isOwnWallet } from "./shared/own-wallets.ts";

const PAGE_SIZE = 10;
/** Endpoint 13 pages on the server; one large page is fetched and paged here like endpoint 18. */
const COLLECTION_FETCH_LIMIT = 500;

const SPAM_CHOICES = [
  { value: "all", name: "All, spam marked", api: undefined, aliases: ["any", "both"] },
  { value: "exclude", name: "Without spam", api: "SPAM_FILTER_EXCLUDE", aliases: ["no", "hide"] },
  { value: "only", name: "Only spam", api: "SPAM_FILTER_ONLY", aliases: ["spam"] },
] as const satisfies readonly {
  value: string;
  name: string;
  api: SpamFilter | undefined;
  aliases: readonly string[];
}[];

type SpamChoice = (typeof SPAM_CHOICES)[number]["value"];

/** Another page of the wallet's NFTs, as filtered. */
const walletPage = defineAction({
  command: "wallet",
  name: "page",
  schema: z.object({
    wallet: z.string(),
    spam: payloadField.choice(SPAM_CHOICES),
    collection: payloadField.optional(z.string()),
    page: payloadField.page,
  }),
});

/** One NFT of a wallet, from endpoint 18 (spam known) or endpoint 13 (spam not given). */
interface WalletItem {
  contract: string;
  name: string;
  collection: string;
  tokenId: string;
  quantity: string | undefined;
  spam: boolean | undefined;
}

interface WalletView {
  wallet: string;
  spam: SpamChoice;
  /** Set when the list is one collection's NFTs (endpoint 13). */
  collection?: { address: string; name: string | undefined } | undefined;
  items: WalletItem[];
  page: number;
  explorerUrl: string;
  /** The chain has spam detection: flags, the filter and report buttons; else a note says so. */
  spamChain: { name: string; spam: boolean };
  /**
   * The wallet is the asker's own (proved, or delegated to theirs): only then Spam / Not spam
   * buttons, since a report is made for the reporter's own wallet (issue 38).
   */
  mine: boolean;
}

function walletName(wallet: string): string {
  return isAddressLike(wallet) ? fullAddress(wallet) : wallet;
}

function titleOf(view: WalletView): string {
  const who = walletName(view.wallet);
  if (view.collection) {
    const what = view.collection.name
      ? collectionName(view.collection.name)
      : short(view.collection.address);
    return `NFTs of ${who} in ${what}`;
  }
  if (view.spam === "only") return `Spam NFTs of ${who}`;
  if (view.spam === "exclude") return `NFTs of ${who} (spam hidden)`;
  return `NFTs of ${who}`;
}

function emptyText(view: WalletView): string {
  if (view.collection) return "This wallet holds no NFT of this collection.";
  if (view.spam === "only") return "No NFT of this wallet is flagged as spam.";
  if (view.spam === "exclude") return "This wallet holds no NFT outside spam collections.";
  return "This wallet holds no NFTs.";
}

function walletReply(view: WalletView): Reply {
  const title = titleOf(view);
  const url = isAddressLike(view.wallet)
    ? explorer.address(view.explorerUrl, view.wallet)
    : undefined;
  if (view.items.length === 0) return { title, url, text: emptyText(view) };
  const shown = pageOf(view.items, view.page, PAGE_SIZE);
  // Spam is known for the whole wallet (endpoint 18), on chains with spam detection.
  const withSpam = view.collection === undefined && view.spamChain.spam;
  const spamCount = view.items.filter((item) => item.spam).length;
  const footer = [
    `Page ${shown.page + 1} of ${shown.pages}`,
    `${formatCount(String(view.items.length))} NFTs`,
    ...(withSpam && view.spam === "all" ? [`${formatCount(String(spamCount))} flagged spam`] : []),
    ...(view.collection === undefined && !view.spamChain.spam
      ? [`spam data is not available on ${view.spamChain.name}`]
      : []),
    ...(view.collection && view.items.length >= COLLECTION_FETCH_LIMIT
      ? [`first ${formatCount(String(COLLECTION_FETCH_LIMIT))} only`]
      : []),
  ].join(" · ");
  const rows = shown.items.map((item, i) => {
    const cells = [
      String(shown.offset + i + 1),
      item.name.trim() || "(no name)",
      ...(withSpam ? [collectionName(item.collection)] : []),
      shortTokenId(item.tokenId),
      formatCount(item.quantity),
    ];
    return withSpam ? [...cells, item.spam ? "SPAM" : ""] : cells;
  });
  // Someone else's wallet: what the person can do instead of buttons that would refuse.
  const reportHint =
    view.spamChain.spam && !view.mine
      ? "Spam is judged per wallet: to report spam from your own NFTs, prove your wallet with /verify, then open it with /wallet."
      : undefined;
  return {
    title,
    url,
    ...(reportHint ? { text: reportHint } : {}),
    table: {
      columns: withSpam
        ? ["#", "Name", "Collection", "Token id", "Qty", "Spam"]
        : ["#", "Name", "Token id", "Qty"],
      rows,
      align: withSpam
        ? ["right", "left", "left", "right", "right", "left"]
        : ["right", "left", "right", "right"],
    },
    footer,
    replaceOriginal: view.page > 0,
    buttons: [
      // The wallet is the one asked about: its view of each NFT is what a report corrects.
      ...(view.spamChain.spam && view.mine ? shown.items : []).map((item, i) =>
        reportButton(
          item.spam ? "not_spam" : "spam",
          {
            contract: item.contract,
            tokenId: item.tokenId,
            wallet: view.wallet,
            ...(item.collection ? { name: item.collection } : {}),
          },
          `${item.spam ? "Not spam" : "Spam"} #${shown.offset + i + 1}`,
        ),
      ),
      ...pageButtons(
        (page) =>
          walletPage.action({
            wallet: view.wallet,
            spam: view.spam,
            collection: view.collection?.address,
            page,
          }),
        shown.page,
        shown.page < shown.pages - 1,
      ),
    ],
  };
}

async function fetchWallet(
  ctx: CommandContext,
  wallet: string,
  spam: SpamChoice,
  collection: string | undefined,
  page: number,
): Promise<Reply> {
  const options = { signal: ctx.signal };
  const mine = ctx.chain.spam ? await isOwnWallet(ctx, wallet) : false;
  const view = { wallet, spam, page, explorerUrl: ctx.chain.explorer, spamChain: ctx.chain, mine };
  ctx.resolver.rememberWallets([wallet]);
  if (collection !== undefined) {
    const { tokens } = await ctx.api.foundational.nftsByOwner(
      wallet,
      { contractAddress: collection, limit: COLLECTION_FETCH_LIMIT },
      options,
    );
    const name = ctx.collections.name(collection);
    return walletReply({
      ...view,
      collection: { address: collection, name },
      items: tokens.map((token) => ({
        contract: token.contractAddress,
        name: token.metadata?.name ?? "",
        collection: name ?? "",
        tokenId: token.tokenId,
        quantity: token.quantity,
        spam: undefined,
      })),
    });
  }
  // No spam filter where the service detects no spam (run refuses one there).
  const filter = ctx.chain.spam
    ? SPAM_CHOICES.find((choice) => choice.value === spam)?.api
    : undefined;
  const { nfts } = await ctx.api.wallets.nfts(
    wallet,
    filter === undefined ? {} : { spam: filter },
    options,
  );
  // Spam collections stay out of autocomplete suggestions.
  ctx.collections.remember(
    nfts
      .filter((item) => !item.spam)
      .map((item) => ({
        address: item.nft.contractAddress,
        name: item.nft.collection?.name ?? "",
      })),
  );
  return walletReply({
    ...view,
    items: nfts.map((item) => ({
      contract: item.nft.contractAddress,
      name: item.nft.metadata?.name ?? "",
      collection: item.nft.collection?.name ?? "",
      tokenId: item.nft.tokenId,
      quantity: item.quantity,
      spam: ctx.chain.spam ? item.spam : undefined,
    })),
  });
}

export default defineCommand({
  name: "wallet",
  description: "NFTs held by a wallet, with spam flagged",
  help: "Lists a wallet's NFTs, 10 per page, each marked SPAM when it belongs to a collection classified as spam for that wallet. spam:exclude hides them, spam:only shows only them. With a collection, lists only that collection's NFTs (the spam filter does not apply there).",
  options: {
    wallet: opt.wallet("Wallet address or ENS name", { required: true }),
    spam: opt.choice("Spam NFTs: exclude, only, or all (marked)", SPAM_CHOICES, {
      fallback: "all",
      placeholder: "exclude|only|all",
    }),
    collection: opt.collection("Only this collection's NFTs (name, symbol, address or link)"),
  },
  examples: [
    "/wallet vitalik.eth",
    "/wallet 0xd8dA6BF26964aF9D7eEd9e03E53415D37aA96045 exclude",
    "/wallet vitalik.eth collection:0xBC4CA0EdA7647A8aB7C2061c2E118A18a936f13D",
    "/wallet https://etherscan.io/address/0xd8dA6BF26964aF9D7eEd9e03E53415D37aA96045",
  ],
  async run(ctx, { wallet, spam, collection }) {
    if (collection !== undefined && spam !== "all") {
      throw new UserError(
        "conflicting_arguments",
        "The spam filter works on the whole wallet: leave it out when you name a collection.",
      );
    }
    if (spam !== "all" && !ctx.chain.spam) {
      throw new UserError(
        "spam_unavailable",
        `${spamUnavailable(ctx.chain)} Leave out the spam filter there.`,
      );
    }
    return fetchWallet(ctx, wallet, spam, collection, 0);
  },
  actions: {
    page: walletPage.handle({
      run: (ctx, { wallet, spam, collection, page }) =>
        fetchWallet(ctx, wallet, spam, collection, page),
    }),
  },
});
