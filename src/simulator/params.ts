/**
 * Input checks shared by the endpoint handlers. Each returns the parsed value or throws an
 * HttpError (400 for malformed input, 404 for well-formed references the data set lacks).
 */

import { badRequest, notFound } from "./errors.ts";
import { tokenOf } from "./generate.ts";
import type { ContractRec, TokenRec, WalletRec, World } from "./records.ts";
import { parseUnits } from "./units.ts";

const ADDRESS = /^0x[0-9a-fA-F]{40}$/;
const TOKEN_ID = /^\d{1,78}$/;
const INT64 = /^\d{1,18}$/;

export const DEFAULT_LIMIT = 20;
export const MAX_LIMIT = 500;
export const MAX_WALLETS = 500;

export function isAddress(value: string): boolean {
  return ADDRESS.test(value);
}

export function parseAddress(value: string, what: string): string {
  if (!isAddress(value)) throw badRequest(`${what} must be 0x followed by 40 hex digits`);
  return value.toLowerCase();
}

/**
 * ENS names are compared lower-cased (a stand-in for ENSIP-15 normalization). Anything with an
 * empty label, whitespace, or URL syntax is refused as malformed.
 */
export function parseEnsName(value: string): string {
  const name = value.toLowerCase();
  const labels = name.split(".");
  const malformed =
    name.length > 255 ||
    labels.length < 2 ||
    labels.some((label) => label === "") ||
    /[\s/?#%\\@:]/u.test(name) ||
    /[\u0000-\u001f\u007f]/.test(name);
  if (malformed) throw badRequest(`"${value}" is neither an address nor an ENS name`);
  return name;
}

export interface ResolvedWallet {
  address: string;
  /** undefined for a valid address the data set knows nothing about. */
  wallet: WalletRec | undefined;
}

/**
 * An address or ENS name. An unknown name is a 404 in a path parameter and a 400 in a body
 * list (the request as a whole is invalid then).
 */
export function resolveWallet(world: World, value: string, where: "path" | "body"): ResolvedWallet {
  if (value.startsWith("0x") && !value.includes(".")) {
    const address = parseAddress(value, "wallet address");
    return { address, wallet: world.walletByAddress.get(address) };
  }
  const name = parseEnsName(value);
  const record = world.ens.get(name);
  if (!record) {
    const message = `ENS name ${name} is not registered`;
    throw where === "path" ? notFound(message) : badRequest(message);
  }
  return { address: record.wallet.address, wallet: record.wallet };
}

export function requireContract(world: World, value: string): ContractRec {
  const address = parseAddress(value, "contract address");
  const contract = world.contractByAddress.get(address);
  if (!contract) throw notFound(`contract ${address} not found`);
  return contract;
}

export function parseTokenId(value: string): string {
  if (!TOKEN_ID.test(value)) throw badRequest("token id must be 1 to 78 decimal digits");
  return BigInt(value).toString();
}

export function requireToken(contract: ContractRec, value: string): TokenRec {
  const id = parseTokenId(value);
  const token = tokenOf(contract, id);
  if (!token) throw notFound(`token ${id} of contract ${contract.address} not found`);
  return token;
}

export function parseEnum<T extends string>(
  value: string | null | undefined,
  allowed: readonly T[],
  name: string,
): T | undefined {
  if (value === null || value === undefined || value === "") return undefined;
  if (!(allowed as readonly string[]).includes(value)) {
    throw badRequest(`${name} must be one of ${allowed.join(", ")}`);
  }
  return value as T;
}

/** A query list given comma-separated, repeated, or both. */
export function listParam(query: URLSearchParams, name: string): string[] {
  return query
    .getAll(name)
    .flatMap((value) => value.split(","))
    .map((value) => value.trim())
    .filter((value) => value !== "");
}

export interface Paging {
  limit: number;
  offset: number;
}

/** limit 0 or absent means the default; above MAX_LIMIT is refused. */
export function parsePaging(limit: unknown, offset: unknown): Paging {
  const parsedLimit = nonNegativeInt(limit, "limit") ?? 0;
  if (parsedLimit > MAX_LIMIT) throw badRequest(`limit must be at most ${MAX_LIMIT}`);
  return {
    limit: parsedLimit === 0 ? DEFAULT_LIMIT : parsedLimit,
    offset: nonNegativeInt(offset, "offset") ?? 0,
  };
}

export function queryPaging(query: URLSearchParams): Paging {
  return parsePaging(query.get("limit"), query.get("offset"));
}

export function page<T>(items: readonly T[], paging: Paging): T[] {
  return items.slice(paging.offset, paging.offset + paging.limit);
}

/** An int64 given as a JSON string (the spec's form) or a JSON integer; absent -> undefined. */
export function nonNegativeInt(value: unknown, name: string): number | undefined {
  if (value === undefined || value === null || value === "") return undefined;
  if (typeof value === "number" && Number.isSafeInteger(value) && value >= 0) return value;
  if (typeof value === "string" && INT64.test(value)) return Number(value);
  throw badRequest(`${name} must be a non-negative integer`);
}

/** A decimal amount of native token as a JSON string (or number), returned in wei. */
export function decimalWei(value: unknown, name: string): bigint | undefined {
  if (value === undefined || value === null || value === "") return undefined;
  const text = typeof value === "number" && Number.isFinite(value) ? String(value) : value;
  const wei = typeof text === "string" ? parseUnits(text, 18) : undefined;
  if (wei === undefined) throw badRequest(`${name} must be a non-negative decimal string`);
  return wei;
}

export function requireObject(body: unknown): Record<string, unknown> {
  if (typeof body !== "object" || body === null || Array.isArray(body)) {
    throw badRequest("request body must be a JSON object");
  }
  return body as Record<string, unknown>;
}

/** walletAddresses of endpoints 1 and 5: 1 to 500 addresses or names, deduplicated. */
export function walletList(world: World, value: unknown): ResolvedWallet[] {
  if (!Array.isArray(value)) throw badRequest("walletAddresses must be an array of strings");
  if (value.length === 0) throw badRequest("walletAddresses must not be empty");
  if (value.length > MAX_WALLETS) {
    throw badRequest(`walletAddresses holds at most ${MAX_WALLETS} entries`);
  }
  const byAddress = new Map<string, ResolvedWallet>();
  for (const item of value) {
    if (typeof item !== "string") throw badRequest("walletAddresses must be an array of strings");
    const resolved = resolveWallet(world, item, "body");
    byAddress.set(resolved.address, resolved);
  }
  return [...byAddress.values()];
}
