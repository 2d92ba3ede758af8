/** The ENS name table of the synthetic data set. */

import { dnsTld, ensLabel, subdomainLabel } from "./names.ts";
import type { Rng } from "./random.ts";
import type { EnsRec, WalletRec } from "./records.ts";
import { SECONDS_PER_DAY } from "./units.ts";

/** Wallet indexes that get the names fixtures point at. */
export interface EnsFixtureWallets {
  /** A primary .eth name. */
  fixture: number;
  /** Three .eth names and a DNS name. */
  multiName: number;
  /** A DNS name only. */
  dns: number;
  /** A .eth name with a subdomain that resolves to it. */
  subdomain: number;
  /** An emoji name. */
  emoji: number;
}

export const EMOJI_NAME = "🦊🦊🦊.eth";

/**
 * ENS names: about half the wallets get a primary .eth name, a few several names, some a DNS
 * name (no expiry), and about 40 subdomains point at their parent's wallet or another one.
 */
export function buildEns(
  rng: Rng,
  wallets: WalletRec[],
  anchorSec: number,
  special: EnsFixtureWallets,
): Map<string, EnsRec> {
  const ens = new Map<string, EnsRec>();
  const add = (name: string, wallet: WalletRec, kind: "eth" | "dns" | "sub", parent?: string) => {
    const validFromSec = anchorSec - rng.int(1, 1500) * SECONDS_PER_DAY - rng.int(0, 86_399);
    // A few .eth names have lapsed: their expiry is in the past.
    const tillDays = rng.chance(0.05) ? -rng.int(1, 60) : rng.int(10, 1500);
    const record: EnsRec = {
      name,
      wallet,
      validFromSec,
      validTillSec: kind === "dns" ? null : anchorSec + tillDays * SECONDS_PER_DAY,
      parentName: parent,
    };
    ens.set(name, record);
    wallet.names.push(name);
  };
  const taken = new Set<string>();
  const fresh = (tld: string) => {
    const name = `${ensLabel(rng, taken, tld)}.${tld}`;
    taken.add(name);
    return name;
  };
  const freshEth = () => fresh("eth");
  const freshDns = () => fresh(dnsTld(rng));

  const forcedNamed = new Set([special.fixture, special.multiName, special.subdomain]);
  for (const wallet of wallets) {
    if (wallet.index === special.dns) {
      add(freshDns(), wallet, "dns");
      continue;
    }
    if (wallet.index === special.emoji) {
      taken.add(EMOJI_NAME);
      add(EMOJI_NAME, wallet, "eth");
      continue;
    }
    if (!forcedNamed.has(wallet.index) && !rng.chance(0.55)) continue;
    add(freshEth(), wallet, "eth");
    if (wallet.index === special.multiName) {
      add(freshEth(), wallet, "eth");
      add(freshEth(), wallet, "eth");
      add(freshDns(), wallet, "dns");
    } else if (wallet.index !== special.fixture && rng.chance(0.06)) {
      const extra = rng.int(1, 3);
      for (let i = 0; i < extra; i++) add(freshEth(), wallet, "eth");
    }
    if (rng.chance(0.01)) add(freshDns(), wallet, "dns");
  }

  const named = wallets.filter((wallet) => wallet.names.length > 0 && wallet.index > 20);
  const subdomainOf = (parentWallet: WalletRec, target: WalletRec) => {
    const parent = parentWallet.names[0];
    if (!parent?.endsWith(".eth")) return;
    for (let attempt = 0; attempt < 10; attempt++) {
      const name = `${subdomainLabel(rng)}.${parent}`;
      if (!taken.has(name)) {
        taken.add(name);
        add(name, target, "sub", parent);
        return;
      }
    }
  };
  const subdomainWallet = wallets[special.subdomain];
  if (subdomainWallet) subdomainOf(subdomainWallet, subdomainWallet);
  for (let i = 0; i < 40; i++) {
    const parentWallet = rng.pick(named);
    subdomainOf(parentWallet, rng.chance(0.7) ? parentWallet : rng.pick(wallets));
  }
  return ens;
}
