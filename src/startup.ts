import { Transport } from "./api/transport.ts";
import { type Cause, errorCode, explainFailure, type Target } from "./cause.ts";
import { StartupError } from "./errors.ts";
import type { Logger } from "./log.ts";
import { bounded, TooSlowError } from "./within.ts";

/**
 * A start-up failure whose cause is known and said in its message (DNS, refused, TLS, a refused
 * token): main.ts prints the line alone, without a stack that would only bury it.
 */
export class ConnectError extends StartupError {
  override name = "ConnectError";
  constructor(
    readonly failure: Cause,
    options?: ErrorOptions,
  ) {
    super(failure.line, options);
  }
}

/** The first wait before trying a failed start again; doubled each time, up to the last. */
const FIRST_RETRY_MS = 1_000;
const LONGEST_RETRY_MS = 10_000;

/**
 * Starts a platform connection; a failure says which platform, at which URL, and why in plain
 * words (src/cause.ts). A cause that will not pass by itself (no such host, nothing listening, a
 * certificate, a refused token) fails at once. A passing one (a timeout, a reset, a 5xx) is told
 * through `notice` at once, and the start is tried again until `timeoutMs` is spent; a start
 * that hangs fails then too: a bot that never connects must not sit there looking alive.
 */
export async function connect(
  target: Target,
  timeoutMs: number,
  start: () => Promise<void>,
  notice: (line: string) => void = () => {},
): Promise<void> {
  const deadline = performance.now() + timeoutMs;
  let last: Cause | undefined;
  const gaveUp = (): StartupError => {
    const after = `${timeoutMs / 1000} s (STARTUP_CONNECT_TIMEOUT_S)`;
    // A start that hung without an error (a firewall dropping packets) timed out: a known cause.
    const failure: Cause = last
      ? { ...last, line: `${last.line}; still failing after ${after}` }
      : {
          kind: "timeout",
          line: `Cannot reach ${target.service} at ${target.url}: not connected after ${after}`,
          lasting: false,
          known: true,
        };
    return new ConnectError(failure);
  };
  let delay = FIRST_RETRY_MS;
  for (;;) {
    const left = Math.max(0, deadline - performance.now());
    try {
      await bounded(start(), left, "the start");
      return;
    } catch (error) {
      if (error instanceof TooSlowError) throw gaveUp();
      if (error instanceof StartupError) throw error;
      const cause = explainFailure(error, target);
      if (!cause.known) throw new StartupError(cause.line, { cause: error });
      if (cause.lasting) throw new ConnectError(cause, { cause: error });
      if (last === undefined) notice(`${cause.line}; trying again for up to ${timeoutMs / 1000} s`);
      last = cause;
    }
    const wait = Math.min(delay, deadline - performance.now());
    if (wait <= 0) throw gaveUp();
    await new Promise((resolve) => setTimeout(resolve, wait));
    delay = Math.min(delay * 2, LONGEST_RETRY_MS);
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
    const reason = errorCode(error) ?? (error as Error).message;
    throw new StartupError(`Cannot listen on ${address} for ${what}: ${reason}`, {
      cause: error,
    });
  }
}

/** What the data service's check asks of a chain: where it is and its key. */
export interface DataServiceSettings {
  /** "Ethereum", named when there are several chains. */
  name: string;
  baseUrl: string;
  apiKey: string | undefined;
}

/** Causes the bot cannot serve through: no such host, an untrusted certificate, a refused key. */
const FATAL_FOR_THE_DATA_SERVICE = new Set([
  "dns",
  "tls",
  "unauthorized",
  "forbidden",
  "not_found",
]);

/**
 * Asks each chain's data service for one contract before the bot starts, once, without retries.
 * A host name that does not exist, a certificate that cannot be trusted, an API key refused or an
 * address that is not the service's stops the start with one line: the bot could answer nothing.
 * A service that is down or slow is told in one line through `notice`, and the bot starts anyway:
 * its commands say the service is unavailable until it answers (a service started after the bot
 * is no reason to stop it).
 */
export async function checkDataServices(
  services: readonly DataServiceSettings[],
  timeoutMs: number,
  logger: Logger,
  notice: (line: string) => void,
): Promise<void> {
  const failures = await Promise.all(
    services.map(async ({ name, baseUrl, apiKey }) => {
      const transport = new Transport({
        baseUrl,
        apiKey,
        timeoutMs,
        retries: 0,
        retryMinDelayMs: 0,
        retryMaxDelayMs: 0,
        retryMaxTotalMs: 0,
        maxBodyBytes: 1024 * 1024,
        logger,
      });
      try {
        await transport.request({
          method: "GET",
          path: "/foundational/v1beta2/contracts",
          query: { limit: "1" },
          retry: false,
        });
        return undefined;
      } catch (error) {
        const service = services.length > 1 ? `the ${name} data service` : "the data service";
        return {
          error,
          cause: explainFailure(error, {
            service,
            url: baseUrl,
            credential: "API_KEY",
            credentialName: "API key",
          }),
        };
      } finally {
        await transport.close();
      }
    }),
  );
  for (const failure of failures) {
    if (!failure) continue;
    const { error, cause } = failure;
    if (FATAL_FOR_THE_DATA_SERVICE.has(cause.kind)) throw new ConnectError(cause, { cause: error });
    logger.debug({ err: error }, cause.line);
    notice(`${cause.line}; starting anyway, commands will fail until it answers`);
  }
}
