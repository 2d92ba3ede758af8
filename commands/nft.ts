import { z } from "zod";
import { ApiError } from "../src/api/errors.ts";
import type { NftDetails } from "../src/api/schemas.ts";
import { parseAddress, parseTokenId } from "../src/api/validate.ts";
import type { Chain } from "../src/chains.ts";
import { defineAction } from "../src/core/button-actions.ts";
import { defineCommand } from "../src/core/command.ts";
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
import type { ButtonSpec, Reply, ReplyField, ReplyImage } from "../src/core/reply.ts";
import { UserError } from "../src/errors.ts";
import { reportButton } from "../src/reports/buttons.ts";
import { cutText, presentText } from "../src/strings.ts";

const OWNERS_SHOWN = 10;
/**
 * Traits shown as fields; the rest are counted in one more. With the at most 8 other fields, the
 * reply stays within Discord's 25 fields, and its 6,000 characters with the cuts below.
 */
const TRAITS_SHOWN = 12;
const TRAIT_NAME_MAX = 60;
const TRAIT_VALUE_MAX = 100;
const NAME_MAX = 100;
const DESCRIPTION_MAX = 1000;

/** One trait of a token, as a person reads it. */
export interface Trait {
  type: string;
  value: string;
}

function isRecord(value: unknown): value is Record<string, unknown> {
  return typeof value === "object" && value !== null && !Array.isArray(value);
}

/** A trait's value as text, by its OpenSea display_type; undefined when it says nothing. */
function traitValue(entry: Record<string, unknown>): string | undefined {
  const value = presentText(entry.value);
  if (value === undefined) return undefined;
  const number = typeof entry.value === "number" ? entry.value : undefined;
  switch (entry.display_type) {
    case "date": {
      // Unix seconds (OpenSea); a value in milliseconds is told by its size.
      if (number === undefined) return value;
      const date = new Date(number > 1e11 ? number : number * 1000);
      return Number.isNaN(date.getTime()) ? value : date.toISOString().slice(0, 10);
    }
    case "boost_percentage":
      return `${number !== undefined && number >= 0 ? "+" : ""}${value}%`;
    case "boost_number":
      return `${number !== undefined && number >= 0 ? "+" : ""}${value}`;
    default: {
      const max = presentText(entry.max_value);
      return max === undefined ? value : `${value} of ${max}`;
    }
  }
}

/**
 * The traits of a raw metadata document: OpenSea's `attributes: [{trait_type, value,
 * display_type?}]`, the `traits` variant, or either as a map of trait to value. Anything else
 * (not JSON, no traits) gives none; a trait that says nothing (a null, "None", an object) is left
 * out.
 */
export function metadataTraits(raw: string): Trait[] {
  let document: unknown;
  try {
    document = JSON.parse(raw);
  } catch {
    return [];
  }
  if (!isRecord(document)) return [];
  const list = document.attributes ?? document.traits;
  const entries: unknown[] = Array.isArray(list)
    ? list
    : isRecord(list)
      ? Object.entries(list).map(([trait_type, value]) => ({ trait_type, value }))
      : [];
  return entries.flatMap((entry): Trait[] => {
    const item = isRecord(entry) ? entry : { value: entry };
    const value = traitValue(item);
    if (value === undefined) return [];
    return [{ type: presentText(item.trait_type) ?? "Trait", value }];
  });
}

/** The traits as inline fields, the ones past TRAITS_SHOWN counted in a last field. */
function traitFields(traits: readonly Trait[]): ReplyField[] {
  const shown = traits.slice(0, TRAITS_SHOWN).map(
    (trait): ReplyField => ({
      name: cutText(trait.type, TRAIT_NAME_MAX),
      value: cutText(trait.value, TRAIT_VALUE_MAX),
      inline: true,
    }),
  );
  const more = traits.length - shown.length;
  return more > 0
    ? [...shown, { name: "More traits", value: `and ${more} more (Raw metadata shows them all)` }]
    : shown;
}

/**
 * The title: the token's name once. Indexers often name a token "<collection> #<id>" already; the
 * id is added only to a name without it, and to the collection's name where the token has none.
 */
