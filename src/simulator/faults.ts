/** Fault injection: per-instance probabilities drawn from a seeded stream. */

export interface FaultConfig {
  /** Added before every response (default 0). */
  latencyMs: number;
  /** Probability per status, 0..1. */
  errorRates: Partial<Record<500 | 502 | 503 | 504, number>>;
  /** Probability of a 429. */
  rateLimitRate: number;
  /** Retry-After header value on 429s (integer seconds; default 1). */
  retryAfterSeconds: number;
  /** Probability the request never gets an answer (socket left open until close()). */
  hangRate: number;
  /** 200 with the JSON body cut in half. */
  truncatedJsonRate: number;
  /** 200 with a body that is not JSON or has the wrong shape. */
  malformedJsonRate: number;
}

export interface ScriptedResponse {
  status: number;
  retryAfterSeconds?: number;
  hang?: boolean;
  /**
   * Sent verbatim. Without a body, a status of 400 or more gets the standard error body, and a
   * lower status (e.g. 200) is served by normal handling, so `[503, 503, 200]` reads naturally.
   */
  body?: string;
}

export const NO_FAULTS: FaultConfig = {
  latencyMs: 0,
  errorRates: {},
  rateLimitRate: 0,
  retryAfterSeconds: 1,
  hangRate: 0,
  truncatedJsonRate: 0,
  malformedJsonRate: 0,
};

export function mergeFaults(base: FaultConfig, change: Partial<FaultConfig>): FaultConfig {
  return {
    ...base,
    ...change,
    errorRates: { ...base.errorRates, ...(change.errorRates ?? {}) },
  };
}

export type FaultDecision =
  | { kind: "none" }
  | { kind: "hang" }
  | { kind: "status"; status: number }
  | { kind: "truncate" }
  | { kind: "malform" };

/** One draw against the cumulative probabilities, in a fixed order. */
export function decideFault(config: FaultConfig, draw: number): FaultDecision {
  const ladder: [FaultDecision, number][] = [
    [{ kind: "hang" }, config.hangRate],
    [{ kind: "status", status: 429 }, config.rateLimitRate],
    ...([500, 502, 503, 504] as const).map((status): [FaultDecision, number] => [
      { kind: "status", status },
      config.errorRates[status] ?? 0,
    ]),
    [{ kind: "truncate" }, config.truncatedJsonRate],
    [{ kind: "malform" }, config.malformedJsonRate],
  ];
  let threshold = 0;
  for (const [decision, probability] of ladder) {
    threshold += Math.max(0, probability);
    if (draw < threshold) return decision;
  }
  return { kind: "none" };
}

export function truncateBody(text: string): string {
  return text.slice(0, Math.floor(text.length / 2));
}

const MALFORMED_BODIES = [
  "<html><body><h1>502 Bad Gateway</h1></body></html>",
  '["unexpected","shape"]',
  '{"data": null, "error": false',
] as const;

export function malformedBody(draw: number): string {
  return MALFORMED_BODIES[Math.floor(draw * MALFORMED_BODIES.length)] ?? MALFORMED_BODIES[0];
}
