import { keccak_256 } from "@noble/hashes/sha3";
import { UserError } from "../errors.ts";
import { sliceChars } from "../strings.ts";
import { normalizeEnsName } from "./ens.ts";

/**
 * Input checks done before any request leaves the bot. Each parser returns the canonical form
 * or throws an InvalidInputError whose message says what was wrong, for the person to fix.
 */

export class InvalidInputError extends UserError {
  override name = "InvalidInputError";
}

/** An address in EIP-55 checksummed form. */
export type Address = string & { readonly __brand: "Address" };
/** An ENS name in ENSIP-15 normalized form. */
export type EnsName = string & { readonly __brand: "EnsName" };
/** A decimal token id of 1 to 78 digits, kept as a string end to end. */
export type TokenId = string & { readonly __brand: "TokenId" };

const ADDRESS_PATTERN = /^0x[0-9a-fA-F]{40}$/;
const MAX_TOKEN_ID_DIGITS = 78;
export const MAX_WALLETS_PER_CALL = 500;

/** Shows user-supplied text inside an error message without letting it grow or hide characters. */
export function quoteInput(input: string, max = 48): string {
  const visible = input.replace(
    /[\u0000-\u001f\u007f-\u009f\u200b-\u200f\u202a-\u202e\u2066-\u2069]/g,
    "?",
  );
  return Array.from(visible).length > max ? `"${sliceChars(visible, max - 1)}…"` : `"${visible}"`;
}

export function isAddressLike(input: string): boolean {
  return /^0x/i.test(input.trim());
}

/** EIP-55: the case of each hex letter follows the keccak-256 hash of the lowercase address. */
export function toChecksumAddress(address: string): Address {
  const lower = address.slice(2).toLowerCase();
  const hash = keccak_256(new TextEncoder().encode(lower));
  let out = "0x";
  for (let i = 0; i < lower.length; i++) {
    const nibble = ((hash[i >> 1] ?? 0) >> (i % 2 === 0 ? 4 : 0)) & 0x0f;
    const char = lower[i] ?? "";
    out += nibble >= 8 ? char.toUpperCase() : char;
  }
  return out as Address;
}

/** Accepts `0x` + 40 hex digits in any case; returns it checksummed. */
export function parseAddress(input: string, what = "address"): Address {
  const value = input.trim();
  if (!ADDRESS_PATTERN.test(value)) {
    const hint = /^0x[0-9a-fA-F]*$/.test(value)
      ? ` (it has ${value.length - 2} hex digits; an address has 40)`
      : value.startsWith("0x") || value.startsWith("0X")
        ? " (only 0-9 and a-f may follow 0x)"
        : " (it must start with 0x followed by 40 hex digits)";
    throw new InvalidInputError(`${quoteInput(value)} is not a valid ${what}${hint}.`);
  }
  return toChecksumAddress(value);
}

/** Normalizes an ENS name with the ENSIP-15 normalizer; refuses it with the normalizer's reason. */
export function parseEnsName(input: string): EnsName {
  const value = input.trim();
  if (value.length === 0) throw new InvalidInputError("An ENS name cannot be empty.");
  if (value.length > 255)
    throw new InvalidInputError("That ENS name is too long (at most 255 characters).");
  let normalized: string;
  try {
    normalized = normalizeEnsName(value);
  } catch (error) {
    const reason =
      error instanceof Error ? error.message.replace(/[\u200e\u200f]/g, "") : "not a valid name";
    throw new InvalidInputError(`${quoteInput(value)} is not a valid ENS name: ${reason}.`);
  }
  if (!normalized.includes(".")) {
    throw new InvalidInputError(
      `${quoteInput(value)} is not a full ENS name: add its top-level part, like name.eth.`,
    );
  }
  return normalized as EnsName;
}

/** A wallet is given as an address or an ENS name; both are accepted where the service takes them. */
export function parseWallet(input: string): Address | EnsName {
  const value = input.trim();
  if (value.length === 0)
    throw new InvalidInputError("Give a wallet address (0x…) or an ENS name.");
  return isAddressLike(value) ? parseAddress(value, "wallet address") : parseEnsName(value);
}

/** Token ids are decimal integers of 1 to 78 digits: no sign, no hex, no decimal point. */
export function parseTokenId(input: string): TokenId {
  const value = input.trim();
  if (!/^\d+$/.test(value)) {
    const why = /^[+-]/.test(value)
      ? "it must not have a sign"
      : /^0x/i.test(value)
        ? "it must be decimal, not hex"
        : /[.,eE]/.test(value)
          ? "it must be a whole number"
          : "it must be digits only";
    throw new InvalidInputError(`${quoteInput(value)} is not a valid token id: ${why}.`);
  }
  if (value.length > MAX_TOKEN_ID_DIGITS) {
    throw new InvalidInputError(
      `That token id has ${value.length} digits; token ids have at most ${MAX_TOKEN_ID_DIGITS}.`,
    );
  }
  const canonical = value.replace(/^0+(?=\d)/, "");
  return canonical as TokenId;
}

/** 1 to 500 wallets, each an address or ENS name, duplicates removed (order kept). */
export function parseWalletList(inputs: readonly string[]): (Address | EnsName)[] {
  if (inputs.length === 0)
    throw new InvalidInputError("Give at least one wallet address or ENS name.");
  const wallets = [...new Set(inputs.map((input) => parseWallet(input)))];
  if (wallets.length > MAX_WALLETS_PER_CALL) {
    throw new InvalidInputError(
      `That is ${wallets.length} wallets; the data service takes at most ${MAX_WALLETS_PER_CALL} at once.`,
    );
  }
  return wallets;
}

/** A non-negative decimal amount as a string (native token), e.g. "0.5". */
export function parseDecimal(input: string, what: string): string {
  const value = input.trim();
  if (!/^\d{1,30}(\.\d{1,18})?$/.test(value)) {
    throw new InvalidInputError(
      `${quoteInput(value)} is not a valid ${what}: use a number like 1.5.`,
    );
  }
  return value;
}

/** A non-negative whole number as a string (int64 fields), e.g. "3". */
export function parseCount(input: string, what: string): string {
  const value = input.trim();
  if (!/^\d{1,18}$/.test(value)) {
    throw new InvalidInputError(
      `${quoteInput(value)} is not a valid ${what}: use a whole number like 3.`,
    );
  }
  return value.replace(/^0+(?=\d)/, "");
}

export function shortAddress(address: string): string {
  return address.length === 42 ? `${address.slice(0, 6)}…${address.slice(-4)}` : address;
}
