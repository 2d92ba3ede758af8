import { StartupError } from "./errors.ts";

/** A network error's code (ECONNREFUSED, ENOTFOUND…) from an error or its causes; else undefined. */
function networkCode(error: unknown): string | undefined {
  let current = error;
  for (let depth = 0; depth < 5 && typeof current === "object" && current !== null; depth++) {
    const {
      code,
      cause,
      error: inner,
    } = current as { code?: unknown; cause?: unknown; error?: unknown };
    if (typeof code === "string" && /^E[A-Z_]+$/.test(code)) return code;
    // grammY keeps the underlying failure in `error`, fetch in `cause`.
    current = cause ?? inner;
  }
  return undefined;
}

/**
 * Starts a platform connection; a failure says which platform, at which URL, and why. A platform
 * that has not connected within `timeoutMs` fails too: some clients retry network errors for ever
 * (grammY's auto-retry), and a bot that never connects must not sit there looking alive.
 */
export async function connect(
  platform: string,
  url: string,
  timeoutMs: number,
  start: () => Promise<void>,
): Promise<void> {
  let timer: NodeJS.Timeout | undefined;
  const starting = start();
  // A start that fails after the deadline has nobody to tell: never an unhandled rejection.
  starting.catch(() => {});
  try {
    await Promise.race([
      starting,
      new Promise<never>((_, reject) => {
        timer = setTimeout(
          () =>
            reject(
              new StartupError(
                `Cannot reach ${platform} at ${url}: not connected after ${timeoutMs / 1000} s (STARTUP_CONNECT_TIMEOUT_S)`,
              ),
            ),
          timeoutMs,
        );
      }),
    ]);
  } catch (error) {
    if (error instanceof StartupError) throw error;
    const code = networkCode(error);
    throw new StartupError(
      code
        ? `Cannot reach ${platform} at ${url}: ${code}`
        : `Cannot log in to ${platform} at ${url}: ${(error as Error).message}`,
      { cause: error },
    );
  } finally {
    clearTimeout(timer);
  }
}

/** Listens with a part's server; a failure says which address and why. */
export async function listen<T>(
  what: string,
  address: string,
  start: () => Promise<T>,
): Promise<T> {
  try {
    return await start();
  } catch (error) {
    const reason = networkCode(error) ?? (error as Error).message;
    throw new StartupError(`Cannot listen on ${address} for ${what}: ${reason}`, {
      cause: error,
    });
  }
}
