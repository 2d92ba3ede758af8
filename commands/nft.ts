import { ApiError } from "../src/api/errors.ts";
import type { NftDetails } from "../src/api/schemas.ts";
import { parseAddress, parseTokenId } from "../src/api/validate.ts";
import type { Chain } from "../src/chains.ts";
import { defineCommand, payloadWith } from "../src/core/command.ts";
import {
  collectionName,
  contractTypeLabel,
  explorer,
  formatCount,
  formatDecimal,
  formatNative,
  formatTimestamp,
  formatUsd,
  fullAddress,
  marketplaceLinks,
  short,
  shortTokenId,
} from "../src/core/format.ts";
import { publicImageUrl } from "../src/core/images.ts";
import { opt } from "../src/core/options.ts";
import { payloadString } from "../src/core/paging.ts";
import type { Reply, ReplyField, ReplyImage } from "../src/core/reply.ts";
import { UserError } from "../src/errors.ts";
import { reportButton } from "../src/reports/buttons.ts";
import { to } from "./shared/buttons.ts";

const OWNERS_SHOWN = 10;
/** Raw metadata longer than this goes out as a file rather than in the message. */
const RAW_INLINE_MAX = 1500;

export function nftReply(
  details: NftDetails,
  owners: { address: string; quantity: string }[] | undefined,
  now: Date,
  chain: Pick<Chain, "explorer" | "symbol" | "marketplace" | "spam">,
  ipfsGateway = "https://ipfs.io/ipfs/",
): Reply {
  const explorerUrl = chain.explorer;
  const { nft, metrics, lastSale } = details;
  const name = nft.metadata?.name?.trim();
  const collection = collectionName(nft.collection?.name);
  const fields: ReplyField[] = [
    { name: "Collection", value: `${collection} (${fullAddress(nft.contractAddress)})` },
    { name: "Token id", value: nft.tokenId },
    { name: "Type", value: nft.type ? contractTypeLabel(nft.type) : "n/a", inline: true },
    { name: "Quantity", value: formatCount(metrics?.quantity), inline: true },
    { name: "Owners", value: formatCount(metrics?.ownerCount), inline: true },
  ];
  const links = [
    { label: "Explorer", url: explorer.token(explorerUrl, nft.contractAddress, nft.tokenId) },
    ...(marketplaceLinks(chain, nft.contractAddress, nft.tokenId) ?? []),
  ];
  if (lastSale) {
    const paid = lastSale.recipientPaid;
    const parts = [formatNative(paid.totalNative, chain.symbol), formatUsd(paid.totalUsd)];
    fields.push({ name: "Last sale", value: parts.join(" · "), inline: false });
    const detail = [
      paid.nativeTransfersTotal !== undefined
        ? `native transfers ${formatNative(paid.nativeTransfersTotal, chain.symbol)}`
        : undefined,
      paid.fungibleTransfersTotal !== undefined
        ? `token transfers ${formatDecimal(paid.fungibleTransfersTotal)}`
        : undefined,
      ...paid.fungibleTotals.map(
        (total) =>
          `${formatDecimal(total.totalNormalized)} of token ${short(total.contractAddress)}`,
      ),
      paid.attributedBy
        ? `attributed by ${paid.attributedBy
            .replace(/^ATTRIBUTED_BY_/, "")
            .toLowerCase()
            .replace(/_/g, " ")}`
        : undefined,
      lastSale.blockchainEvent.blockTimestamp
        ? formatTimestamp(lastSale.blockchainEvent.blockTimestamp, now)
        : undefined,
    ].filter((part): part is string => part !== undefined);
    if (detail.length > 0) fields.push({ name: "Sale details", value: detail.join("\n") });
    links.push({
      label: "Sale transaction",
      url: explorer.tx(explorerUrl, lastSale.blockchainEvent.txHash),
    });
  } else {
    fields.push({ name: "Last sale", value: "never sold" });
  }
  if (nft.metadata?.description?.trim()) {
    fields.push({ name: "Description", value: nft.metadata.description.trim() });
  }
  const imageUrl =
    publicImageUrl(nft.metadata?.image?.uri, ipfsGateway) ??
    publicImageUrl(nft.metadata?.image?.uriOriginal, ipfsGateway);
  const image: ReplyImage | undefined = imageUrl
    ? { kind: "url", url: imageUrl, alt: name || collection }
    : undefined;
  const reply: Reply = {
    title: `${name || collection} #${shortTokenId(nft.tokenId, "text")}`,
    url: explorer.token(explorerUrl, nft.contractAddress, nft.tokenId),
    fields,
    links,
    image,
    text: image
      ? undefined
      : nft.metadata?.image?.uri || nft.metadata?.image?.uriOriginal
        ? "Image not shown (not a public http(s) or ipfs:// link)."
        : undefined,
    footer: "NFT details",
    buttons: [
      // Spam reports only where the data service detects spam.
      ...(chain.spam
        ? [reportButton("spam", { contract: nft.contractAddress, tokenId: nft.tokenId })]
        : []),
      {
        label: "Raw metadata",
        style: "secondary",
        action: to({
          command: "nft",
          action: "raw",
          payload: { contract: nft.contractAddress, tokenId: nft.tokenId },
        }),
      },
    ],
  };
  if (owners && owners.length > 0) {
    reply.table = {
      columns: ["Owner", "Quantity"],
      rows: owners
        .slice(0, OWNERS_SHOWN)
        .map((owner) => [short(owner.address), formatCount(owner.quantity)]),
      align: ["left", "right"],
    };
  }
  return reply;
}

