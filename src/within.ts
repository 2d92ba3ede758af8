export type Outcome<T> = { done: true; value: T } | { done: false; pending: Promise<T> };

/** Resolves with the value if it comes within `ms`, else with the still-pending promise. */
export async function within<T>(promise: Promise<T>, ms: number): Promise<Outcome<T>> {
  let timer: NodeJS.Timeout | undefined;
  const late = new Promise<"late">((resolve) => {
    timer = setTimeout(() => resolve("late"), ms);
  });
  try {
    const first = await Promise.race([promise.then((value) => ({ value })), late]);
    return first === "late"
      ? { done: false, pending: promise }
      : { done: true, value: first.value };
  } finally {
    clearTimeout(timer);
  }
}

/** The store did not answer in time; the caller goes on as it would if the store had failed. */
export class TooSlowError extends Error {
  constructor(what: string, ms: number) {
    super(`${what} did not answer within ${ms} ms`);
    this.name = "TooSlowError";
  }
}

/**
 * The value if it comes within `ms`, else the error `late` makes (by default a TooSlowError naming
 * `what`); the call goes on unwatched. For every await on a network or a disk that must not hold
 * what waits on it: a lease renewal, an update's "seen before?" before Discord's 3 s.
 */
export async function bounded<T>(
  promise: Promise<T>,
  ms: number,
  late: string | (() => Error),
): Promise<T> {
  const outcome = await within(promise, ms);
  if (outcome.done) return outcome.value;
  outcome.pending.catch(() => {});
  throw typeof late === "string" ? new TooSlowError(late, ms) : late();
}

/** Whether `promise` settled (either way) by `deadline` (monotonic ms). */
export async function settledBy(promise: Promise<unknown>, deadline: number): Promise<boolean> {
  const settled = promise.then(
    () => true,
    () => true,
  );
  return (await within(settled, Math.max(0, deadline - performance.now()))).done;
}

/** How long an update's or interaction's "seen before?" may take before it is answered anyway. */
export const SEEN_CHECK_MS = 1_000;

/**
 * A signal that aborts after `ms`. Here, not where it is used, for the Telegram adapter: a
 * reference to the global AbortSignal in a bundle that also holds grammY's abort-controller makes
 * esbuild rename that package's class (AbortSignal2), and node-fetch then refuses every signal
 * grammY passes it, so every Telegram request fails (seen: "Network request for 'getMe' failed!"
 * where the DNS error should have been).
 */
export function timeoutSignal(ms: number): AbortSignal {
  return AbortSignal.timeout(ms);
}
