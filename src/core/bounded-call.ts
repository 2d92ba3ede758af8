/**
 * A call out of the process bounded by a time (the bot's usual deadline for a command,
 * COMMAND_DEADLINE_MS) and by the signal of whoever asked (a job round's stop, or its lease
 * ending): every call a gate makes (the data service, the platform's grant, removal, decline) and
 * every private message the outbound module sends. The call gets the signal, and the wait for it
 * ends when the signal aborts even if the callee does not listen (a hung connection): nothing
 * waits for grammY's 500 s.
 */

/** The call was cut: its time ran out, or the round ended (a stop, the lease). */
export class CallCutError extends Error {
  constructor(
    readonly what: string,
    readonly why: "timeout" | "stopped",
    ms: number,
  ) {
    super(
      why === "timeout"
        ? `${what} did not answer within ${Math.round(ms / 100) / 10} s`
        : `${what} was cut short (its job stopped)`,
    );
    this.name = "CallCutError";
  }
}

/**
 * Runs `call` with a signal that aborts after `ms` or with `outer`; rejects with a CallCutError
 * then, whether or not the call itself ends.
 */
export async function boundedCall<T>(
  what: string,
  ms: number,
  outer: AbortSignal | undefined,
  call: (signal: AbortSignal) => Promise<T>,
): Promise<T> {
  const timeout = AbortSignal.timeout(ms);
  const signal = outer ? AbortSignal.any([outer, timeout]) : timeout;
  if (signal.aborted) throw cut(what, ms, outer);
  let onAbort: (() => void) | undefined;
  const aborted = new Promise<never>((_, reject) => {
    onAbort = () => reject(cut(what, ms, outer));
    signal.addEventListener("abort", onAbort, { once: true });
  });
  const running = call(signal);
  // A call that ends late (or fails late) after the cut is nobody's concern.
  running.catch(() => {});
  try {
    return await Promise.race([running, aborted]);
  } finally {
    if (onAbort) signal.removeEventListener("abort", onAbort);
  }
}

function cut(what: string, ms: number, outer: AbortSignal | undefined): CallCutError {
  return new CallCutError(what, outer?.aborted ? "stopped" : "timeout", ms);
}
