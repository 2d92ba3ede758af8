import { keccak_256 } from "@noble/hashes/sha3";
import { LRUCache } from "lru-cache";
import type { ErrorCode } from "../error-codes.ts";
import { cutText } from "../strings.ts";
import { normalizeEnsName } from "./ens.ts";

/**
 * Input checks done before any request leaves the bot. Each `check` returns the canonical form or
 * the message that says what was wrong, for the person to fix (a person's typo is no exception:
 * option parsing tries words against several options); each `parse` throws that message as an
 * InvalidInputError, for callers that stop there.
 */

/** An input refused before any request left. Its message is written for the person who typed it. */
export class InvalidInputError extends Error {
  override name = "InvalidInputError";

  /** What kind of input it was refused as (one of ERROR_CODES). */
  constructor(
    readonly code: ErrorCode,
    message: string,
  ) {
    super(message);
  }
}

/** A refused input: what kind of refusal (for logs, metrics and tests), and what to tell the person. */
export type Refused = { ok: false; code: ErrorCode; message: string };

export type Checked<T> = { ok: true; value: T } | Refused;

export const valid = <T>(value: T): Checked<T> => ({ ok: true, value });
export const invalid = (code: ErrorCode, message: string): Refused => ({
  ok: false,
  code,
  message,
});

/** The value, or the message thrown as an InvalidInputError. */
export function orThrow<T>(checked: Checked<T>): T {
  if (!checked.ok) throw new InvalidInputError(checked.code, checked.message);
  return checked.value;
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
  return `"${cutText(visible, max)}"`;
}

export function isAddressLike(input: string): boolean {
  return /^0x/i.test(input.trim());
}

/**
 * Checksums already computed, by the address as given: replies show the same few addresses over
 * and over (a top list, a cached answer), and keccak is the costliest step of a warm command.
 */
const checksummed = new LRUCache<string, Address>({ max: 10_000 });

/** EIP-55: the case of each hex letter follows the keccak-256 hash of the lowercase address. */
export function toChecksumAddress(address: string): Address {
  let out = checksummed.get(address);
  if (out === undefined) {
    out = computeChecksum(address);
    checksummed.set(address, out);
  }
  return out;
}

