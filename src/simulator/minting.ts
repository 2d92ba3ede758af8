/** New contracts appearing over time, so the new-collection poller has something to post. */

import { contractJson } from "./json.ts";
import { collectionName, symbolOf } from "./names.ts";
import type { Rng } from "./random.ts";
import type { ContractRec, World } from "./records.ts";
import { type Contract, FUNGIBLE_CONTRACT_TYPE } from "./types.ts";

/**
 * Appends `count` contracts with mint timestamps (whole seconds) strictly after every contract
 * already listed, and at or after the clock when it is ahead.
 */
export function mintContracts(world: World, rng: Rng, count: number, nowMs: number): Contract[] {
  const minted: Contract[] = [];
  for (let i = 0; i < count; i++) {
    const last = world.contracts[world.contracts.length - 1];
    const mintSec = Math.max(Math.floor(nowMs / 1000), (last?.mintSec ?? 0) + 1);
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
      address,
      name: fungible ? `${name} Token` : name,
      symbol: symbolOf(name),
      decimals: fungible ? 18 : 0,
      types: [type],
      nftType: fungible ? undefined : type,
      mintSec,
      mintTx: rng.txHash(),
      minter: rng.pick(world.wallets).address,
      spam: false,
      groupsRareBehaviors: false,
      tokens: [],
      tokenById: new Map(),
      owners: new Map(),
      ownerSeries: [],
      sales: [],
    };
    world.contracts.push(contract);
    world.contractByAddress.set(address, contract);
    minted.push(contractJson(contract));
  }
  return minted;
}
