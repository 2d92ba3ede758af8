/**
 * The part of proving a wallet that needs viem: making and reading the EIP-4361 (SIWE) message
 * and telling who signed it. Loaded on the first challenge (src/verify/service.ts imports it
 * when needed): viem costs about 200 ms and 28 MB at start, and most runs never see a proof.
 */
import {
  createPublicClient,
  getAddress,
  type Hex,
  http,
  isAddress,
  isHex,
  RpcRequestError,
  type Transport,
} from "viem";
import {
  createSiweMessage,
  parseSiweMessage,
  validateSiweMessage,
  verifySiweMessage,
} from "viem/siwe";
import { recoverMessageAddress } from "viem/utils";
import type { Chain } from "../chains.ts";
import type { Logger } from "../log.ts";
import { redactedRpcError } from "./rpc-error.ts";
import type { VerifyRefusal } from "./types.ts";

/** 65 bytes as hex: an EOA's ECDSA signature (r, s, v). */
const EOA_SIGNATURE_CHARS = 2 + 65 * 2;

/** The address as EIP-55 (checksummed), or undefined when it is no address. */
export function checksummed(address: string): `0x${string}` | undefined {
  return isAddress(address, { strict: false }) ? getAddress(address) : undefined;
}

export function isHexBytes(value: string): value is Hex {
  return isHex(value, { strict: true }) && value.length >= 4 && value.length % 2 === 0;
}

export const siweMessage = createSiweMessage;
export const readSiweMessage = parseSiweMessage;
export type SiweFields = ReturnType<typeof parseSiweMessage>;

/** A SIWE message's fields in the order a refusal names the first that differs. */
const FIELDS = [
  "scheme",
  "domain",
  "uri",
  "chainId",
  "nonce",
  "address",
  "version",
  "statement",
  "issuedAt",
  "expirationTime",
  "notBefore",
  "requestId",
  "resources",
] as const;
export type SiweField = (typeof FIELDS)[number];

/**
 * The first field of `given` that is not as `issued` has it ("removed" when the issued message
 * had it and the given one does not), or undefined when all are the same (then only the text
 * around them differs: spacing, line breaks).
 */
export function changedField(
  issued: SiweFields,
  given: SiweFields,
): { field: SiweField; removed: boolean } | undefined {
  const text = (value: unknown) =>
    value instanceof Date ? String(value.getTime()) : JSON.stringify(value);
  for (const field of FIELDS) {
    const before = issued[field];
    const after = given[field];
    if (text(before) !== text(after))
      return { field, removed: before !== undefined && after === undefined };
  }
  return undefined;
}

/** The message's own checks (nonce's form, version, times, address) with ours (domain, nonce). */
export function siweValid(
  parsed: SiweFields,
  expected: { domain: string; nonce: string; at: number },
): boolean {
  const { domain, nonce, at } = expected;
  return validateSiweMessage({ message: parsed, domain, nonce, time: new Date(at) });
}

export interface SignerCheck {
  chain: Chain;
  address: `0x${string}`;
  message: string;
  signature: Hex;
  domain: string;
  nonce: string;
  at: number;
  logger: Logger;
  /** How the check reaches the chain's node (default: HTTP to its rpcUrl); for tests. */
  transport?: ((chain: Chain, rpcUrl: string) => Transport) | undefined;
}

/**
 * Who signed: the address's own key (an EOA, checked here with no node), else a contract wallet
 * asked over the chain's RPC (ERC-1271, or ERC-6492 when not deployed yet); or why not.
 */
export async function signerKind(check: SignerCheck): Promise<"eoa" | "contract" | VerifyRefusal> {
  const { chain, address, message, signature, logger } = check;
  const ecdsa = signature.length === EOA_SIGNATURE_CHARS;
  if (ecdsa) {
    try {
      const recovered = await recoverMessageAddress({ message, signature });
      if (recovered.toLowerCase() === address.toLowerCase()) return "eoa";
    } catch {
      // Not a valid ECDSA signature: perhaps a contract wallet's, asked below.
    }
  }
  if (chain.rpcUrl === undefined) {
    if (ecdsa)
      return {
        code: "bad_signature",
        message: `This signature was not made by the key of ${address}. (If it is a smart-contract wallet, the bot needs an RPC URL for ${chain.name} to check it.)`,
      };
    return {
      code: "contract_wallet_needs_rpc",
      message: `This wallet type (a smart-contract wallet) can be checked only when the bot has an RPC URL for ${chain.name}: ask the bot's operator to set rpcUrl for ${chain.id} in CHAINS.`,
    };
  }
  const { client, seen } = checkClient(
    check.transport?.(chain, chain.rpcUrl) ??
      http(chain.rpcUrl, { timeout: 10_000, retryCount: 1 }),
  );
  const outage = (): VerifyRefusal => {
    logger.warn(
      { err: redactedRpcError(seen.outage), chain: chain.id },
      "could not check a contract wallet's signature",
    );
    return {
      code: "unavailable",
      message: `The bot could not reach ${chain.name} to check this wallet. Try again in a minute.`,
    };
  };
  try {
    const valid = await verifySiweMessage(client, {
      message,
      signature,
      address,
      domain: check.domain,
      nonce: check.nonce,
      time: new Date(check.at),
    });
    if (valid) return "contract";
  } catch (error) {
    seen.outage ??= error;
    return outage();
  }
  if (seen.outage !== undefined) return outage();
  return { code: "bad_signature", message: `This signature was not made by ${address}.` };
}

/**
 * A client for one check of a contract wallet, and whether its node failed to answer. viem's
 * verifyHash reads any failed eth_call as "not valid": an outage (HTTP error, timeout, refused
 * connection, a provider's quota error) must not tell a person their own signature is wrong, so
 * the transport notes every failure but a revert (the wallet's own "no").
 */
function checkClient(inner: Transport) {
  const seen: { outage: unknown } = { outage: undefined };
  const noting: Transport = (options) => {
    const made = inner(options);
    const request = (async (args: Parameters<typeof made.request>[0]) => {
      try {
        return await made.request(args);
      } catch (error) {
        if (!isRevert(error)) seen.outage = error;
        throw error;
      }
    }) as typeof made.request;
    return { ...made, request };
  };
  return { client: createPublicClient({ transport: noting }), seen };
}

/** A JSON-RPC "execution reverted" (code 3, or a node's -32000 saying so): the contract said no. */
function isRevert(error: unknown): boolean {
  if (!(error instanceof RpcRequestError)) return false;
  return error.code === 3 || /revert/i.test(error.details);
}

/**
 * What kind of account made a kept proof (one kept before the kind was): its key's own signature
 * (an EOA), else a contract wallet's, which was checked on its chain when it was proved.
 */
export async function keptKind(
  address: string,
  message: string,
  signature: string,
): Promise<"eoa" | "contract"> {
  if (signature.length !== EOA_SIGNATURE_CHARS || !isHexBytes(signature)) return "contract";
  try {
    const recovered = await recoverMessageAddress({ message, signature });
    return recovered.toLowerCase() === address.toLowerCase() ? "eoa" : "contract";
  } catch {
    return "contract";
  }
}
