import { alertsFeature } from "./alerts/feature.ts";
import { digestsFeature } from "./digests/feature.ts";
import { gatesFeature } from "./gates/feature.ts";
import { insightsFeature } from "./insights/feature.ts";
import type { Feature } from "./kernel/feature.ts";
import { reportsFeature } from "./reports/feature.ts";
import { verifyFeature } from "./verify/feature.ts";
import { watchesFeature } from "./watches/feature.ts";

/**
 * The bot's features, one line each, in the order they are set up, built and started (stopped in
 * the reverse). Gates and insights come before verify, whose proofs they are told of.
 */
export const FEATURES: readonly Feature[] = [
  alertsFeature,
  reportsFeature,
  digestsFeature,
  watchesFeature,
  gatesFeature,
  insightsFeature,
  verifyFeature,
];

/** The built-in features by name, for what the bot exposes of them (Bot.delivery, Bot.gates). */
export const BUILT_IN = {
  alerts: alertsFeature,
  digests: digestsFeature,
  watches: watchesFeature,
  gates: gatesFeature,
  insights: insightsFeature,
  verify: verifyFeature,
} as const;

/** What a feature exposes once built (FeatureParts.exposes). */
export type ExposedBy<F> = F extends Feature<infer E> ? E : never;
export type { AlertsExposed } from "./alerts/feature.ts";
export type { NewContractPoller } from "./alerts/poller.ts";
