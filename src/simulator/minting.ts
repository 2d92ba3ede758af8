/** New contracts appearing over time, so the new-collection poller has something to post. */

import { newContract } from "./generate.ts";
import { contractJson } from "./json.ts";
import { collectionName, symbolOf } from "./names.ts";
import type { Rng } from "./random.ts";
import type { ContractRec, World } from "./records.ts";
import { type Contract, FUNGIBLE_CONTRACT_TYPE } from "./types.ts";

/** A contract dated more than this past the clock is a bad datum: later mints do not follow it. */
const FAR_AHEAD_SEC = 86_400;

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
    let lastSec = 0;
    for (let j = world.contracts.length - 1; j >= 0; j--) {
      const sec = world.contracts[j]?.mintSec ?? 0;
      if (sec <= nowSec + FAR_AHEAD_SEC) {
        lastSec = sec;
        break;
      }
    }
    const mintSec =
      datedMs === undefined ? Math.max(nowSec, lastSec + 1) : Math.floor(datedMs / 1000);
    const type = rng.weighted([
      ["TYPE_ERC721", 55],
      ["TYPE_ERC1155", 35],
      [FUNGIBLE_CONTRACT_TYPE, 10],
    ] as const);
    const fungible = type === FUNGIBLE_CONTRACT_TYPE;
    let address = rng.address();
    while (world.contractByAddress.has(address) || world.walletByAddress.has(address)) {
      address = rng.address();
    }
    const name = collectionName(rng);
    const contract: ContractRec = {
      ...newContract({
        address,
        name: fungible ? `${name} Token` : name,
        symbol: symbolOf(name),
        decimals: fungible ? 18 : 0,
        types: [type],
        mintSec,
        mintTx: rng.txHash(),
        minter: minter ?? randomMinter(world, rng),
      }),
      nftType: fungible ? undefined : type,
    };
    let at = world.contracts.length;
    while (at > 0 && (world.contracts[at - 1]?.mintSec ?? 0) > mintSec) at--;
    world.contracts.splice(at, 0, contract);
    world.contractByAddress.set(address, contract);
    minted.push(contractJson(contract));
  }
  return minted;
}

/**
 * A random minter who is not a bad actor: those mint only when asked (mint with a bad-actor
 * minter), so a test's ordinary burst never turns into a hidden one by chance.
 */
function randomMinter(world: World, rng: Rng): string {
  for (;;) {
    const wallet = rng.pick(world.wallets);
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
