/**
 * Building blocks of the data set, shared by the seeded synthetic world (data.ts) and the fixed
 * cast of well-known names (cast.ts). Each draws only from the Rng it is given, so the cast never
 * shifts the synthetic world's sequences, and both are made of the same kinds of records.
 */

import type { Rng } from "./random.ts";
import type { ContractRec, Payment, SaleRec, TokenRec, WalletRec } from "./records.ts";
import { SECONDS_PER_DAY } from "./units.ts";

export const YEAR = 365;

export function newContract(
  fields: Pick<
    ContractRec,
    "address" | "name" | "symbol" | "decimals" | "types" | "mintSec" | "mintTx" | "minter"
  >,
): ContractRec {
  return {
    ...fields,
    nftType: undefined,
    spam: false,
    groupsRareBehaviors: false,
    tokens: [],
    tokenById: undefined,
    owners: new Map(),
    ownerSeries: [],
    sales: [],
  };
}

export interface TokenPlan {
  tokenCount: number;
  hugeIds: boolean;
  /** Id of the first token (the rest follow); drawn as 0 or 1 when absent. */
  firstId?: number;
}

export function buildTokens(rng: Rng, contract: ContractRec, plan: TokenPlan, anchorSec: number) {
  const latestMint = Math.max(contract.mintSec, anchorSec - 120);
  const start = plan.firstId ?? (rng.chance(0.5) ? 0 : 1);
  const byId = plan.hugeIds ? new Map<string, TokenRec>() : undefined;
  contract.tokenById = byId;
  for (let i = 0; i < plan.tokenCount; i++) {
    let id: string;
    if (byId) {
      do {
        // 77 or 78 digits, always below 2^256 (which starts 1157...).
        id = i % 3 === 2 ? `${rng.int(1, 9)}${rng.digits(76)}` : `10${rng.digits(76)}`;
      } while (byId.has(id));
    } else {
      id = String(start + i);
    }
    const window = Math.min(90 * SECONDS_PER_DAY, latestMint - contract.mintSec);
    const token: TokenRec = {
      contract,
      id,
      owners: [],
      mintSec: contract.mintSec + rng.int(0, Math.max(0, window)),
      textMetadata: rng.chance(0.01),
      lastSale: undefined,
    };
    contract.tokens.push(token);
    byId?.set(id, token);
  }
}

/** A collection's token by its id (canonical decimal), if it has one. */
export function tokenOf(contract: ContractRec, id: string): TokenRec | undefined {
  if (contract.tokenById) return contract.tokenById.get(id);
  const first = contract.tokens[0];
  if (!first) return undefined;
  // Consecutive ids: by position, and the id read back, so "007" or "1e3" find nothing.
  const token = contract.tokens[Number(id) - Number(first.id)];
  return token?.id === id ? token : undefined;
}

/** Skewed pick: the first wallets of the list hold a lot, most hold a little. */
export function popularWallet(rng: Rng, wallets: readonly WalletRec[]): WalletRec {
  return wallets[Math.floor(wallets.length * rng.next() ** 1.6)] ?? rng.pick(wallets);
}

/**
 * Draws the owners of each token of a collection from `holders`: one per ERC721 token, several
 * (with quantities) per ERC1155 token; skewed toward the first holders, uniform for spam.
 * `forced(position)` names a wallet that must own that token: the ERC721 owner (nothing is drawn
 * then), or one of the ERC1155 owners.
 */
export function assignOwners(
  rng: Rng,
  contract: ContractRec,
  holders: readonly WalletRec[],
  forced: (position: number) => WalletRec | undefined,
) {
  const multi = contract.nftType === "TYPE_ERC1155";
  const draw = () => (contract.spam ? rng.pick(holders) : popularWallet(rng, holders));
  for (const [position, token] of contract.tokens.entries()) {
    const must = forced(position);
    if (!multi) {
      // A literal of one, not a push: a pushed-to array keeps room for 16 more, and most tokens
      // have one owner (a third of the built world's memory was that room).
      token.owners = [{ wallet: must ?? draw(), token, quantity: 1 }];
      continue;
    }
    const ownerCount = contract.spam ? rng.int(50, 150) : rng.int(2, 30);
    const chosen = new Map<number, WalletRec>();
    if (must) chosen.set(must.index, must);
    while (chosen.size < ownerCount) {
      const wallet = draw();
      chosen.set(wallet.index, wallet);
    }
    token.owners = Array.from(chosen.values(), (wallet) => ({
      wallet,
      token,
      quantity: contract.spam ? 1 : rng.chance(0.6) ? 1 : rng.int(2, 20),
    }));
  }
}

