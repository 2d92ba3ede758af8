import type { ContractRec, Holding, World } from "./records.ts";

/**
 * What tests and demos change in one simulator's data on demand, for watches: owner jumps, whale
 * moves and NFTs arriving in a wallet. Kept beside the (possibly shared) data set, never in it.
 */
export interface WorldChanges {
  /** Today's owner count of a collection is multiplied by this (bumpOwners). */
  ownersFactor: Map<string, number>;
  /** Whales who joined a collection within the last 30 days (moveWhales). */
  extraWhales: Map<string, number>;
  /** NFTs given to a wallet (giveNft), by wallet address. */
  gifts: Map<string, Holding[]>;
  /** Collections a wallet sold all of (sellNfts), by wallet address: its holdings skip them. */
  sold: Map<string, Set<string>>;
}

export function noChanges(): WorldChanges {
  return { ownersFactor: new Map(), extraWhales: new Map(), gifts: new Map(), sold: new Map() };
}

const changesOf = (world: World): WorldChanges | undefined =>
  (world as World & { changes?: WorldChanges }).changes;

/** The world of one simulator, with room for its changes. */
export function withChanges(world: World): World {
  (world as World & { changes?: WorldChanges }).changes = noChanges();
  return world;
}

function contractOf(world: World, address: string): ContractRec {
  const contract = world.contractByAddress.get(address.toLowerCase());
  if (!contract) throw new Error(`no collection ${address} in the simulator`);
  return contract;
}

/** Today's owner count moves by `percent` (negative: falls). */
export function bumpOwners(world: World, collection: string, percent: number): void {
  const { address } = contractOf(world, collection);
  const changes = changesOf(world) as WorldChanges;
  changes.ownersFactor.set(address, (changes.ownersFactor.get(address) ?? 1) * (1 + percent / 100));
}

/** Today's owner count after bumps (the endpoint's last point). */
export function bumpedOwners(world: World, contract: ContractRec, count: number): number {
  const factor = changesOf(world)?.ownersFactor.get(contract.address);
  return factor === undefined ? count : Math.max(0, Math.round(count * factor));
}

/**
 * New whales join the collection (within the 30-day window), so the whale share's 30-day change
 * grows by about `points` percentage points. Returns how many joined.
 */
export function moveWhales(world: World, collection: string, points: number): number {
  const contract = contractOf(world, collection);
  const changes = changesOf(world) as WorldChanges;
  const total = contract.owners.size + (changes.extraWhales.get(contract.address) ?? 0);
  const share = points / 100;
  const added = Math.max(1, Math.ceil((total * share) / Math.max(0.05, 1 - share)));
  changes.extraWhales.set(
    contract.address,
    (changes.extraWhales.get(contract.address) ?? 0) + added,
  );
  return added;
}

export function extraWhales(world: World, contract: ContractRec): number {
  return changesOf(world)?.extraWhales.get(contract.address) ?? 0;
}

/**
 * The wallet receives one NFT it does not hold: of a spam collection when `spam`, else of an
 * ordinary one; or, with `token`, that one (a hostile name, a 78-digit id). Returns its contract
 * and token id.
 */
export function giveNft(
  world: World,
  wallet: string,
  spam = false,
  token?: { contract: string; tokenId?: string | undefined },
): { contract: string; tokenId: string } {
  const address = wallet.toLowerCase();
  const record = world.walletByAddress.get(address);
  const changes = changesOf(world) as WorldChanges;
  const given = changes.gifts.get(address) ?? [];
  const held = new Set(
    [...(record?.holdings ?? []), ...given].map((h) => `${h.token.contract.address}:${h.token.id}`),
  );
  const wanted = token?.contract.toLowerCase();
  for (const contract of world.contracts) {
    if (wanted !== undefined ? contract.address.toLowerCase() !== wanted : contract.spam !== spam)
      continue;
    if (contract.nftType === undefined) continue;
    const gift = contract.tokens.find(
      (t) =>
        !held.has(`${contract.address}:${t.id}`) &&
        (token?.tokenId === undefined || t.id === token.tokenId),
    );
    if (!gift) continue;
    given.push({ token: gift, quantity: 1 });
    changes.gifts.set(address, given);
    return { contract: contract.address, tokenId: gift.id };
  }
  throw new Error(`no ${spam ? "spam " : ""}NFT left to give`);
}

export function gifts(world: World, wallet: string): Holding[] {
  return changesOf(world)?.gifts.get(wallet.toLowerCase()) ?? [];
}

/**
 * The wallet sells every NFT it holds of a collection (a holder-gate test's "sold"): from now on
 * the holdings endpoints leave them out. Returns how many tokens went.
 */
export function sellNfts(world: World, wallet: string, collection: string): number {
  const address = wallet.toLowerCase();
  const { address: contract } = contractOf(world, collection);
  const changes = changesOf(world) as WorldChanges;
  const went = [...(world.walletByAddress.get(address)?.holdings ?? []), ...gifts(world, address)]
    .filter((h) => h.token.contract.address === contract)
    .reduce((sum, h) => sum + h.quantity, 0);
  const sold = changes.sold.get(address) ?? new Set<string>();
  sold.add(contract);
  changes.sold.set(address, sold);
  return went;
}

/** Whether the wallet still holds `holding` (not sold with sellNfts). */
export function stillHeld(world: World, wallet: string, holding: Holding): boolean {
  return !changesOf(world)?.sold.get(wallet.toLowerCase())?.has(holding.token.contract.address);
}
