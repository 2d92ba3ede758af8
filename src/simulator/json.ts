/**
 * Builders of the JSON shapes the spec defines, from the data-set records. Per-token details
 * (metadata, mint transaction) are derived on demand from a per-token seed, so they are stable
 * without being stored.
 */

import { TRAIT_TYPES, TRAIT_VALUES } from "./names.ts";
import { hashSeed, Rng } from "./random.ts";
import type { ContractRec, EnsRec, SaleRec, TokenRec, World } from "./records.ts";
import type { Contract, EnsEntityJson, NftJson, NftMetadataJson, SaleJson } from "./types.ts";
import { compareText, formatUnits, isoSeconds, SECONDS_PER_DAY } from "./units.ts";

/** Block number of the Merge and its time, to give sales plausible block numbers. */
const MERGE_BLOCK = 15_537_394;
const MERGE_SEC = 1_663_224_179;

export function contractJson(contract: ContractRec): Contract {
  return {
    address: contract.address,
    name: contract.name,
    symbol: contract.symbol,
    decimals: contract.decimals,
    types: [...contract.types],
    mintEvent: {
      blockTimestamp: isoSeconds(contract.mintSec),
      txHash: contract.mintTx,
      minterAddress: contract.minter,
    },
  };
}

interface TokenDetails {
  metadata: NftMetadataJson;
  imageCached: boolean;
  mintTx: string;
  mintLogIndex: number;
  raw: string;
  indexedAt: string;
}

const IMAGE_TYPES = [
  ["image/png", "png"],
  ["image/png", "png"],
  ["image/gif", "gif"],
  ["image/svg+xml", "svg"],
] as const;

export function tokenDetails(world: World, token: TokenRec): TokenDetails {
  const { contract, id } = token;
  const rng = new Rng(hashSeed(world.seed, `token:${contract.address}:${id}`));
  const [imageMime, extension] = rng.pick(IMAGE_TYPES);
  const name = contract.name === "" ? "" : `${contract.name} #${id}`;
  const traits = TRAIT_TYPES.slice(0, rng.int(1, TRAIT_TYPES.length)).map((trait) => ({
    trait_type: trait,
    value: rng.pick(TRAIT_VALUES),
  }));
  // A trait of "None" is a real value, but no word for a piece: "None piece from…" read as a bug.
  const look = traits.find((trait) => trait.value !== "None")?.value ?? "Plain";
  let description = rng.chance(0.3)
    ? ""
    : `${look} piece from ${contract.name || "an unnamed collection"}.`;
  const uriOriginal = `ipfs://bafybei${rng.hex(52)}/${id}.${extension}`;
  const metadataUri = token.textMetadata
    ? { uri: `https://meta.sim.example/${contract.address}/${id}.txt`, mimeType: "text/plain" }
    : rng.chance(0.5)
      ? { uri: `https://meta.sim.example/${contract.address}/${id}`, mimeType: "application/json" }
      : { uri: `ipfs://bafybei${rng.hex(52)}/${id}`, mimeType: "application/json" };
  const indexedSec = Math.min(world.anchorSec, token.mintSec + rng.int(60, 86_400));
  const indexedAt = `${isoSeconds(indexedSec).slice(0, 19)}.${rng.digits(6)}Z`;
  const imageCached = rng.chance(0.8);
  const mintTx = rng.txHash();
  const mintLogIndex = rng.int(0, 300);
  // Drawn last, so the values above stay what they were. Indexers that stringify a null send
  // "None"; metadata documents carry traits as OpenSea's `attributes` list, as `traits`, or as a
  // map of trait to value, some with a numeric trait.
  if (token.noneDescription || rng.chance(0.1)) description = "None";
  const form = token.noneDescription ? 0 : rng.int(0, 5);
  const numeric = rng.chance(0.3)
    ? [{ display_type: "number", trait_type: "Generation", value: rng.int(1, 5), max_value: 5 }]
    : [];
  const traitFields =
    form === 4
      ? { traits }
      : form === 5
        ? { attributes: Object.fromEntries(traits.map((trait) => [trait.trait_type, trait.value])) }
        : { attributes: [...traits, ...numeric] };
  const raw = token.textMetadata
    ? `Token ${id} of ${contract.name || "an unnamed collection"}.\nThis document is plain text, {not JSON`
    : JSON.stringify({ name, description, image: uriOriginal, ...traitFields });
  return {
    metadata: {
      metadataUri,
      name,
      description,
      image: {
        uri: `https://img.sim.example/${contract.address}/${id}.${extension}`,
        uriOriginal,
        mimeType: imageMime,
      },
    },
    imageCached,
    mintTx,
    mintLogIndex,
    raw,
    indexedAt,
  };
}