/** Copies token ownership into the wallets' holdings and the collections' owner stats. */
export function recordHoldings(contracts: readonly ContractRec[]) {
  for (const contract of contracts) {
    for (const token of contract.tokens) {
      for (const owner of token.owners) {
        const { wallet, quantity } = owner;
        wallet.holdings.push(owner);
        const stat = contract.owners.get(wallet.index);
        if (stat) {
          stat.quantity += quantity;
          stat.distinct += 1;
        } else {
          contract.owners.set(wallet.index, { wallet, quantity, distinct: 1 });
        }
      }
    }
  }
}

/** Each wallet's count of non-spam collections owned, from the collections' owner stats. */
export function countCollectionsOwned(wallets: readonly WalletRec[], nfts: readonly ContractRec[]) {
  for (const wallet of wallets) wallet.collectionsOwned = 0;
  for (const contract of nfts) {
    if (contract.spam) continue;
    for (const { wallet } of contract.owners.values()) wallet.collectionsOwned += 1;
  }
}

/** Daily owner counts for a year back from today, 0 before the collection existed. */
export function buildOwnerSeries(rng: Rng, nfts: readonly ContractRec[], anchorSec: number) {
  const anchorDay = Math.floor(anchorSec / SECONDS_PER_DAY);
  for (const contract of nfts) {
    const mintDay = Math.floor(contract.mintSec / SECONDS_PER_DAY);
    const current = contract.owners.size;
    const growth = contract.spam ? 1 : rng.float(-0.2, 0.8);
    const drift = (current * growth) / YEAR;
    const noise = Math.max(1, current * 0.01);
    const series = [current];
    let value = current;
    for (let k = 1; k <= YEAR; k++) {
      if (anchorDay - k < mintDay) {
        series.push(0);
        continue;
      }
      value = Math.max(0, value - drift + rng.float(-noise, noise));
      series.push(Math.round(value));
    }
    contract.ownerSeries = series;
  }
}

/** An ether amount with all 18 decimals filled: nano-ether from `ether`, the rest random. */
export function weiFromEther(ether: number, rng: Rng): bigint {
  const nano = Math.max(1, Math.round(ether * 1e9));
  return BigInt(nano) * 1_000_000_000n + BigInt(rng.int(0, 999_999_999));
}

export type AddSale = (token: TokenRec, sec: number, totalWei: bigint, payment: Payment) => void;

/** The part of a sale paid in native transfers (a mixed payment draws its share). */
export function nativePart(rng: Rng, totalWei: bigint, payment: Payment): bigint {
  if (payment === "weth" || payment === "usdc") return 0n;
  if (payment === "mixed") return (totalWei * BigInt(rng.int(20, 80))) / 100n;
  return totalWei;
}

/** Appends sales to `sales` (ids are positions in it) and to their collection and token. */
export function saleRecorder(rng: Rng, sales: SaleRec[]): AddSale {
  return (token, sec, totalWei, payment) => {
    const nativeWei = nativePart(rng, totalWei, payment);
    const sale: SaleRec = { id: sales.length, token, sec, totalWei, nativeWei, payment };
    sales.push(sale);
    token.contract.sales.push(sale);
    if (!token.lastSale || token.lastSale.sec < sec) token.lastSale = sale;
  };
}

export interface SalesPlan {
  basePriceEth: number;
  count: number;
  sellable: readonly TokenRec[];
  /** A sale's price is the base price times a log-uniform factor in this range. */
  spread?: readonly [number, number];
}

/** `count` sales over the last year (fewer for young tokens), crowded toward the present. */
export function drawSales(rng: Rng, addSale: AddSale, plan: SalesPlan, anchorSec: number) {
  const yearAgo = anchorSec - YEAR * SECONDS_PER_DAY;
  const latest = anchorSec - 60;
  const [low, high] = plan.spread ?? [0.3, 4];
  for (let i = 0; i < plan.count; i++) {
    const token = rng.pick(plan.sellable);
    const earliest = Math.max(token.mintSec, yearAgo);
    if (earliest >= latest) continue;
    // Squaring the draw crowds sales toward the present, so short windows have data.
    const sec = latest - Math.floor((latest - earliest) * rng.next() ** 2);
    const totalWei = weiFromEther(plan.basePriceEth * rng.logFloat(low, high), rng);
    const draw = rng.next();
    const payment: Payment =
      draw < 0.5 ? "native" : draw < 0.85 ? "weth" : draw < 0.95 ? "mixed" : "usdc";
    addSale(token, sec, totalWei, payment);
  }
}