function computeChecksum(address: string): Address {
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
export function checkAddress(input: string, what = "address"): Checked<Address> {
  const value = input.trim();
  if (!ADDRESS_PATTERN.test(value)) {
    const hint = /^0x[0-9a-fA-F]*$/.test(value)
      ? ` (it has ${value.length - 2} hex digits; an address has 40)`
      : value.startsWith("0x") || value.startsWith("0X")
        ? " (only 0-9 and a-f may follow 0x)"
        : " (it must start with 0x followed by 40 hex digits)";
    return invalid("invalid_address", `${quoteInput(value)} is not a valid ${what}${hint}.`);
  }
  return valid(toChecksumAddress(value));
}

export const parseAddress = (input: string, what = "address"): Address =>
  orThrow(checkAddress(input, what));

/** Names already normalized: the same few are asked about again and again. */
const normalizedNames = new LRUCache<string, string>({ max: 2_000 });

/** Normalizes an ENS name with the ENSIP-15 normalizer; refuses it with the normalizer's reason. */
export function checkEnsName(input: string): Checked<EnsName> {
  const value = input.trim();
  if (value.length === 0) return invalid("invalid_ens_name", "An ENS name cannot be empty.");
  if (value.length > 255)
    return invalid("invalid_ens_name", "That ENS name is too long (at most 255 characters).");
  let normalized = normalizedNames.get(value);
  try {
    if (normalized === undefined) {
      normalized = normalizeEnsName(value);
      normalizedNames.set(value, normalized);
    }
  } catch (error) {
    // The normalizer has no other way to say why; only a name it refuses gets here.
    const reason =
      error instanceof Error ? error.message.replace(/[\u200e\u200f]/g, "") : "not a valid name";
    return invalid("invalid_ens_name", `${quoteInput(value)} is not a valid ENS name: ${reason}.`);
  }
  if (!normalized.includes(".")) {
    return invalid(
      "invalid_ens_name",
      `${quoteInput(value)} is not a full ENS name: add its top-level part, like name.eth.`,
    );
  }
  return valid(normalized as EnsName);
}

export const parseEnsName = (input: string): EnsName => orThrow(checkEnsName(input));

/** A wallet is given as an address or an ENS name; both are accepted where the service takes them. */
export function checkWallet(input: string): Checked<Address | EnsName> {
  const value = input.trim();
  if (value.length === 0)
    return invalid("missing_argument", "Give a wallet address (0x…) or an ENS name.");
  return isAddressLike(value) ? checkAddress(value, "wallet address") : checkEnsName(value);
}

export const parseWallet = (input: string): Address | EnsName => orThrow(checkWallet(input));

/** Token ids are decimal integers of 1 to 78 digits: no sign, no hex, no decimal point. */
export function checkTokenId(input: string): Checked<TokenId> {
  const value = input.trim();
  if (!/^\d+$/.test(value)) {
    const why = /^[+-]/.test(value)
      ? "it must not have a sign"
      : /^0x/i.test(value)
        ? "it must be decimal, not hex"
        : /[.,eE]/.test(value)
          ? "it must be a whole number"
          : "it must be digits only";
    return invalid("invalid_token_id", `${quoteInput(value)} is not a valid token id: ${why}.`);
  }
  if (value.length > MAX_TOKEN_ID_DIGITS) {
    return invalid(
      "token_id_out_of_range",
      `That token id has ${value.length} digits; token ids have at most ${MAX_TOKEN_ID_DIGITS}.`,
    );
  }
  return valid(value.replace(/^0+(?=\d)/, "") as TokenId);
}

export const parseTokenId = (input: string): TokenId => orThrow(checkTokenId(input));

/** 1 to 500 wallets, each an address or ENS name, duplicates removed (order kept). */
export function checkWalletList(inputs: readonly string[]): Checked<(Address | EnsName)[]> {
  if (inputs.length === 0)
    return invalid("missing_argument", "Give at least one wallet address or ENS name.");
  const wallets = new Set<Address | EnsName>();
  for (const input of inputs) {
    const wallet = checkWallet(input);
    if (!wallet.ok) return wallet;
    wallets.add(wallet.value);
  }
  if (wallets.size > MAX_WALLETS_PER_CALL) {
    return invalid(
      "too_many_items",
      `That is ${wallets.size} wallets; the data service takes at most ${MAX_WALLETS_PER_CALL} at once.`,
    );
  }
  return valid([...wallets]);
}

export const parseWalletList = (inputs: readonly string[]): (Address | EnsName)[] =>
  orThrow(checkWalletList(inputs));

/** A non-negative decimal amount as a string (native token), e.g. "0.5". */
export function checkDecimal(input: string, what: string): Checked<string> {
  const value = input.trim();
  if (!/^\d{1,30}(\.\d{1,18})?$/.test(value))
    return invalid(
      "invalid_number",
      `${quoteInput(value)} is not a valid ${what}: use a number like 1.5.`,
    );
  return valid(value);
}

export const parseDecimal = (input: string, what: string): string =>
  orThrow(checkDecimal(input, what));

/** A non-negative whole number as a string (int64 fields), e.g. "3". */
export function checkCount(input: string, what: string): Checked<string> {
  const value = input.trim();
  if (!/^\d{1,18}$/.test(value))
    return invalid(
      "invalid_number",
      `${quoteInput(value)} is not a valid ${what}: use a whole number like 3.`,
    );
  return valid(value.replace(/^0+(?=\d)/, ""));
}

export const parseCount = (input: string, what: string): string => orThrow(checkCount(input, what));
