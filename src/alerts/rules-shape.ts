/**
 * A subscription's alert rules as stored (subscriptions' `rules` column): what the store keeps and
 * alerts/rules.ts reads and writes. A leaf, so the store's contract needs nothing else of alerts.
 */
export interface AlertRules {
  /** Minter behavior labels (BEHAVIOR_*, NOT_BADACTOR, or UNKNOWN for no label). */
  minters?: { include?: string[]; exclude?: string[] };
  /** Name keywords, lower case, matched as whole words. */
  keywords?: { include?: string[]; exclude?: string[] };
  /** Local times HH:MM in an IANA zone; alerts due in [from, to) are held until `to`. */
  quiet?: { from: string; to: string; zone: string };
  /** A digest every N minutes instead of each mint. */
  digestMinutes?: number;
}
