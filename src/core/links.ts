import {
  type Address,
  type Checked,
  checkAddress,
  checkTokenId,
  invalid,
  quoteInput,
  type TokenId,
  valid,
} from "../api/validate.ts";
import { parseShortForm } from "./known-collections.ts";
import { isLookup, type Lookup } from "./resolver.ts";

/**
 * What people paste: bare addresses, or links of marketplaces and explorers that contain a
 * contract and maybe a token id, often wrapped in <> (Discord's no-embed form) or spaces.
 */

export interface NftRef {
  contract: Address;
  tokenId?: TokenId;
}

const ADDRESS = "(0x[0-9a-fA-F]{40})";
const TOKEN = "(\\d{1,200})";

/** Link shapes we recognise, most specific first. Token ids are checked by checkTokenId after. */
const LINK_PATTERNS: readonly RegExp[] = [
  // OpenSea: /assets/ethereum/0x…/123, /assets/0x…/123 (old), /item/ethereum/0x…/123
  new RegExp(
    `^https?://(?:www\\.|testnets\\.)?opensea\\.io/(?:assets|item)/(?:[a-z0-9_-]+/)?${ADDRESS}/${TOKEN}(?:[/?#].*)?$`,
    "i",
  ),
  // Etherscan-like explorers: /nft/0x…/123, /token/0x…?a=123, /token/0x…, /address/0x…
  new RegExp(
    `^https?://(?:[a-z0-9-]+\\.)*(?:etherscan\\.io|basescan\\.org|polygonscan\\.com)/nft/${ADDRESS}/${TOKEN}(?:[/?#].*)?$`,
    "i",
  ),
  new RegExp(
    `^https?://(?:[a-z0-9-]+\\.)*(?:etherscan\\.io|basescan\\.org|polygonscan\\.com)/token/${ADDRESS}\\?(?:.*&)?a=${TOKEN}(?:[&#].*)?$`,
    "i",
  ),
  new RegExp(
    `^https?://(?:[a-z0-9-]+\\.)*(?:etherscan\\.io|basescan\\.org|polygonscan\\.com)/(?:token|address)/${ADDRESS}(?:[/?#].*)?$`,
    "i",
  ),
  // Blur and other marketplaces that put /0x…/123 in the path
  new RegExp(`^https?://(?:www\\.)?blur\\.io/(?:eth/)?asset/${ADDRESS}/${TOKEN}(?:[/?#].*)?$`, "i"),
];

/** Removes surrounding whitespace and one layer of <>, as Discord users do to suppress embeds. */
export function unwrap(input: string): string {
  const trimmed = input.trim();
  return trimmed.startsWith("<") && trimmed.endsWith(">") ? trimmed.slice(1, -1).trim() : trimmed;
}

function checkNftRef(input: string): Checked<NftRef> {
  const value = unwrap(input);
  if (/^https?:\/\//i.test(value)) {
    for (const pattern of LINK_PATTERNS) {
      const match = pattern.exec(value);
      if (!match?.[1]) continue;
      const contract = checkAddress(match[1], "contract address");
      if (!contract.ok || match[2] === undefined)
        return contract.ok ? valid({ contract: contract.value }) : contract;
      const tokenId = checkTokenId(match[2]);
      return tokenId.ok ? valid({ contract: contract.value, tokenId: tokenId.value }) : tokenId;
    }
    if (/opensea\.io\/collection\//i.test(value)) {
      return invalid(
        "OpenSea collection links hold a name, not the contract address: paste the contract address (0x…) or an item link.",
      );
    }
    return invalid(
      `I could not find a contract in ${quoteInput(value, 80)}: paste a contract address, or an OpenSea or Etherscan link.`,
    );
  }
  const contract = checkAddress(value, "contract address");
  return contract.ok ? valid({ contract: contract.value }) : contract;
}

const MAX_NAME_LENGTH = 200;

/**
 * What a person typed for a collection, as far as it can be read without the collection index:
 * an address or a link (checked here, with the precise complaint when it is neither), or text to
 * look up (a name, a symbol, initials, a prefix, the short form `0x1234…abcd`). Text that is only
 * hex after 0x is meant as an address, so it is checked as one.
 */
export function checkCollectionArg(input: string): Checked<Address | Lookup> {
  const ref = checkNftArg(input);
  if (!ref.ok) return ref;
  return valid(isLookup(ref.value) ? ref.value : ref.value.contract);
}

/** An NFT: its contract (as checkCollectionArg reads it) and maybe the token id a link names. */
export function checkNftArg(input: string): Checked<NftRef | Lookup> {
  const value = unwrap(input);
  if (parseShortForm(value)) return valid({ lookup: value });
  if (/^https?:\/\//i.test(value) || /^0x[0-9a-f]*$/i.test(value)) return checkNftRef(value);
  if (value.length === 0)
    return invalid("Give a collection: its name or symbol, its address, or a link.");
  if (Array.from(value).length > MAX_NAME_LENGTH) {
    return invalid(
      `That is longer than any collection name (at most ${MAX_NAME_LENGTH} characters).`,
    );
  }
  return valid({ lookup: value });
}
