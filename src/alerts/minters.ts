/**
 * Who minted: the behavior labels of new contracts' minters, from endpoint 1 (behaviors by
 * wallets). That endpoint answers with counts per behavior for the wallets sent, not a label per
 * wallet, so a label is known for a wallet only where its group's answer leaves no doubt: a group
 * of one, or a group whose wallets all share one behavior. A group with no bad actor in it tells
 * each of its wallets "not a bad actor" at once; a group with bad actors among others is split in
 * halves (only one half is asked: the other's counts are the difference) until each bad actor is
 * found. So a burst of 300 mints by people of no bad-actor history is one call, and each bad actor
 * among them costs about log2(300) ≈ 8 more, within a bound per batch. A small group (a poll's
 * few new contracts) is split to the last wallet, so each shows its own label.
 */
import type { ApiClient } from "../api/client.ts";

export const BAD_ACTOR = "BEHAVIOR_BADACTOR";
/** Stored for a minter whose group held no bad actor but several behaviors: which one is unknown. */
export const NOT_BAD_ACTOR = "NOT_BADACTOR";
/** The endpoint's batch limit. */
export const BEHAVIOR_BATCH = 500;
/** Counted for wallets the answer leaves out (the service labels only wallets that engaged with NFTs). */
const UNLABELLED = "BEHAVIOR_UNSPECIFIED";

export interface MinterLookupSettings {
  /** Calls one batch may make, the first ones of each 500 wallets included (default 64). */
  maxCalls?: number;
  /** Wallets per call (default and at most 500). */
  batch?: number;
  /**
   * A lookup of up to this many minters in all, of several behaviors, is split to the last
   * wallet, so each gets its own label (default 4: at most 3 more calls). A poll usually finds one or
   * a few new contracts; a burst keeps "no history of spam mints" for its minters.
   */
  refineUpTo?: number;
  /**
   * Time for the whole lookup, every call and its retries included (default 15 s): the alerts
   * wait no longer. After the first failed call no other is made: the service is not answering.
   */
  timeoutMs?: number;
  /** Monotonic clock in ms (default performance.now). */
  monotonic?: () => number;
}

type Counts = Map<string, number>;

function countsOf(
  answer: { aggregatedBehaviors: { behavior: string; walletsCount: string }[] },
  size: number,
): Counts {
  const counts: Counts = new Map();
  let total = 0;
  for (const { behavior, walletsCount } of answer.aggregatedBehaviors) {
    const n = Number(walletsCount);
    if (n <= 0) continue;
    counts.set(behavior, (counts.get(behavior) ?? 0) + n);
    total += n;
  }
  if (total < size) counts.set(UNLABELLED, (counts.get(UNLABELLED) ?? 0) + size - total);
  return counts;
}

const minus = (a: Counts, b: Counts): Counts => {
  const out: Counts = new Map();
  for (const [behavior, n] of a) {
    const left = n - (b.get(behavior) ?? 0);
    if (left > 0) out.set(behavior, left);
  }
  return out;
};

/**
 * Labels of `wallets` (lower-case addresses, distinct): the behavior where known, NOT_BAD_ACTOR
 * where only that is known. Wallets missing from the map are unknown (the lookup failed, or the
 * call budget ran out before their group was resolved). Never throws: a failed call leaves its
 * wallets unknown, and the alerts go out with "minter: unknown".
 */
export async function lookUpMinters(
  api: ApiClient,
  wallets: readonly string[],
  settings: MinterLookupSettings = {},
  onError?: (error: unknown) => void,
): Promise<Map<string, string>> {
  const labels = new Map<string, string>();
  const batch = Math.min(BEHAVIOR_BATCH, Math.max(1, settings.batch ?? BEHAVIOR_BATCH));
  let calls = settings.maxCalls ?? 64;
  const monotonic = settings.monotonic ?? (() => performance.now());
  const deadline = monotonic() + (settings.timeoutMs ?? 15_000);
  const ask = async (group: readonly string[]): Promise<Counts | undefined> => {
    const left = deadline - monotonic();
    if (calls <= 0 || left <= 0) return undefined;
    calls--;
    try {
      // Through the answer cache (the behaviors' TTL): a group asked again within it costs nothing.
      const answer = await api.audiences.behaviorsByWallets(group, {
        background: true,
        signal: AbortSignal.timeout(Math.ceil(left)),
      });
      return countsOf(answer, group.length);
    } catch (error) {
      calls = 0;
      onError?.(error);
      return undefined;
    }
  };
  // Only a lookup of a few minters in all is split for labels: a burst's halves are not.
  const refine = wallets.length <= (settings.refineUpTo ?? 4);
  const resolve = async (group: readonly string[], counts: Counts): Promise<void> => {
    const behaviors = [...counts.keys()];
    if (behaviors.length === 1) {
      for (const wallet of group) labels.set(wallet, behaviors[0] as string);
      return;
    }
    if (!counts.has(BAD_ACTOR) && !refine) {
      for (const wallet of group) labels.set(wallet, NOT_BAD_ACTOR);
      return;
    }
    if (group.length < 2) return;
    const half = Math.ceil(group.length / 2);
    const left = group.slice(0, half);
    const right = group.slice(half);
    const leftCounts = await ask(left);
    if (!leftCounts) return;
    await resolve(left, leftCounts);
    await resolve(right, minus(counts, leftCounts));
  };
  // Every block of 500 is asked before any is split: splitting spends what is left of the budget.
  const blocks: { group: string[]; counts: Counts | undefined }[] = [];
  for (let start = 0; start < wallets.length; start += batch) {
    const group = wallets.slice(start, start + batch);
    blocks.push({ group, counts: await ask(group) });
  }
  for (const { group, counts } of blocks) if (counts) await resolve(group, counts);
  return labels;
}
