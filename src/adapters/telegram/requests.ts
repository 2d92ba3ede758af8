import { autoRetry } from "@grammyjs/auto-retry";
import { type APIThrottlerOptions, apiThrottler } from "@grammyjs/transformer-throttler";
import { type Bot, HttpError } from "grammy";
import pRetry from "p-retry";
import type { SharedPace } from "../pace.ts";

/**
 * Outgoing pacing. The throttler's default refills 30 sends at each second's start, which lets
 * about 60 through in a rolling second and earns 429s; a steady 35 ms spacing stays under 30/s.
 * Per-chat (1/s) and per-group (20/min) shaping are the plugin's defaults, with one limiter per
 * chat kept only as long as its limit spans (Bottleneck's groups keep an idle one 5 minutes: one
 * mint to 5,000 chats held some 6 MB of idle limiters, issue 28): a private chat's after 10 s,
 * a group's after 90 s, longer than its minute's allowance.
 */
const TELEGRAM_THROTTLE: APIThrottlerOptions = {
  global: { maxConcurrent: 30, minTime: 35 },
  // `timeout` is Bottleneck.Group's own option (its typings leave it out of the limiter's).
  group: {
    maxConcurrent: 1,
    minTime: 1000,
    reservoir: 20,
    reservoirRefreshAmount: 20,
    reservoirRefreshInterval: 60_000,
    timeout: 90_000,
  } as NonNullable<APIThrottlerOptions["group"]>,
  out: { maxConcurrent: 1, minTime: 1000, timeout: 10_000 } as NonNullable<
    APIThrottlerOptions["out"]
  >,
};

/** Quick extra tries for a request that failed on the network (500 ms, then 1 s). */
const NETWORK_RETRIES = 2;

/** How the bot's requests go out: paced, retried on 429/5xx, and a few quick tries on the network. */
export function shapeRequests(
  bot: Bot,
  options: {
    throttle?: APIThrottlerOptions | false;
    retry?: { maxDelaySeconds: number; maxRetryAttempts: number };
    sharedPace?: SharedPace | undefined;
  },
): void {
  const { sharedPace } = options;
  // With several instances, their messages together stay under the bot's 30 a second, each
  // chat's one a second (an answer from one instance and an alert from another to one person)
  // and each group's 20 a minute (group ids are negative); each instance's throttler still
  // spaces its own. The chat's turn first: waiting for it holds no share of the global limit.
  if (sharedPace)
    bot.api.config.use(async (prev, method, payload, signal) => {
      if (method.startsWith("send") || method === "copyMessage" || method === "forwardMessage") {
        const chat = "chat_id" in payload ? String(payload.chat_id) : "";
        if (chat) await sharedPace.acquire("telegram:chat", chat);
        await sharedPace.acquire("telegram:global");
        if (chat.startsWith("-")) await sharedPace.acquire("telegram:group", chat);
      }
      return prev(method, payload, signal);
    });
  if (options.throttle !== false)
    bot.api.config.use(apiThrottler(options.throttle ?? TELEGRAM_THROTTLE));
  // auto-retry would retry network errors (HttpError) for ever, whatever maxRetryAttempts says,
  // with waits growing to an hour: a reply or an alert would hang instead of failing. They get
  // a few quick tries here, then go to the caller (delivery retries alerts with its own backoff).
  bot.api.config.use(
    autoRetry({
      maxDelaySeconds: options.retry?.maxDelaySeconds ?? 60,
      maxRetryAttempts: options.retry?.maxRetryAttempts ?? 3,
      rethrowHttpErrors: true,
    }),
  );
  bot.api.config.use((prev, method, payload, signal) =>
    pRetry(() => prev(method, payload, signal), {
      retries: NETWORK_RETRIES,
      minTimeout: 500,
      factor: 2,
      shouldRetry: ({ error }) => error instanceof HttpError && !signal?.aborted,
    }),
  );
}
