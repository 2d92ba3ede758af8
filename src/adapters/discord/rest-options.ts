import type { RESTOptions } from "@discordjs/rest";

/**
 * How long @discordjs/rest keeps what it learns per route. It keeps a queue (handler) for every
 * channel it posted to and the rate-limit bucket of every route, swept after an hour and a day by
 * default: one mint to 5,000 channels left 5,000 idle queues (some 8 MB) for an hour (issue 28,
 * `npm run bench -- process`). An alert is one message a channel, so an idle queue is dropped
 * after a minute, and a bucket learned again from the next answer's headers after ten.
 */
export const DISCORD_REST_SWEEPS: Pick<
  RESTOptions,
  "handlerSweepInterval" | "hashSweepInterval" | "hashLifetime"
> = {
  handlerSweepInterval: 60_000,
  hashSweepInterval: 600_000,
  hashLifetime: 600_000,
};
