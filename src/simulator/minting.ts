/** New contracts appearing over time, so the new-collection poller has something to post. */

import { createHash } from "node:crypto";
import { newContract } from "./generate.ts";
import { contractJson } from "./json.ts";
import { collectionName, symbolOf } from "./names.ts";
import { hashSeed, Rng } from "./random.ts";
import type { ContractRec, WalletRec, World } from "./records.ts";
import { type Contract, FUNGIBLE_CONTRACT_TYPE } from "./types.ts";

/** A contract dated more than this past the clock is a bad datum: later mints do not follow it. */
const FAR_AHEAD_SEC = 86_400;

/** The mint time of the next contract: after every one listed (but those far ahead), at least now. */
function nextMintSec(world: World, nowSec: number): number {
  for (let j = world.contracts.length - 1; j >= 0; j--) {
    const sec = world.contracts[j]?.mintSec ?? 0;
    if (sec <= nowSec + FAR_AHEAD_SEC) return Math.max(nowSec, sec + 1);
  }
  return nowSec;
}

const taken = (world: World, address: string) =>
  world.contractByAddress.has(address) || world.walletByAddress.has(address);

/** Draws one contract's name and transaction (type, address and minter given). */
function drawContract(
  rng: Rng,
  type: string,
  address: string,
  mintSec: number,
  minter: (rng: Rng) => string,
): ContractRec {
  const fungible = type === FUNGIBLE_CONTRACT_TYPE;
  const name = collectionName(rng);
  return {
    ...newContract({
      address,
      name: fungible ? `${name} Token` : name,
      symbol: symbolOf(name),
      decimals: fungible ? 18 : 0,
      types: [type],
      mintSec,
      mintTx: rng.txHash(),
      minter: minter(rng),
    }),
    nftType: fungible ? undefined : type,
  };
}

/** Lists a contract in a world, in mint-time order. */
export function insertContract(world: World, contract: ContractRec): void {
  let at = world.contracts.length;
  while (at > 0 && (world.contracts[at - 1]?.mintSec ?? 0) > contract.mintSec) at--;
  world.contracts.splice(at, 0, contract);
  world.contractByAddress.set(contract.address, contract);
}

const drawType = (rng: Rng) =>
  rng.weighted([
    ["TYPE_ERC721", 55],
    ["TYPE_ERC1155", 35],
    [FUNGIBLE_CONTRACT_TYPE, 10],
  ] as const);

/**
 * Adds `count` contracts with mint timestamps (whole seconds) strictly after every contract
 * already listed (but those dated far ahead), and at or after the clock when it is ahead. With
 * `datedMs`, they are dated then instead, whatever the clock says (an indexer's bad timestamp,
 * e.g. year 9999). The list stays in time order.
 */
export function mintContracts(
  world: World,
  rng: Rng,
  count: number,
  nowMs: number,
  datedMs?: number,
  minter?: string,
): Contract[] {
  const minted: Contract[] = [];
  const nowSec = Math.floor(nowMs / 1000);
  for (let i = 0; i < count; i++) {
    const mintSec = datedMs === undefined ? nextMintSec(world, nowSec) : Math.floor(datedMs / 1000);
    const type = drawType(rng);
    let address = rng.address();
    while (taken(world, address)) address = rng.address();
    const pickMinter = () => minter ?? randomMinter(world.wallets, rng);
    const contract = drawContract(rng, type, address, mintSec, pickMinter);
    insertContract(world, contract);
    minted.push(contractJson(contract));
  }
  return minted;
}

/** The stream of one slot of the timed mints: its first draw is the contract's type. */
export function slotRng(seed: number, chain: string, slotMs: number): Rng {
  return new Rng(hashSeed(seed, `mint:${chain}:${slotMs}`));
}

/** A slot's contract type, without drawing the rest (to filter a list by type). */
export function slotType(seed: number, chain: string, slotMs: number): string {
  return drawType(slotRng(seed, chain, slotMs));
}

/**
 * The contract of one slot of the timed mints, `slotMs` (a multiple of the interval), minted at
 * the slot's start (whole seconds): everything about it comes from the seed, the chain and the
 * slot, so every simulator on the same seed has the same one. The address is a SHA-256 of the
 * three, so slots never share one; the minter is one of `minters` (or `minter`).
 */
export function mintSlot(
  slot: { seed: number; chain: string; slotMs: number },
  minters: readonly WalletRec[],
  minter?: string,
): ContractRec {
  const { seed, chain, slotMs } = slot;
  const rng = slotRng(seed, chain, slotMs);
  const type = drawType(rng);
  const address = `0x${createHash("sha256").update(`${seed}:${chain}:${slotMs}`).digest("hex").slice(0, 40)}`;
  const mintSec = Math.floor(slotMs / 1000);
  return drawContract(rng, type, address, mintSec, () => minter ?? randomMinter(minters, rng));
}

/**
 * A random minter who is not a bad actor: those mint only when asked (mint with a bad-actor
 * minter), so a test's ordinary burst never turns into a hidden one by chance.
 */
function randomMinter(wallets: readonly WalletRec[], rng: Rng): string {
  for (;;) {
    const wallet = rng.pick(wallets);
    if (wallet.behavior !== "BEHAVIOR_BADACTOR") return wallet.address;
  }
}

/** The minter a mint asked for: "badactor" (a wallet labelled BEHAVIOR_BADACTOR) or an address. */
export function chosenMinter(world: World, minter: string | undefined): string | undefined {
  if (minter === undefined) return undefined;
  if (minter === "badactor") {
    const bad = world.wallets.find((wallet) => wallet.behavior === "BEHAVIOR_BADACTOR");
    if (!bad) throw new Error("the data set has no bad actor");
    return bad.address;
  }
  if (!/^0x[0-9a-fA-F]{40}$/.test(minter))
    throw new Error(`a minter is "badactor" or an address, not ${minter}`);
  return minter.toLowerCase();
}
