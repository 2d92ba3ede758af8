/**
 * The wallets that count for a person (issue 37), as gates, reports and insights read them: each
 * proved wallet, and each cold wallet that delegated to one of them on delegate.xyz. What counts
 * depends on what is asked: an externally owned account's proof (its key's signature) holds on
 * every EVM chain; a contract wallet's only on the chains where its signature was checked; a
 * delegation on its chain, and for one contract when it was given for one.
 */

/** One wallet counting for a person, and how. */
export interface HeldWallet {
  /** Lower-case. */
  address: string;
  how: "signature" | "contract" | "delegation";
  /** The chains it counts on: "all" for an externally owned account's proof. */
  chains: "all" | readonly string[];
  /** A delegation's hot wallet (the person's proved one), lower-case. */
  via?: string;
  /** A delegation for one contract (lower-case); undefined: all rights. */
  contract?: string;
}

export interface CountedWallets {
  wallets: readonly HeldWallet[];
  /**
   * Chains where some of the person's wallets could not be read (a registry's node did not
   * answer): there a "no" is "unknown", never a "no".
   */
  unknownOn: ReadonlySet<string>;
}

/** The addresses that count on `chain`, for a read about `contract` when it is about one. */
export function walletsOn(counted: CountedWallets, chain: string, contract?: string): string[] {
  const out = new Set<string>();
  for (const wallet of counted.wallets) {
    if (wallet.chains !== "all" && !wallet.chains.includes(chain)) continue;
    if (wallet.contract !== undefined && wallet.contract !== contract?.toLowerCase()) continue;
    out.add(wallet.address.toLowerCase());
  }
  return [...out];
}

/** Addresses counting on every chain, for everything (a test, /gate test of given wallets). */
export function everywhere(addresses: readonly string[]): CountedWallets {
  return {
    wallets: addresses.map((address) => ({
      address: address.toLowerCase(),
      how: "signature",
      chains: "all",
    })),
    unknownOn: new Set(),
  };
}

/** The given wallets as counted: addresses as they are, or counted already. */
export function counted(wallets: readonly string[] | CountedWallets): CountedWallets {
  return Array.isArray(wallets) ? everywhere(wallets) : (wallets as CountedWallets);
}
