import { type Call, type CallOptions, oneOf, seg } from "./call.ts";
import { SPAM_FILTERS, type SpamFilter } from "./schemas.ts";
import { parseAddress, parseEnsName, parseTokenId, parseWallet } from "./validate.ts";

export interface ReportInput {
  wallet: string;
  contract: string;
  tokenId?: string | undefined;
  feedback?: string | undefined;
}

/** Wallets (wallets/v1beta2): endpoints 18 to 22 of the spec. */
export class WalletsApi {
  constructor(
    private readonly call: Call,
    private readonly reportNotSpamPath: string,
  ) {}

  /** 18. A wallet's NFTs, each flagged spam or not for that wallet. */
  async nfts(wallet: string, query: { spam?: SpamFilter } = {}, options?: CallOptions) {
    const w = parseWallet(wallet);
    return this.call(
      "walletNfts",
      {
        method: "GET",
        path: `/wallets/v1beta2/${seg(w)}/nfts`,
        query: {
          spam:
            query.spam !== undefined ? oneOf(query.spam, SPAM_FILTERS, "spam filter") : undefined,
        },
        ttl: "ownership",
        resource: { kind: "wallet", wallet: w },
      },
      options,
    );
  }

  /** 19. Report a spam NFT the classification missed. Never retried, never cached. */
  async reportSpam(input: ReportInput, options?: CallOptions) {
    const { wallet, contract, query } = this.reportParts(input);
    return this.call(
      "report",
      {
        method: "GET",
        path: `/wallets/v1beta2/${seg(wallet)}/report_spam/${seg(contract)}`,
        query,
        retry: false,
        resource: { kind: "wallet", wallet },
      },
      options,
    );
  }

  /** 20. Report an NFT wrongly flagged spam. Its path is not in the spec: a setting (unverified). */
  async reportNotSpam(input: ReportInput, options?: CallOptions) {
    const { wallet, contract, query } = this.reportParts(input);
    const path = this.reportNotSpamPath
      .replace("{wallet}", seg(wallet))
      .replace("{contract}", seg(contract));
    return this.call(
      "report",
      { method: "GET", path, query, retry: false, resource: { kind: "wallet", wallet } },
      options,
    );
  }

  private reportParts(input: ReportInput) {
    const wallet = parseAddress(input.wallet, "wallet address");
    const contract = parseAddress(input.contract, "contract address");
    const tokenId = input.tokenId !== undefined ? parseTokenId(input.tokenId) : undefined;
    const feedback = input.feedback?.trim().slice(0, 1000) || undefined;
    return { wallet, contract, query: { tokenId, feedback } };
  }

  /** 21. ENS name to address. */
  async ensByName(name: string, options?: CallOptions) {
    const normalized = parseEnsName(name);
    return this.call(
      "ensByName",
      {
        method: "GET",
        path: `/wallets/v1beta2/ens/by_name/${seg(normalized)}`,
        ttl: "ens",
        resource: { kind: "ens", name: normalized },
      },
      options,
    );
  }

  /** 22. Every ENS name that maps to an address. */
  async ensByAddress(address: string, options?: CallOptions) {
    const a = parseAddress(address, "address");
    return this.call(
      "ensByAddress",
      {
        method: "GET",
        path: `/wallets/v1beta2/ens/by_address/${seg(a)}`,
        ttl: "ens",
        resource: { kind: "ens_address", address: a },
      },
      options,
    );
  }
}