function nftTitle(name: string | undefined, collection: string, tokenId: string): string {
  const id = `#${shortTokenId(tokenId, "text")}`;
  // A name that is only the id ("1", "#1") names nothing more than the id does.
  const own = name === undefined || name.replace(/^#/, "") === tokenId ? undefined : name;
  if (own === undefined) return `${collection} ${id}`;
  const cut = cutText(own, NAME_MAX);
  return new RegExp(`#${tokenId}(?!\\d)`).test(own) ? cut : `${cut} ${id}`;
}
/** The token's metadata as the service indexed it. */
const nftRaw = defineAction({
  command: "nft",
  name: "raw",
  schema: z.object({ contract: z.string(), tokenId: z.string() }),
});

/**
 * The buttons under an NFT's details: Report spam (where the service detects spam) and Raw
 * metadata. They need only what the person asked for, so /nft stores them while it reads.
 */
export function nftButtons(
  chain: Pick<Chain, "spam">,
  contract: string,
  tokenId: string,
): ButtonSpec[] {
  return [
    // Spam reports only where the data service detects spam.
    ...(chain.spam ? [reportButton("spam", { contract, tokenId })] : []),
    nftRaw.button({ contract, tokenId }, "Raw metadata", { style: "secondary" }),
  ];
}

/** Raw metadata longer than this goes out as a file rather than in the message. */
const RAW_INLINE_MAX = 1500;

export function nftReply(
  details: NftDetails,
  owners: { address: string; quantity: string }[] | undefined,
  now: Date,
  chain: Pick<Chain, "explorer" | "symbol" | "marketplace" | "spam">,
  ipfsGateway = "https://ipfs.io/ipfs/",
  /** From the raw metadata (metadataTraits); none when it could not be read. */
  traits: readonly Trait[] = [],
  /** Its buttons (nftButtons), when made before the details were read. */
  buttons: ButtonSpec[] = nftButtons(chain, details.nft.contractAddress, details.nft.tokenId),
): Reply {
  const explorerUrl = chain.explorer;
  const { nft, metrics, lastSale } = details;
  const name = presentText(nft.metadata?.name);
  const collection = collectionName(presentText(nft.collection?.name));
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
  const description = presentText(nft.metadata?.description);
  if (description)
    fields.push({ name: "Description", value: cutText(description, DESCRIPTION_MAX) });
  fields.push(...traitFields(traits));
  const imageUrl =
    publicImageUrl(nft.metadata?.image?.uri, ipfsGateway) ??
    publicImageUrl(nft.metadata?.image?.uriOriginal, ipfsGateway);
  const image: ReplyImage | undefined = imageUrl
    ? { kind: "url", url: imageUrl, alt: cutText(name ?? collection, NAME_MAX) }
    : undefined;
  const reply: Reply = {
    title: nftTitle(name, collection, nft.tokenId),
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
    buttons,
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
        "conflicting_arguments",
        `The link names token ${item.tokenId} but you also gave ${token_id}: give one.`,
      );
    }
    const tokenId = token_id ?? item.tokenId;
    if (tokenId === undefined) {
      throw new UserError(
        "missing_argument",
        "Which token? Add the token id after the contract, e.g. /nft 0x… 1234, or paste an item link.",
      );
    }
    const options = { signal: ctx.signal };
    const reading = Promise.all([
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
      // The normalized metadata has no traits: they are read from the document itself.
      ctx.api.foundational.rawMetadata(item.contract, tokenId, options).then(
        ({ metadata }) => metadataTraits(metadata.raw),
        (error: unknown) => {
          // Traits are a bonus too: without them the details still answer.
          if (error instanceof ApiError) return [];
          throw error;
        },
      ),
    ]);
    // Stored while the three reads are in flight: the answer need not wait for them after.
    const buttons = nftButtons(ctx.chain, item.contract, tokenId);
    ctx.storeButtons?.(buttons);
    const [details, owners, traits] = await reading;
    ctx.collections.remember([
      { address: details.nft.contractAddress, name: details.nft.collection?.name ?? "" },
    ]);
    ctx.resolver.rememberWallets(
      (owners ?? []).slice(0, OWNERS_SHOWN).map((owner) => owner.address),
    );
    return nftReply(
      details,
      owners,
      ctx.now(),
      ctx.chain,
      ctx.settings.ipfsGateway,
      traits,
      buttons,
    );
  },
  actions: {
    raw: nftRaw.handle({
      async run(ctx, payload) {
        const contract = parseAddress(payload.contract);
        const tokenId = parseTokenId(payload.tokenId);
        const { metadata } = await ctx.api.foundational.rawMetadata(contract, tokenId, {
          signal: ctx.signal,
        });
        return rawMetadataReply(contract, tokenId, metadata.raw, metadata.indexedAt);
      },
    }),
  },
});