/**
 * The NFT object. List views (endpoint 18) omit the normalized image uri of tokens whose image
 * is not cached yet, as the spec allows.
 */
export function nftJson(world: World, token: TokenRec, view: "full" | "list"): NftJson {
  const details = tokenDetails(world, token);
  const metadata = details.metadata;
  if (view === "list" && !details.imageCached) {
    const { uri: _omitted, ...image } = metadata.image;
    metadata.image = image;
  }
  return {
    contractAddress: token.contract.address,
    tokenId: token.id,
    type: token.contract.nftType ?? "TYPE_UNSPECIFIED",
    metadata,
    mintEvent: {
      txHash: details.mintTx,
      logIndex: String(details.mintLogIndex),
      blockTimestamp: isoSeconds(token.mintSec),
    },
    collection: { name: token.contract.name },
  };
}

/**
 * Last sale. Every amount is in native-token units except each fungibleTotals entry, which is in
 * its own token's units; nativeTransfersTotal + fungibleTransfersTotal = totalNative.
 */
export function saleJson(world: World, sale: SaleRec): SaleJson {
  const rng = new Rng(hashSeed(world.seed, `sale:${sale.id}`));
  const fungibleWei = sale.totalWei - sale.nativeWei;
  const usdCents = (sale.totalWei * ethUsdCents(sale.sec)) / 10n ** 18n;
  const fungibleTotals: SaleJson["recipientPaid"]["fungibleTotals"] = [];
  if (sale.payment === "weth" || sale.payment === "mixed") {
    fungibleTotals.push({
      contractAddress: world.weth.address,
      totalNormalized: formatUnits(fungibleWei, 18),
    });
  }
  if (sale.payment === "usdc") {
    // USDC has 6 decimals: cents * 10^4.
    fungibleTotals.push({
      contractAddress: world.usdc.address,
      totalNormalized: formatUnits(usdCents * 10_000n, 6),
    });
  }
  return {
    blockchainEvent: {
      txHash: rng.txHash(),
      logIndex: String(rng.int(0, 400)),
      seqIndex: String(rng.int(0, 4)),
      blockNumber: String(Math.max(1, MERGE_BLOCK + Math.floor((sale.sec - MERGE_SEC) / 12))),
      blockTimestamp: isoSeconds(sale.sec),
    },
    recipientPaid: {
      totalNative: formatUnits(sale.totalWei, 18),
      totalUsd: formatUnits(usdCents, 2),
      nativeTransfersTotal: formatUnits(sale.nativeWei, 18),
      fungibleTransfersTotal: formatUnits(fungibleWei, 18),
      attributedBy: "ATTRIBUTED_BY_SINGLE_TRANSFER",
      fungibleTotals,
    },
  };
}

/** USD per native token, in cents: a smooth deterministic curve over time. */
function ethUsdCents(sec: number): bigint {
  const day = sec / SECONDS_PER_DAY;
  return BigInt(Math.round((2600 + 900 * Math.sin(day / 37) + 250 * Math.sin(day / 9)) * 100));
}

export function ensJson(record: EnsRec): EnsEntityJson {
  return {
    name: record.name,
    resolvedAddress: record.wallet.address,
    validFromTimestamp: isoSeconds(record.validFromSec),
    validTillTimestamp: record.validTillSec === null ? null : isoSeconds(record.validTillSec),
    ...(record.parentName === undefined ? {} : { parentName: record.parentName }),
  };
}

/** Orders tokens by contract address, then numerically by id. */
export function compareTokens(a: TokenRec, b: TokenRec): number {
  return (
    compareText(a.contract.address, b.contract.address) ||
    a.id.length - b.id.length ||
    compareText(a.id, b.id)
  );
}
