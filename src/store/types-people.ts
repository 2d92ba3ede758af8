/**
 * The store's contract for people (part of src/store/types.ts, which re-exports all of it): their
 * wallets, the /verify links that prove them, and their spam reports.
 */

// Reports and linked wallets ---------------------------------------------------------------------

export interface LinkedWallet {
  address: string;
  /** What the person typed: the ENS name or the address. */
  label: string;
  linkedAt: number;
}

/** At most this many wallets per person (issue 27). */
export const MAX_WALLETS_PER_PERSON = 10;

/** One of a person's wallets: proved by a signed message, or linked before proofs ("not proved"). */
export interface PersonWallet {
  /** Lower-case. */
  address: string;
  /** The chain it was last proved on ("" for a wallet linked before proofs: it names none). */
  chain: string;
  label: string;
  /** When it was proved (epoch ms); undefined: linked on the person's word, not proved. */
  provedAt: number | undefined;
  linkedAt: number;
  /**
   * Who signed: an externally owned account (its proof holds on every EVM chain) or a contract
   * wallet (its proof holds on the chains it was checked on); undefined: not proved, or proved
   * before this was kept (the verification service tells it from the signature).
   */
  kind?: WalletKind | undefined;
  /** Every chain it was proved on, the latest last ([] when not proved). */
  chains: string[];
}

export type WalletKind = "eoa" | "contract";

/** A proved wallet with its proof: the EIP-4361 message and the signature over it. */
export interface ProvedWallet {
  platform: string;
  userId: string;
  /** Lower-case. */
  address: string;
  chain: string;
  label: string;
  message: string;
  signature: string;
  provedAt: number;
  /** Who signed; undefined (older callers): told from the signature when first read. */
  kind?: WalletKind | undefined;
}

/** What keeping a proved wallet did: added or updated it, and the accounts it was moved from. */
export interface KeptWallet {
  kept: "added" | "updated";
  /** The platform's other accounts that held it as proved (at most one): they hold it no more. */
  movedFrom: string[];
}

/**
 * A person's wallets (up to MAX_WALLETS_PER_PERSON), and the one their spam reports are made for.
 * On each platform a proved wallet is one person's (issue 34): a proof by another account of the
 * platform moves it, since that account holds the key now. Accounts of other platforms (the same
 * person's Telegram and Discord) may each hold it.
 */
export interface WalletStore {
  /** The person's wallets, the most recently proved first, then the not proved ones. */
  list(platform: string, userId: string): Promise<PersonWallet[]>;
  /**
   * Keeps a proved wallet with its proof (a wallet already there, proved or not, is replaced),
   * moving it from the platform's account that held it: "full" when the person has
   * MAX_WALLETS_PER_PERSON others, and then nothing changes.
   */
  addProved(wallet: ProvedWallet): Promise<"added" | "updated" | "full">;
  /** Forgets one wallet (an address) or all of them; how many were forgotten. */
  remove(platform: string, userId: string, address: string | "all"): Promise<number>;
  /** The wallet spam reports are made for: the most recently proved one (never a not proved). */
  reportWallet(platform: string, userId: string): Promise<PersonWallet | undefined>;
  /**
   * Before proofs (/link): keeps a wallet on the person's word, as not proved, replacing the
   * person's other not proved one. Kept while /link still calls it.
   */
  link(
    platform: string,
    userId: string,
    address: string,
    label: string,
    now: number,
  ): Promise<void>;
  /** Before proofs (/unlink): forgets every wallet of the person; whether there was one. */
  unlink(platform: string, userId: string): Promise<boolean>;
  /** Before proofs: the most recently linked or proved wallet. Reports use reportWallet. */
  find(platform: string, userId: string): Promise<LinkedWallet | undefined>;
  /** A proved wallet's proof (the SIWE message and signature), to tell its kind when not kept. */
  proof(
    platform: string,
    userId: string,
    address: string,
  ): Promise<{ message: string; signature: string; chain: string } | undefined>;
  /** Keeps what kind of account a wallet proved before issue 37 is, once told. */
  setKind(platform: string, userId: string, address: string, kind: WalletKind): Promise<void>;
}

/**
 * A delegation read from delegate.xyz's registry on one chain (issue 37): the cold wallet `cold`
 * gave the hot wallet `hot` all its rights (`contract` "") or those for one contract.
 */
export interface Delegation {
  /** Lower-case, all three. */
  hot: string;
  cold: string;
  contract: string;
  chain: string;
  /** When the bot first read it (epoch ms): the earliest of several accounts keeps a cold wallet. */
  firstSeen: number;
}

/**
 * A delegation to one of a person's proved wallets, and whether it counts for them: on a platform
 * a cold wallet is one account's, as a proved one is (issue 34). It does not count when another
 * account proved the cold wallet itself ("proved"), or holds it by a delegation the bot saw first
 * ("earlier"), or when the person proved it themself ("own").
 */
export interface PersonDelegation extends Delegation {
  counts: boolean;
  heldElsewhere?: "proved" | "earlier" | "own";
}

export interface DelegationStore {
  /** Replaces what was known of (hot, chain) by `found`, keeping each one's first sighting. */
  put(
    hot: string,
    chain: string,
    found: readonly { cold: string; contract: string }[],
    at: number,
  ): Promise<void>;
  /** When each (hot, chain) of these hot wallets was last read: keyed `${hot} ${chain}`. */
  readAt(hot: readonly string[]): Promise<Map<string, number>>;
  /** The delegations to these people's proved wallets (by user id), marked as they count. */
  ofPeople(platform: string, userIds: readonly string[]): Promise<Map<string, PersonDelegation[]>>;
}

