import { describeSchedule } from "../../src/core/schedule.ts";
import type { Digest } from "../../src/digests/types.ts";
import { DURATION_CHOICES, durationName, METRICS } from "./choices.ts";

/** Digests a channel may have when the bot's settings say nothing (DIGESTS_PER_CHAT). */
export const DEFAULT_DIGESTS_PER_CHAT = 5;

/** The time zone of a digest added without one (there is no per-chat time zone yet). */
export const DEFAULT_DIGEST_ZONE = "UTC";

/** "top collections by sales volume over 1 day". */
export function digestWhat(digest: Pick<Digest, "metric" | "period">): string {
  const metric =
    METRICS.find((m) => m.value === digest.metric)?.name.toLowerCase() ?? digest.metric;
  const period = DURATION_CHOICES.find((d) => d.value === digest.period)
    ? durationName(digest.period as (typeof DURATION_CHOICES)[number]["value"])
    : digest.period;
  return `top collections by ${metric} over ${period}`;
}

/** "daily at 09:00 Europe/Berlin: top collections by sales volume over 1 day". */
export const describeDigest = (digest: Digest) =>
  `${describeSchedule(digest)}: ${digestWhat(digest)}`;
