import { alertsFeature } from "./alerts/feature.ts";
import { digestsFeature } from "./digests/feature.ts";
import { gatesFeature } from "./gates/feature.ts";
import type { Feature } from "./kernel/feature.ts";
import { reportsFeature } from "./reports/feature.ts";
import { verifyFeature } from "./verify/feature.ts";
import { watchesFeature } from "./watches/feature.ts";

/**
 * The bot's features, one line each, in the order they are set up, built and started (stopped in
 * the reverse). Gates come before verify, whose proofs they decide on.
 */
export const FEATURES: readonly Feature[] = [
  alertsFeature,
  reportsFeature,
  digestsFeature,
  watchesFeature,
  gatesFeature,
  verifyFeature,
];
