/** Wallets, endpoints 18 to 22 (version segment v1beta2). */

import { notFound } from "./errors.ts";
import { compareTokens, ensJson, nftJson } from "./json.ts";
import {
  parseAddress,
  parseEnsName,
  parseEnum,
  parseTokenId,
  requireContract,
  requireToken,
  resolveWallet,
} from "./params.ts";
import { param, type RequestContext, type Route, type SpamReport } from "./router.ts";
import { SPAM_FILTERS } from "./types.ts";
import { gifts, stillHeld } from "./watches.ts";

/** Endpoint 20 has no path in the spec; the simulator follows endpoint 19's pattern. */
export const REPORT_NOT_SPAM_PATTERN = "/wallets/v1beta2/:wallet/report_not_spam/:contract";

export const walletRoutes: Route[] = [
  { method: "GET", pattern: "/wallets/v1beta2/:wallet/nfts", handler: walletNfts },
  {
    method: "GET",
    pattern: "/wallets/v1beta2/:wallet/report_spam/:contract",
    handler: (context) => report(context, "spam"),
  },
  {
    method: "GET",
    pattern: REPORT_NOT_SPAM_PATTERN,
    handler: (context) => {
      if (!context.reportNotSpamSupported) throw notFound("not found");
      return report(context, "not_spam");
    },
  },
  { method: "GET", pattern: "/wallets/v1beta2/ens/by_name/:name", handler: ensByName },
  { method: "GET", pattern: "/wallets/v1beta2/ens/by_address/:address", handler: ensByAddress },
];

/** Endpoint 18: every NFT labelled with `spam`; SPAM_FILTER_UNSPECIFIED means no filter. */
function walletNfts(context: RequestContext) {
  const { world, query } = context;
  const { wallet, address } = resolveWallet(world, param(context, 0), "path");
  const filter = parseEnum(query.get("spam"), SPAM_FILTERS, "spam");
  // With the NFTs given on demand (giveNft).
  const holdings = [...(wallet?.holdings ?? []), ...gifts(world, address)]
    .filter((holding) => stillHeld(world, address, holding))
    .filter(({ token }) => {
      if (filter === "SPAM_FILTER_EXCLUDE") return !token.contract.spam;
      if (filter === "SPAM_FILTER_ONLY") return token.contract.spam;
      return true;
    })
    .sort((a, b) => compareTokens(a.token, b.token));
  return {
    nfts: holdings.map(({ token, quantity }) => ({
      nft: nftJson(world, token, "list"),
      quantity: String(quantity),
      spam: token.contract.spam,
    })),
  };
}

/** Endpoints 19 and 20: tokenId and feedback in the query; the answer is `{}`. */
function report(context: RequestContext, kind: SpamReport["kind"]) {
  const { world, query } = context;
  const { address } = resolveWallet(world, param(context, 0), "path");
  const contract = requireContract(world, param(context, 1));
  const tokenText = query.get("tokenId");
  let tokenId: string | undefined;
  if (tokenText !== null && tokenText !== "") {
    tokenId = parseTokenId(tokenText);
    requireToken(contract, tokenId);
  }
  const feedback = query.get("feedback");
  context.reports.push({
    kind,
    walletAddress: address,
    contractAddress: contract.address,
    ...(tokenId === undefined ? {} : { tokenId }),
    ...(feedback === null ? {} : { feedback }),
    at: Date.now(),
  });
  return {};
}

function ensByName(context: RequestContext) {
  const name = parseEnsName(param(context, 0));
  const record = context.world.ens.get(name);
  if (!record) throw notFound(`ENS name ${name} is not registered`);
  return { entity: ensJson(record) };
}

/** Endpoint 22 takes an address only; an address without names gets an empty list. */
function ensByAddress(context: RequestContext) {
  const address = parseAddress(param(context, 0), "address");
  const wallet = context.world.walletByAddress.get(address);
  const entities = (wallet?.names ?? []).flatMap((name) => {
    const record = context.world.ens.get(name);
    return record ? [ensJson(record)] : [];
  });
  return { entities };
}
