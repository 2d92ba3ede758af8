/** Foundational data, endpoints 10 to 14 (version segment v1beta2). */

import { badRequest } from "./errors.ts";
import { listContracts } from "./history.ts";
import { compareTokens, contractJson, nftJson, saleJson, tokenDetails } from "./json.ts";
import {
  listParam,
  page,
  parseAddress,
  parseEnum,
  queryPaging,
  requireContract,
  requireToken,
  resolveWallet,
} from "./params.ts";
import { param, type RequestContext, type Route } from "./router.ts";
import { QUERYABLE_CONTRACT_TYPES, SORT_DIRECTIONS } from "./types.ts";
import { compareText, parseTimestamp } from "./units.ts";
import { stillHeld } from "./watches.ts";

export const foundationalRoutes: Route[] = [
  { method: "GET", pattern: "/foundational/v1beta2/contracts", handler: contracts },
  {
    method: "GET",
    pattern: "/foundational/v1beta2/nfts/:contract/:token/details",
    handler: nftDetails,
  },
  {
    method: "GET",
    pattern: "/foundational/v1beta2/nfts/:contract/:token/raw_metadata",
    handler: rawMetadata,
  },
  { method: "GET", pattern: "/foundational/v1beta2/nfts/by_owner/:owner", handler: nftsByOwner },
  { method: "GET", pattern: "/foundational/v1beta2/nfts/:contract/:token/owners", handler: owners },
];

/** Values of a type-list query parameter, each checked against the known contract types. */
export function typeList(query: URLSearchParams, name: string): Set<string> {
  const types = listParam(query, name);
  for (const type of types) parseEnum(type, QUERYABLE_CONTRACT_TYPES, name);
  return new Set(types.filter((type) => type !== "TYPE_UNSPECIFIED"));
}

/**
 * Endpoint 10: ascending by mint time (then address) unless SORT_DIRECTION_DESC;
 * blockTimestampGt is exclusive; contractTypes matches any of the listed types. The timed mints'
 * history up to now is listed with the rest (history.ts).
 */
function contracts({ world, query, now }: RequestContext) {
  const paging = queryPaging(query);
  const direction = parseEnum(query.get("sortDirection"), SORT_DIRECTIONS, "sortDirection");
  const types = typeList(query, "contractTypes");
  const afterText = query.get("blockTimestampGt");
  let afterMs: number | undefined;
  if (afterText !== null && afterText !== "") {
    afterMs = parseTimestamp(afterText);
    if (afterMs === undefined) throw badRequest("blockTimestampGt must be an RFC 3339 timestamp");
  }
  const listed = listContracts(world, {
    afterMs,
    types,
    descending: direction === "SORT_DIRECTION_DESC",
    ...paging,
    nowMs: now(),
  });
  return { contracts: listed.map(contractJson) };
}

function nftDetails(context: RequestContext) {
  const contract = requireContract(context.world, param(context, 0));
  const token = requireToken(contract, param(context, 1));
  const quantity = token.owners.reduce((sum, owner) => sum + owner.quantity, 0);
  return {
    nft: nftJson(context.world, token, "full"),
    metrics: { quantity: String(quantity), ownerCount: String(token.owners.length) },
    // A token that never sold has no lastSale.
    ...(token.lastSale ? { lastSale: saleJson(context.world, token.lastSale) } : {}),
  };
}

function rawMetadata(context: RequestContext) {
  const contract = requireContract(context.world, param(context, 0));
  const token = requireToken(contract, param(context, 1));
  const details = tokenDetails(context.world, token);
  return { metadata: { raw: details.raw, indexedAt: details.indexedAt } };
}

/** Endpoint 13. An unknown contractAddress filter yields an empty list, not a 404. */
function nftsByOwner(context: RequestContext) {
  const { world, query } = context;
  const { wallet, address } = resolveWallet(world, param(context, 0), "path");
  const paging = queryPaging(query);
  const contractText = query.get("contractAddress");
  const contractAddress =
    contractText === null || contractText === ""
      ? undefined
      : parseAddress(contractText, "contractAddress");
  const types = typeList(query, "tokenTypes");
  const holdings = (wallet?.holdings ?? [])
    .filter((holding) => stillHeld(world, address, holding))
    .filter(
      ({ token }) =>
        (contractAddress === undefined || token.contract.address === contractAddress) &&
        (types.size === 0 || types.has(token.contract.nftType ?? "")),
    )
    .sort((a, b) => compareTokens(a.token, b.token));
  return {
    tokens: page(holdings, paging).map(({ token, quantity }) => {
      const { metadata } = nftJson(world, token, "list");
      return {
        contractAddress: token.contract.address,
        tokenId: token.id,
        type: token.contract.nftType ?? "TYPE_UNSPECIFIED",
        metadata: {
          metadataUri: metadata.metadataUri,
          name: metadata.name,
          description: metadata.description,
          image: {
            ...(metadata.image.uri === undefined ? {} : { uri: metadata.image.uri }),
            mimeType: metadata.image.mimeType,
          },
        },
        quantity: String(quantity),
      };
    }),
  };
}

/** Endpoint 14: owners by quantity descending, then address. */
function owners(context: RequestContext) {
  const contract = requireContract(context.world, param(context, 0));
  const token = requireToken(contract, param(context, 1));
  const paging = queryPaging(context.query);
  const sorted = [...token.owners].sort(
    (a, b) => b.quantity - a.quantity || compareText(a.wallet.address, b.wallet.address),
  );
  return {
    owners: page(sorted, paging).map((owner) => ({
      address: owner.wallet.address,
      quantity: String(owner.quantity),
    })),
  };
}
