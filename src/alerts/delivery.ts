import type { Platform } from "../core/command.ts";
import type { RenderableReply, Reply } from "../core/reply.ts";
import type { Logger } from "../log.ts";
import type { AlertRepository, DueAlert } from "../store/alerts.ts";
import type { SubscriptionRepository } from "../store/repositories.ts";
import { alertReply, digestReply } from "./message.ts";

/** How a send failed, as the platform adapter tells it. */
export type SendFailure =
  | { kind: "rate_limited"; retryAfterMs: number }
  | { kind: "transient"; reason: string }
  | { kind: "permanent"; reason: string };

/** What an adapter offers the alert delivery: send to a chat, and say what an error means. */
export interface AlertSender {
  sendToChat(chatId: string, reply: RenderableReply): Promise<void>;
  classifySendError(error: unknown): SendFailure;
}

export interface DeliverySettings {
  /** This many alerts or more due for one channel become one digest message. */
  digestThreshold: number;
  /** Alerts taken from the outbox per round. */
  batch: number;
  /** Channels sent to at once (each adapter still shapes its own rate). */
  concurrency: number;
  /** How often the outbox is looked at when nothing pokes it. */
  tickMs: number;
  explorerUrl: string;
}

export interface DeliveryDeps {
  alerts: AlertRepository;
  subscriptions: SubscriptionRepository;
  senders: Partial<Record<Platform, AlertSender>>;
  /** Stores button actions for the chat the reply goes to and returns what renderers take. */
  materialize: (platform: Platform, chatId: string, reply: Reply) => Promise<RenderableReply>;
  logger: Logger;
  settings: DeliverySettings;
  now?: () => number;
}

export interface DeliveryStats {
  delivered: number;
  messages: number;
  retries: number;
  paused: number;
}

const backoffMs = (attempts: number) =>
  Math.min(15 * 60_000, 2_000 * 2 ** Math.min(attempts, 10)) * (0.75 + Math.random() / 2);

/**
 * Drains the outbox: due alerts are grouped per channel, sent (one message each, or one digest
 * for a burst), and marked delivered only after the platform accepted them. A crash between send
 * and mark re-sends that one message after restart; nothing is ever dropped silently.
 */
export class DeliveryWorker {
  readonly stats: DeliveryStats = { delivered: 0, messages: 0, retries: 0, paused: 0 };
  private timer: NodeJS.Timeout | undefined;
  private draining: Promise<void> | undefined;
  private again = false;
  private started = false;
  private stopping = false;
  private readonly now: () => number;

  constructor(private readonly deps: DeliveryDeps) {
    this.now = deps.now ?? Date.now;
  }

  start(): void {
    this.started = true;
    this.schedule(0);
  }

  /** New alerts are waiting: look now rather than at the next tick. */
  poke(): void {
    if (!this.started || this.stopping) return;
    if (this.draining) this.again = true;
    else this.schedule(0);
  }

  /** Stops taking rows and waits for the sends in flight. */
  async stop(): Promise<void> {
    this.stopping = true;
    clearTimeout(this.timer);
    await this.draining;
  }

  private schedule(ms: number): void {
    clearTimeout(this.timer);
    this.timer = setTimeout(() => {
      this.draining = this.drain()
        .then(() => undefined)
        .catch((error: unknown) =>
          this.deps.logger.error({ err: error }, "alert delivery round failed"),
        )
        .finally(() => {
          this.draining = undefined;
          if (this.stopping) return;
          const soon = this.again;
          this.again = false;
          this.schedule(soon ? 0 : this.deps.settings.tickMs);
        });
    }, ms);
  }

  /** One round: everything due now, channels in parallel up to the concurrency. */
  async drain(): Promise<number> {
    const due = this.deps.alerts.due(this.now(), this.deps.settings.batch);
    const byChannel = new Map<number, DueAlert[]>();
    for (const alert of due) {
      if (!this.deps.senders[alert.platform as Platform]) continue;
      const list = byChannel.get(alert.subscriptionId) ?? [];
      list.push(alert);
      byChannel.set(alert.subscriptionId, list);
    }
    const queue = [...byChannel.values()];
    const workers = Array.from(
      { length: Math.min(this.deps.settings.concurrency, queue.length) },
      async () => {
        for (let group = queue.shift(); group; group = queue.shift()) {
          if (this.stopping) return;
          await this.deliverToChannel(group);
        }
      },
    );
    await Promise.all(workers);
    if (due.length === this.deps.settings.batch) this.again = true;
    return due.length;
  }

  private async deliverToChannel(alerts: DueAlert[]): Promise<void> {
    const { settings } = this.deps;
    const first = alerts[0];
    if (!first) return;
    const platform = first.platform as Platform;
    const sender = this.deps.senders[platform];
    if (!sender) return;
    const note = alerts.find((alert) => alert.note)?.note ?? null;
    const messages: { reply: Reply; alerts: DueAlert[] }[] =
      alerts.length >= settings.digestThreshold
        ? [
            {
              reply: digestReply(
                alerts.map((alert) => alert.contract),
                note,
                settings.explorerUrl,
              ),
              alerts,
            },
          ]
        : alerts.map((alert) => ({
            reply: alertReply(
              alert.contract,
              alert.note,
              settings.explorerUrl,
              new Date(this.now()),
            ),
            alerts: [alert],
          }));
    for (const [index, message] of messages.entries()) {
      try {
        const rendered = await this.deps.materialize(platform, first.chatId, message.reply);
        await sender.sendToChat(first.chatId, rendered);
      } catch (error) {
        const rest = messages.slice(index).flatMap((m) => m.alerts);
        this.handleFailure(first, rest, sender.classifySendError(error));
        return;
      }
      this.deps.alerts.delivered(message.alerts, this.now());
      this.stats.delivered += message.alerts.length;
      this.stats.messages++;
    }
  }

  private handleFailure(first: DueAlert, rest: DueAlert[], failure: SendFailure): void {
    const { logger } = this.deps;
    const where = {
      platform: first.platform,
      chat: first.chatId,
      subscription: first.subscriptionId,
    };
    if (failure.kind === "permanent") {
      this.deps.subscriptions.pause(first.subscriptionId, failure.reason, this.now());
      this.stats.paused++;
      logger.warn(
        { ...where, reason: failure.reason },
        "alerts paused: the channel refuses messages",
      );
      return;
    }
    this.stats.retries++;
    if (failure.kind === "rate_limited") {
      this.deps.alerts.retryLater(rest, this.now() + failure.retryAfterMs, "rate limited", false);
      logger.info({ ...where, retryAfterMs: failure.retryAfterMs }, "alert delivery rate limited");
      return;
    }
    const attempts = Math.max(...rest.map((alert) => alert.attempts)) + 1;
    this.deps.alerts.retryLater(rest, this.now() + backoffMs(attempts), failure.reason, true);
    logger.warn(
      { ...where, reason: failure.reason, attempts },
      "alert delivery failed; will retry",
    );
  }
}
