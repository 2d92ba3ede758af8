import { createServer, type Server } from "node:http";
import type { AddressInfo } from "node:net";
import {
  type Address,
  decodeAbiParameters,
  decodeFunctionData,
  encodeAbiParameters,
  erc6492SignatureValidatorByteCode,
  type Hex,
  isAddressEqual,
  isErc6492Signature,
  numberToHex,
  parseAbi,
  parseErc6492Signature,
  recoverAddress,
} from "viem";
import { bodyOf } from "./http-body.ts";

/** ERC-1271's isValidSignature(bytes32 hash, bytes signature) returns (bytes4). */
const erc1271Abi = parseAbi([
  "function isValidSignature(bytes32 hash, bytes signature) view returns (bytes4)",
]);

/** ERC-1271's "valid" answer: isValidSignature's selector. */
export const ERC1271_MAGIC = "0x1626ba7e";

/**
 * A chain's JSON-RPC node on loopback, as far as checking signatures goes: one smart-contract
 * wallet (at `wallet`, owned by the key of `owner`) whose isValidSignature (ERC-1271) accepts a
 * signature of the hash by its owner, answered to a direct eth_call and to the deployless ERC-6492
 * validator viem sends (the node would run the validator's constructor, which calls
 * isValidSignature: this fake decodes its arguments and asks the wallet the same). Every
 * isValidSignature asked is recorded; `down()` makes every call fail as a node that is out would.
 */
export class FakeChainNode {
  private server: Server | undefined;
  /** The hashes isValidSignature was asked about, in order. */
  readonly asked: Hex[] = [];
  /** JSON-RPC methods called, in order. */
  readonly methods: string[] = [];
  private failing: "no" | "down" | "limited" = "no";
  url = "";

  constructor(
    readonly chainId: number,
    readonly wallet: Address,
    readonly owner: Address,
  ) {}

  async start(): Promise<this> {
    const server = createServer((req, res) => {
      void bodyOf(req).then((text) => {
        const request = JSON.parse(text) as { id: number; method: string; params: unknown[] };
        this.methods.push(request.method);
        const answer = (payload: object) => {
          res.writeHead(200, { "content-type": "application/json" });
          res.end(JSON.stringify({ jsonrpc: "2.0", id: request.id, ...payload }));
        };
        if (this.failing === "down") {
          res.writeHead(503).end("down");
          return;
        }
        // A provider over its plan's quota answers 200 with a JSON-RPC error (as Infura does).
        if (this.failing === "limited") {
          answer({ error: { code: -32005, message: "daily request count exceeded" } });
          return;
        }
        void this.handle(request.method, request.params).then(
          (result) => answer({ result }),
          (error: Error) =>
            answer({ error: { code: 3, message: `execution reverted: ${error.message}` } }),
        );
      });
    });
    await new Promise<void>((resolve) => server.listen(0, "127.0.0.1", resolve));
    this.server = server;
    this.url = `http://127.0.0.1:${(server.address() as AddressInfo).port}`;
    return this;
  }

  /** From now on every request fails (503), as a node that is down. */
  down(): void {
    this.failing = "down";
  }

  /** From now on every request gets a JSON-RPC error that is no revert: over the quota. */
  overQuota(): void {
    this.failing = "limited";
  }

  async close(): Promise<void> {
    await new Promise<void>((resolve) => this.server?.close(() => resolve()) ?? resolve());
  }

  private async handle(method: string, params: unknown[]): Promise<unknown> {
    if (method === "eth_chainId") return numberToHex(this.chainId);
    if (method === "eth_blockNumber") return "0x10";
    if (method === "eth_getCode")
      return isAddressEqual(params[0] as Address, this.wallet) ? "0x6001600101" : "0x";
    if (method !== "eth_call") throw new Error(`method ${method} not served`);
    const { to, data } = params[0] as { to?: Address; data: Hex };
    if (to !== undefined) {
      if (!isAddressEqual(to, this.wallet)) return "0x";
      const { args } = decodeFunctionData({ abi: erc1271Abi, data });
      const [hash, signature] = args as [Hex, Hex];
      return (await this.isValidSignature(hash, signature))
        ? encodeAbiParameters([{ type: "bytes4" }], [ERC1271_MAGIC])
        : encodeAbiParameters([{ type: "bytes4" }], ["0xffffffff"]);
    }
    // The deployless ERC-6492 validator: its bytecode, then its constructor's arguments.
    if (!data.startsWith(erc6492SignatureValidatorByteCode)) throw new Error("unknown code");
    const [signer, hash, wrapped] = decodeAbiParameters(
      [{ type: "address" }, { type: "bytes32" }, { type: "bytes" }],
      `0x${data.slice(erc6492SignatureValidatorByteCode.length)}`,
    );
    // A wallet not deployed yet: the node would deploy it through the factory first.
    const signature = isErc6492Signature(wrapped)
      ? parseErc6492Signature(wrapped).signature
      : wrapped;
    const valid = isAddressEqual(signer, this.wallet)
      ? await this.isValidSignature(hash, signature)
      : await recoverAddress({ hash, signature })
          .then((recovered) => isAddressEqual(recovered, signer))
          .catch(() => false);
    return encodeAbiParameters([{ type: "bool" }], [valid]);
  }

  /** The wallet's ERC-1271 check: the hash signed by its owner's key. */
  private async isValidSignature(hash: Hex, signature: Hex): Promise<boolean> {
    this.asked.push(hash);
    try {
      return isAddressEqual(await recoverAddress({ hash, signature }), this.owner);
    } catch {
      return false;
    }
  }
}
