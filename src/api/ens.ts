import { ens_normalize } from "@adraffy/ens-normalize";

/**
 * Labels of lowercase ASCII letters and digits, joined by single hyphens: ENSIP-15 keeps such a
 * name as it is (nothing to map, nothing disallowed, no `--` for the label-extension rule).
 */
const PLAIN_NAME = /^[a-z0-9]+(?:-[a-z0-9]+)*(?:\.[a-z0-9]+(?:-[a-z0-9]+)*)*$/;

/**
 * ENSIP-15 normalization. The names people type are mostly plain (vitalik.eth): those skip the
 * normalizer, whose first call builds its tables (about 200 ms and 20 MB of heap, kept for the
 * life of the process). Anything else goes through it, and its errors are the normalizer's.
 */
export function normalizeEnsName(name: string): string {
  return PLAIN_NAME.test(name) ? name : ens_normalize(name);
}
