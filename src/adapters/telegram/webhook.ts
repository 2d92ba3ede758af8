import { timingSafeEqual } from "node:crypto";
import type { Update } from "grammy/types";
import type { HttpRoute } from "../../http/host.ts";
import type { Logger } from "../../log.ts";

/** Updates are a few kilobytes; anything far larger is not from Telegram. */
const MAX_WEBHOOK_BODY_BYTES = 1024 * 1024;

function sameSecret(given: string, expected: string): boolean {
  const a = Buffer.from(given);
  const b = Buffer.from(expected);
  return a.length === b.length && timingSafeEqual(a, b);
}

export interface WebhookOptions {
  /** The path the bot's HTTP host serves it at. */
  path: string;
  secret: string;
  logger: Logger;
  /** True once the adapter stops: updates are refused, to be delivered again. */
  stopping: () => boolean;
  /** Takes an acknowledged update (handled after the answer). */
  take: (update: Update) => void;
}

/**
 * The webhook: the secret first, then the update is acknowledged at once and handled after.
 * grammY's webhookCallback answers only when the handlers finish and gives up after 10 s;
 * Telegram re-delivers what it did not see answered, so a slow command ran twice.
 */
export function telegramWebhookRoute(options: WebhookOptions): HttpRoute {
  return {
    path: options.path,
    async handle(req, res, requestBody) {
      const given = req.headers["x-telegram-bot-api-secret-token"];
      if (typeof given !== "string" || !sameSecret(given, options.secret)) {
        req.resume();
        res.writeHead(401).end();
        return;
      }
      if (req.method !== "POST") {
        req.resume();
        res.writeHead(405).end();
        return;
      }
      if (options.stopping()) {
        // Not taken: Telegram delivers it again, to this process after a restart or to another.
        req.resume();
        res.writeHead(503).end();
        return;
      }
      // Past the secret: the sender is Telegram, its body is not held against the shared budget.
      const body = await requestBody.read(MAX_WEBHOOK_BODY_BYTES, "authenticated");
      if (body === undefined) return;
      let update: Update;
      try {
        update = JSON.parse(body.toString("utf8")) as Update;
        if (typeof update?.update_id !== "number") throw new Error("no update_id");
      } catch (error) {
        options.logger.warn({ err: error }, "webhook request without a readable update");
        res.writeHead(400).end();
        return;
      }
      res.writeHead(200).end();
      options.take(update);
    },
  };
}
