import { createPublicKey, type KeyObject, verify } from "node:crypto";

/**
 * Discord signs every request to an Interactions Endpoint URL with the application's Ed25519 key:
 * `X-Signature-Ed25519` (hex) over `X-Signature-Timestamp` followed by the raw body. Checked with
 * node:crypto before anything of the body is parsed.
 */

/** DER head of an Ed25519 SubjectPublicKeyInfo (RFC 8410); the raw 32-byte key follows it. */
const ED25519_SPKI_PREFIX = Buffer.from("302a300506032b6570032100", "hex");

export const PUBLIC_KEY_PATTERN = /^[0-9a-fA-F]{64}$/;

/** The application's public key, as the developer portal shows it (64 hex characters). */
export function ed25519PublicKey(hex: string): KeyObject {
  if (!PUBLIC_KEY_PATTERN.test(hex)) throw new Error("must be 64 hexadecimal characters");
  return createPublicKey({
    key: Buffer.concat([ED25519_SPKI_PREFIX, Buffer.from(hex, "hex")]),
    format: "der",
    type: "spki",
  });
}

/**
 * How far a request's timestamp may be from our clock, either way. A captured request replayed
 * later is refused past it; within it, Discord's own tokens and our stored buttons are what count.
 */
export const MAX_SIGNATURE_AGE_MS = 5 * 60_000;

/**
 * How long an interaction id is remembered so a captured request cannot run twice: a timestamp
 * may be up to the bound ahead of our clock when first seen and as far behind when replayed.
 */
export const INTERACTION_REPLAY_WINDOW_MS = 2 * MAX_SIGNATURE_AGE_MS;

export type Verdict = { ok: true } | { ok: false; reason: string };

export function verifyInteraction(
  key: KeyObject,
  signature: string | string[] | undefined,
  timestamp: string | string[] | undefined,
  body: Buffer,
  nowMs: number,
): Verdict {
  if (typeof signature !== "string" || typeof timestamp !== "string")
    return { ok: false, reason: "missing signature headers" };
  if (!/^[0-9a-fA-F]{128}$/.test(signature)) return { ok: false, reason: "signature is not hex" };
  if (!/^\d{1,15}$/.test(timestamp)) return { ok: false, reason: "timestamp is not a number" };
  if (Math.abs(nowMs - Number(timestamp) * 1000) > MAX_SIGNATURE_AGE_MS)
    return { ok: false, reason: "timestamp too old or in the future" };
  const signed = Buffer.concat([Buffer.from(timestamp, "utf8"), body]);
  return verify(null, signed, key, Buffer.from(signature, "hex"))
    ? { ok: true }
    : { ok: false, reason: "signature does not match" };
}
