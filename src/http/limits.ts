/** How much the world may make the HTTP host hold (the HTTP_* settings, src/config.ts). */
export interface HttpLimits {
  /** Time to receive a request's headers. */
  headersTimeoutMs: number;
  /** Time to receive a whole request, body included (the answer may take longer). */
  requestTimeoutMs: number;
  /** How long an idle keep-alive connection stays open. */
  keepAliveTimeoutMs: number;
  /** Open connections; past it, new ones are closed at once. */
  maxConnections: number;
  /** Bytes of bodies not yet authenticated held at once, across every request. */
  unauthenticatedBodyBytes: number;
}

/**
 * Discord and Telegram send a request in one go and need an answer within seconds, so a request
 * still arriving after 15 s is a slow sender holding memory. 16 MiB of unverified bodies is 64
 * interactions of the largest size read (256 KiB); real ones are a few kilobytes.
 */
export const DEFAULT_HTTP_LIMITS: HttpLimits = {
  headersTimeoutMs: 10_000,
  requestTimeoutMs: 15_000,
  keepAliveTimeoutMs: 5_000,
  maxConnections: 1_000,
  unauthenticatedBodyBytes: 16 * 1024 * 1024,
};
