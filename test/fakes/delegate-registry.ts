import { createServer, type Server } from "node:http";
import type { AddressInfo } from "node:net";
import {
  type Address,
  decodeFunctionData,
  encodeFunctionResult,
  type Hex,
  isAddressEqual,
  numberToHex,
  zeroAddress,
  zeroHash,
} from "viem";
import { bodyOf } from "./http-body.ts";

/**
 * IDelegateRegistry's getIncomingDelegations as the compiler writes it (JSON ABI): written here
 * on its own, from the registry's Solidity interface, so that a mistake in the bot's
 * human-readable ABI (src/verify/delegation.ts) shows as a failed decode, not as agreement.
 */
const REGISTRY_ABI = [
  {
    type: "function",
    name: "getIncomingDelegations",
    stateMutability: "view",
    inputs: [{ name: "to", type: "address" }],
    outputs: [
      {
        name: "delegations",
        type: "tuple[]",
        components: [
          { name: "type_", type: "uint8" },
          { name: "to", type: "address" },
          { name: "from", type: "address" },
          { name: "rights", type: "bytes32" },
          { name: "contract_", type: "address" },
          { name: "tokenId", type: "uint256" },
          { name: "amount", type: "uint256" },
        ],
      },
    ],
  },
] as const;

/** DelegationType as the registry numbers it. */
export const DelegationType = { NONE: 0, ALL: 1, CONTRACT: 2, ERC721: 3, ERC20: 4, ERC1155: 5 };

export interface FakeDelegation {
  type: number;
  from: Address;
  to: Address;
  contract?: Address;
  tokenId?: bigint;
  rights?: Hex;
}

/**
 * A chain's JSON-RPC node on loopback answering eth_call to delegate.xyz's registry (at
 * `registry`): the delegations it holds are set by the test, and revoked by removing them (the
 * registry then lists them no more). `down()` makes every call fail as an unreachable node's.
 */
export class FakeRegistryNode {
  private server: Server | undefined;
  readonly delegations: FakeDelegation[] = [];
  /** The hot wallets asked about, in order. */
  readonly asked: string[] = [];
  private failing = false;
  url = "";

  constructor(
    readonly chainId: number,
    readonly registry: Address,
  ) {}

  async start(): Promise<this> {
    const server = createServer((req, res) => {
      void bodyOf(req).then((text) => {
        if (this.failing) {
          res.writeHead(503).end("down");
          return;
        }
        const request = JSON.parse(text) as { id: number; method: string; params: unknown[] };
        const answer = (payload: object) => {
          res.writeHead(200, { "content-type": "application/json" });
          res.end(JSON.stringify({ jsonrpc: "2.0", id: request.id, ...payload }));
        };
        try {
          answer({ result: this.handle(request.method, request.params) });
        } catch (error) {
          answer({
            error: { code: 3, message: `execution reverted: ${(error as Error).message}` },
          });
        }
      });
    });
    await new Promise<void>((resolve) => server.listen(0, "127.0.0.1", resolve));
    this.server = server;
    this.url = `http://127.0.0.1:${(server.address() as AddressInfo).port}`;
    return this;
  }

  delegate(delegation: FakeDelegation): void {
    this.delegations.push(delegation);
  }

  /** Revokes every delegation from `from` to `to` (the registry then lists none of them). */
  revoke(from: Address, to: Address): void {
    for (let i = this.delegations.length - 1; i >= 0; i--) {
      const d = this.delegations[i];
      if (d && isAddressEqual(d.from, from) && isAddressEqual(d.to, to))
        this.delegations.splice(i, 1);
    }
  }

  down(): void {
    this.failing = true;
  }

  up(): void {
    this.failing = false;
  }

  async close(): Promise<void> {
    await new Promise<void>((resolve) => this.server?.close(() => resolve()) ?? resolve());
  }

  private handle(method: string, params: unknown[]): unknown {
    if (method === "eth_chainId") return numberToHex(this.chainId);
    if (method === "eth_blockNumber") return "0x10";
    if (method !== "eth_call") throw new Error(`method ${method} not served`);
    const { to, data } = params[0] as { to?: Address; data: Hex };
    if (!to || !isAddressEqual(to, this.registry)) return "0x";
    const { args } = decodeFunctionData({ abi: REGISTRY_ABI, data });
    const [hot] = args as [Address];
    this.asked.push(hot.toLowerCase());
    const list = this.delegations
      .filter((d) => isAddressEqual(d.to, hot))
      .map((d) => ({
        type_: d.type,
        to: d.to,
        from: d.from,
        rights: d.rights ?? zeroHash,
        contract_: d.contract ?? zeroAddress,
        tokenId: d.tokenId ?? 0n,
        amount: 0n,
      }));
    return encodeFunctionResult({
      abi: REGISTRY_ABI,
      functionName: "getIncomingDelegations",
      result: list,
    });
  }
}
