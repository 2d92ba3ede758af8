/**
 * Delegations read from delegate.xyz's registry, v2 (issue 37): a collector keeps NFTs in a cold
 * wallet or vault and, instead of signing with it, delegates to a hot wallet they prove. Loaded
 * with viem when first needed, as ./proof.ts is.
 *
 * The registry is at the same address on most EVM chains, and at another on the ZKsync family
 * (its README, github.com/delegatexyz/delegate-registry, "ZKSync Chain" table). One eth_call per
 * hot wallet and chain: `getIncomingDelegations(to)`, whose answer lists every delegation to it.
 * Only delegations of all rights (`rights` zero, the registry's "full" delegation) count: of the
 * whole wallet (type ALL) or of one contract (type CONTRACT). Delegations of one token or of an
 * amount, and sub-delegations of named rights, are not counted (as Guild counts them).
 */
import {
  createPublicClient,
  http,
  isAddressEqual,
  parseAbi,
  type Transport,
  zeroAddress,
  zeroHash,
} from "viem";
import type { Chain } from "../chains.ts";

/** The registry on most EVM chains. */
export const DELEGATE_REGISTRY = "0x00000000000000447e69651d841bd8d104bed493";

/** The registry on ZKsync-family chains, by chain id: ZKsync Era, Abstract (Sepolia), Treasure. */
const ZKSYNC_REGISTRY = "0x0000000059A24EB229eED07Ac44229DB56C5d797";
const ZKSYNC_CHAIN_IDS = new Set([324, 11124, 61166]);

/** The registry's address on a chain (by its EIP-155 id). */
export function registryOn(chainId: number): `0x${string}` {
  return ZKSYNC_CHAIN_IDS.has(chainId) ? ZKSYNC_REGISTRY : DELEGATE_REGISTRY;
}

/** IDelegateRegistry's read, in viem's human-readable ABI (the enum is a uint8). */
export const registryAbi = parseAbi([
  "struct Delegation { uint8 type_; address to; address from; bytes32 rights; address contract_; uint256 tokenId; uint256 amount; }",
  "function getIncomingDelegations(address to) view returns (Delegation[] delegations)",
]);

/** DelegationType: NONE, ALL, CONTRACT, ERC721, ERC20, ERC1155. */
const ALL = 1;
const CONTRACT = 2;

/** A delegation as counted: from `cold`, for all (`contract` "") or for one contract. */
export interface ReadDelegation {
  cold: string;
  contract: string;
}

export interface RegistryRead {
  chain: Chain & { chainId: number; rpcUrl: string };
  hot: `0x${string}`;
  /** How the read reaches the node (default: HTTP to its rpcUrl); for tests. */
  transport?: ((chain: Chain, rpcUrl: string) => Transport) | undefined;
  signal?: AbortSignal | undefined;
}

/**
 * The full delegations to `hot` on the chain; throws when the node does not answer (then the
 * caller knows nothing, which is "unknown", never "none").
 */
export async function incomingDelegations(read: RegistryRead): Promise<ReadDelegation[]> {
  const { chain, hot } = read;
  const transport =
    read.transport?.(chain, chain.rpcUrl) ??
    http(chain.rpcUrl, {
      timeout: 10_000,
      retryCount: 1,
      // A stop or a lost lease ends the request itself, not only what follows it.
      ...(read.signal ? { fetchOptions: { signal: read.signal } } : {}),
    });
  const client = createPublicClient({ transport });
  read.signal?.throwIfAborted();
  const found = await client.readContract({
    address: registryOn(chain.chainId),
    abi: registryAbi,
    functionName: "getIncomingDelegations",
    args: [hot],
  });
  read.signal?.throwIfAborted();
  const out = new Map<string, ReadDelegation>();
  for (const delegation of found) {
    if (delegation.rights !== zeroHash) continue;
    if (!isAddressEqual(delegation.to, hot) || isAddressEqual(delegation.from, hot)) continue;
    if (delegation.type_ === ALL) {
      const cold = delegation.from.toLowerCase();
      out.set(`${cold} `, { cold, contract: "" });
    } else if (delegation.type_ === CONTRACT && delegation.contract_ !== zeroAddress) {
      const cold = delegation.from.toLowerCase();
      const contract = delegation.contract_.toLowerCase();
      out.set(`${cold} ${contract}`, { cold, contract });
    }
  }
  return [...out.values()];
}
