import {
  type Call,
  type CallOptions,
  checkTimestamp,
  oneOf,
  type Page,
  pageQuery,
  seg,
} from "./call.ts";
import { NFT_CONTRACT_TYPES, SORT_DIRECTIONS, type SortDirection } from "./schemas.ts";
import { parseAddress, parseTokenId, parseWallet } from "./validate.ts";

export interface ContractsQuery extends Page {
  sortDirection?: SortDirection;
  contractTypes?: readonly string[];
  /** ISO 8601; exclusive lower bound on mint time. */
  blockTimestampGt?: string;
}

/** Foundational data (foundational/v1beta2): endpoints 10 to 14 of the spec. */
export class FoundationalApi {
  constructor(private readonly call: Call) {}

  /** 10. Contracts by mint time; without contractTypes, fungible ones too. */
  async contracts(query: ContractsQuery = {}, options?: CallOptions) {
    const contractTypes = query.contractTypes?.map((type) =>
      oneOf(type, NFT_CONTRACT_TYPES, "contract type"),
    );
    checkTimestamp(query.blockTimestampGt, "blockTimestampGt");
    return this.call(
      "contracts",
      {
        method: "GET",
        path: "/foundational/v1beta2/contracts",
        query: {
          ...pageQuery(query),
          sortDirection:
            query.sortDirection !== undefined
              ? oneOf(query.sortDirection, SORT_DIRECTIONS, "sort direction")
              : undefined,
          contractTypes,
          blockTimestampGt: query.blockTimestampGt,
        },
        ttl: "contracts",
        resource: { kind: "contracts" },
      },
      options,
    );
  }

  /** The path of one token and what its errors are about (endpoints 11, 12 and 14). */
  private token(contract: string, tokenId: string, endpoint: string) {
    const address = parseAddress(contract, "contract address");
    const id = parseTokenId(tokenId);
    return {
      path: `/foundational/v1beta2/nfts/${seg(address)}/${seg(id)}/${endpoint}`,
      resource: { kind: "token", contract: address, tokenId: id } as const,
    };
  }

  /** 11. One NFT: metadata, metrics and last sale. */
  async nftDetails(contract: string, tokenId: string, options?: CallOptions) {
    return this.call(
      "nftDetails",
      { method: "GET", ...this.token(contract, tokenId, "details"), ttl: "nft" },
      options,
    );
  }

  /** 12. The metadata document as found. */
  async rawMetadata(contract: string, tokenId: string, options?: CallOptions) {
    return this.call(
      "rawMetadata",
      { method: "GET", ...this.token(contract, tokenId, "raw_metadata"), ttl: "nft" },
      options,
    );
  }

  /** 13. Tokens held by an owner, optionally in one collection. */
  async nftsByOwner(
    owner: string,
    query: Page & { contractAddress?: string; tokenTypes?: readonly string[] } = {},
    options?: CallOptions,
  ) {
    const wallet = parseWallet(owner);
    return this.call(
      "nftsByOwner",
      {
        method: "GET",
        path: `/foundational/v1beta2/nfts/by_owner/${seg(wallet)}`,
        query: {
          ...pageQuery(query),
          contractAddress:
            query.contractAddress !== undefined
              ? parseAddress(query.contractAddress, "collection address")
              : undefined,
          tokenTypes: query.tokenTypes?.map((type) =>
            oneOf(type, NFT_CONTRACT_TYPES, "token type"),
          ),
        },
        ttl: "ownership",
        resource: { kind: "holdings", owner: wallet },
      },
      options,
    );
  }

  /** 14. Current owners of one token (several for ERC1155). */
  async tokenOwners(contract: string, tokenId: string, page: Page = {}, options?: CallOptions) {
    return this.call(
      "tokenOwners",
      {
        method: "GET",
        ...this.token(contract, tokenId, "owners"),
        query: pageQuery(page),
        ttl: "ownership",
      },
      options,
    );
  }
}
