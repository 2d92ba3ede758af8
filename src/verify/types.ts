/**
 * Proved wallets (issue 27): the contract between the verification service, the page served on the
 * HTTP host, the commands and the chat adapters. A person asks /verify, gets a one-time link to the
 * bot's page, signs a Sign-In with Ethereum (EIP-4361) message there, and the service keeps the
 * message and signature as the proof. Nothing here holds a private key.
 */
import type { PrivateOrigin } from "../adapters/types.ts";
import type { Platform } from "../core/command.ts";
import type { CountedWallets } from "../core/person-wallets.ts";
import type { PersonDelegation, PersonWallet, WalletKind } from "../store/types.ts";

/** Where a /verify was asked, and so where its success is told. */
/** Where the person asked for the link: the adapters' PrivateOrigin, told there once proved. */
export type VerifyOrigin = PrivateOrigin;

/** A person's wallets as they count (issue 37), and as /wallets shows them. */
export interface PersonHoldings extends CountedWallets {
  proved: (PersonWallet & { kind: WalletKind })[];
  /** Every delegation to a proved wallet, those that do not count marked why. */
  delegations: PersonDelegation[];
  /** Chains whose delegations are read (they have an RPC URL), by id. */
  readOn: string[];
}

/**
 * A link's token as the service makes them (32 random bytes, base64url), with room to spare;
 * anything else is refused before any lookup, by the service and the page's routes alike.
 */
export const LINK_TOKEN = /^[A-Za-z0-9_-]{16,100}$/;

/** A one-time link: the token is secret (only its hash is stored); valid 10 minutes, used once. */
export interface VerifyLink {
  url: string;
  expiresAt: number;
  chain: string;
}

/** Why the page or the service refused; `message` is plain words for the person. */
export interface VerifyRefusal {
  code:
    | "unknown_link"
    | "expired"
    | "used"
    | "wrong_domain"
    | "wrong_chain"
    | "bad_message"
    | "stale_nonce"
    | "bad_signature"
    | "contract_wallet_needs_rpc"
    | "rate_limited"
    | "too_many_wallets"
    | "unavailable";
  message: string;
}

export type VerifyResult<T> = ({ ok: true } & T) | { ok: false; refusal: VerifyRefusal };

/** What the page shows before Connect wallet. */
export interface VerifyPageState {
  chain: string;
  chainName: string;
  chainId: number;
  expiresAt: number;
  /** The bot's name as people see it in the chat (its account's name), else "the bot". */
  botName: string;
  /**
   * Where the person asked: the platform, and the server's or group's name when the platform gave
   * it (none in a private chat or on the console's own chat).
   */
  place: { platform: Platform; name?: string | undefined };
  /**
   * The names of the EVM chains the bot serves: a proof by an externally owned account (its key's
   * signature) holds on each of them; a contract wallet's only on the chain it was proved on.
   */
  chainsServed: string[];
}

/** A message for the page to have signed with personal_sign. */
export interface VerifyChallenge {
  message: string;
}

/** Told to the chat where /verify was asked, once a wallet is proved. */
export interface VerifiedNotice {
  origin: VerifyOrigin;
  address: string;
  chain: string;
  /** What kind of account signed: an externally owned account, or a contract wallet. */
  kind: "eoa" | "contract";
  /** Cold wallets found delegating to it (delegate.xyz), which now count for the person too. */
  delegated?: { cold: string; chain: string; contract: string }[];
}

export interface VerifyService {
  /** Drops expired links' confirmations and old links (the hourly prune); how many links went. */
  prune(): Promise<number>;
  /** A new link for this person (rate-limited per person). */
  createLink(origin: VerifyOrigin, chain: string): Promise<VerifyResult<{ link: VerifyLink }>>;
  /** The page opening its link: still valid? */
  open(token: string): Promise<VerifyResult<{ state: VerifyPageState }>>;
  /**
   * A fresh SIWE message for `address` with a single-use nonce (rate-limited per address and per
   * link); a newer challenge replaces the older one of the same link.
   */
  challenge(token: string, address: string): Promise<VerifyResult<{ challenge: VerifyChallenge }>>;
  /**
   * The signed message: domain, URI, chain id, nonce, times and signature checked; on success the
   * nonce and link are used up (only then: garbage cannot burn a pending nonce), the wallet is
   * kept with its proof, and the origin's chat is told.
   */
  prove(
    token: string,
    message: string,
    signature: string,
  ): Promise<VerifyResult<{ address: string; chain: string }>>;
  /**
   * The wallets that count for a person (issue 37): proved ones on the chains their proofs hold
   * on, and cold wallets delegating to them. `refresh` re-reads the delegate registries first.
   */
  holdings(
    platform: string,
    userId: string,
    options?: { refresh?: boolean; signal?: AbortSignal | undefined },
  ): Promise<PersonHoldings>;
}

/** How the service tells a chat that a wallet was proved (each adapter knows its platform). */
export type VerifiedNotifier = (notice: VerifiedNotice) => Promise<void>;

/**
 * A wallet another account of the same platform proved (issue 34): on a platform a wallet is one
 * person's, and the newer signature shows who holds its key now. Told to the account that held
 * it, privately; what the wallet gave it (gates) ends as after a sale.
 */
export interface WalletMovedNotice {
  platform: Platform;
  /** The account that held the wallet until now. */
  userId: string;
  /** Checksummed. */
  address: string;
  chain: string;
}

export type WalletMovedNotifier = (notice: WalletMovedNotice) => Promise<void>;

declare module "../core/command.ts" {
  interface CommandServices {
    /** Proved wallets (/verify's links); absent in a bot (or a test's runtime) without it. */
    verify?: VerifyService;
  }
}