function rawMetadataReply(
  contract: string,
  tokenId: string,
  raw: string,
  indexedAt: string | undefined,
): Reply {
  let pretty = raw;
  let isJson = false;
  try {
    pretty = JSON.stringify(JSON.parse(raw), null, 2);
    isJson = true;
  } catch {
    // not JSON: shown as the text it is
  }
  const name = `metadata-${short(contract).replace("…", "-")}-${shortTokenId(tokenId, "text").replace("…", "-")}.${isJson ? "json" : "txt"}`;
  const footer = `Raw metadata${indexedAt ? ` · indexed ${indexedAt}` : ""}`;
  if (pretty.length > RAW_INLINE_MAX) {
    return {
      title: `Raw metadata of #${shortTokenId(tokenId, "text")}`,
      text: `The metadata is ${pretty.length.toLocaleString("en-US")} characters long, so it is attached as a file.`,
      files: [
        {
          name,
          contentType: isJson ? "application/json" : "text/plain",
          data: new TextEncoder().encode(pretty),
        },
      ],
      footer,
    };
  }
  return {
    title: `Raw metadata of #${shortTokenId(tokenId, "text")}`,
    text: pretty || "(empty)",
    footer,
  };
}

export default defineCommand({
  name: "nft",
  description: "Details of one NFT: metadata, owners and last sale",
  help: "Give a collection (its name, symbol or contract address) and a token id, or paste an OpenSea or Etherscan item link. Token ids may have up to 78 digits.",
  options: {
    item: opt.nft("Collection (name, symbol, address) or an OpenSea/Etherscan item link", {
      required: true,
    }),
    token_id: opt.tokenId("Token id (not needed with an item link)"),
  },
  examples: [
    "/nft 0xBC4CA0EdA7647A8aB7C2061c2E118A18a936f13D 1",
    "/nft pudgy penguins 3",
    "/nft https://opensea.io/assets/ethereum/0xbc4ca0eda7647a8ab7c2061c2e118a18a936f13d/1",
  ],
  async run(ctx, { item, token_id }) {
    if (item.tokenId !== undefined && token_id !== undefined && item.tokenId !== token_id) {
      throw new UserError(
        `The link names token ${item.tokenId} but you also gave ${token_id}: give one.`,
      );
    }
    const tokenId = token_id ?? item.tokenId;
    if (tokenId === undefined) {
      throw new UserError(
        "Which token? Add the token id after the contract, e.g. /nft 0x… 1234, or paste an item link.",
      );
    }
    const options = { signal: ctx.signal };
    const [details, owners] = await Promise.all([
      ctx.api.foundational.nftDetails(item.contract, tokenId, options),
      ctx.api.foundational
        .tokenOwners(item.contract, tokenId, { limit: OWNERS_SHOWN }, options)
        .then(
          (result) => result.owners,
          (error: unknown) => {
            // The owners list is a bonus: without it the details still answer the question.
            if (error instanceof ApiError) return undefined;
            throw error;
          },
        ),
    ]);
    ctx.collections.remember([
      { address: details.nft.contractAddress, name: details.nft.collection?.name ?? "" },
    ]);
    ctx.resolver.rememberWallets(
      (owners ?? []).slice(0, OWNERS_SHOWN).map((owner) => owner.address),
    );
    return nftReply(details, owners, ctx.now(), ctx.chain, ctx.settings.ipfsGateway);
  },
  actions: {
    raw: {
      payload: payloadWith("contract", "tokenId"),
      async run(ctx, payload) {
        const contract = parseAddress(payloadString(payload, "contract"));
        const tokenId = parseTokenId(payloadString(payload, "tokenId"));
        const { metadata } = await ctx.api.foundational.rawMetadata(contract, tokenId, {
          signal: ctx.signal,
        });
        return rawMetadataReply(contract, tokenId, metadata.raw, metadata.indexedAt);
      },
    },
  },
});