/** @deprecated the wallet store's former name. */
export type LinkedWalletStore = WalletStore;

/**
 * A /verify link as stored: the token itself never is, only its SHA-256 (a copy of the database
 * cannot be used to prove a wallet for someone).
 */
export interface VerifyLinkRow {
  tokenHash: string;
  platform: string;
  userId: string;
  chatId: string;
  /** The adapter's opaque way to confirm privately; dropped when the link is used or expires. */
  confirm: string | undefined;
  chain: string;
  createdAt: number;
  expiresAt: number;
  /** The pending challenge's nonce and the address it was made for (the latest challenge). */
  nonce: string | undefined;
  nonceAddress: string | undefined;
  usedAt: number | undefined;
  /** The SIWE message the latest challenge issued: the only text a proof may sign. */
  challenge: string | undefined;
  /** The community asked from (a Discord server, a Telegram group) and the person's name. */
  place?: string | undefined;
  name?: string | undefined;
  /** The community's and the bot's names as the platform gave them, for the page (issue 37). */
  placeName?: string | undefined;
  botName?: string | undefined;
}

export interface VerifyLinkStore {
  create(link: VerifyLinkRow): Promise<void>;
  find(tokenHash: string): Promise<VerifyLinkRow | undefined>;
  /**
   * A new challenge for the link (replacing an earlier one): its nonce, the address asked about
   * and the message issued. False when the link is used or expired.
   */
  setNonce(
    tokenHash: string,
    nonce: string,
    address: string,
    now: number,
    challenge: string,
  ): Promise<boolean>;
  /**
   * In one transaction: uses the link up (only while unused, unexpired and with this nonce) and
   * keeps the proved wallet, moved from the account that held it (WalletStore.addProved). "used":
   * the link was not (or no longer) open with that nonce; "full": the person has too many
   * wallets. In both cases nothing changes.
   */
  complete(
    tokenHash: string,
    nonce: string,
    wallet: ProvedWallet,
    now: number,
  ): Promise<KeptWallet | "used" | "full">;
  /** Drops the confirmations of expired links, and links expired before `before`; how many. */
  prune(now: number, before: number): Promise<number>;
}

export type ReportKind = "spam" | "not_spam";
/**
 * sending: an attempt is under way; queued: waiting for a retry (the service certainly did not
 * get it); unknown: the bot stopped or timed out during the call, so it may or may not have
 * arrived, and it is never sent again; the others are final answers.
 */
export type ReportStatus = "sending" | "sent" | "queued" | "unsupported" | "failed" | "unknown";

export interface SpamReport {
  id: number;
  /** The chain whose spam classifier the report is for (and whose data service gets it). */
  chain: string;
  platform: string;
  chatId: string;
  userId: string;
  userName: string;
  wallet: string;
  contract: string;
  /** "" when the report is about a whole collection. */
  tokenId: string;
  kind: ReportKind;
  feedback: string | null;
  status: ReportStatus;
  upstream: string | null;
  attempts: number;
  nextAttemptAt: number | null;
  createdAt: number;
  updatedAt: number;
}

/** `chain` defaults to ethereum (what every report was before chains). */
export type NewReport = Partial<Pick<SpamReport, "chain">> &
  Pick<
    SpamReport,
    | "platform"
    | "chatId"
    | "userId"
    | "userName"
    | "wallet"
    | "contract"
    | "tokenId"
    | "kind"
    | "feedback"
  >;

export type ReportKey = Partial<Pick<SpamReport, "chain">> &
  Pick<SpamReport, "platform" | "userId" | "wallet" | "contract" | "tokenId" | "kind">;

/** The audit trail of every report: who, where, what, and what the data service answered. */
export interface ReportStore {
  /**
   * Records a report (status 'sending') unless this person already reported the same (chain,
   * wallet, contract, token, kind): then the earlier report is returned and `created` is false.
   */
  create(report: NewReport, now: number): Promise<{ report: SpamReport; created: boolean }>;
  /** This person's earlier report of the same (chain, wallet, contract, token, kind), if any. */
  findSame(key: ReportKey): Promise<SpamReport | undefined>;
  /**
   * Records an attempt before its call is made (committed first, so a crash during the call
   * leaves the report in 'sending', which the next start marks unknown).
   */
  begin(id: number, now: number): Promise<SpamReport>;
  finish(
    id: number,
    status: Exclude<ReportStatus, "sending" | "queued">,
    upstream: string,
    now: number,
  ): Promise<void>;
  queue(id: number, upstream: string, nextAttemptAt: number, now: number): Promise<void>;
  /**
   * Reports left in 'sending' by a process that stopped during the call: whether the service
   * got them is unknown, and they are not sent again. Only those sending since before
   * `sendingBefore`: with several instances on one store, a younger one may be another
   * instance's call still in progress. Returns how many.
   */
  markInterrupted(now: number, sendingBefore: number): Promise<number>;
  /** Reports waiting for a retry, oldest first. */
  due(now: number, limit: number): Promise<SpamReport[]>;
  /** How many reports a person made since `since` (for the per-person limit). */
  countSince(platform: string, userId: string, since: number): Promise<number>;
  /** A chat's reports, newest first. */
  forChat(platform: string, chatId: string, limit?: number): Promise<SpamReport[]>;
  /**
   * How many people reported each of `contracts` on `chain` as spam in each of `chatIds` (kind
   * 'spam', any status): only the (chat, contract) pairs with at least one report.
   */
  spamReporters(
    platform: string,
    chain: string,
    chatIds: readonly string[],
    contracts: readonly string[],
  ): Promise<{ chatId: string; contract: string; reporters: number }[]>;
}
