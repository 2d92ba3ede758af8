import type { Chain } from "../chains.ts";
import type { Platform } from "../core/command.ts";
import type { Liveness } from "../jobs/liveness.ts";
import { type LoopHandle, startLoop } from "../jobs/loop.ts";
import type { Logger } from "../log.ts";
import type { Outbound, Sent } from "../outbound/outbound.ts";
import { type SendPolicy, spentBy } from "../outbound/policy.ts";
import type { ReportStore } from "../store/types.ts";
import {
  alertChain,
  bySubscription,
  idempotencyKey,
  interleave,
  type Message,
  messagesFor,
} from "./delivery-messages.ts";
import { suppressedReply } from "./message.ts";
import type { DueAlert, OutboxStore } from "./store/types.ts";

/**
 * An alert's waits after failed tries: 4 s, doubling, spread ±25% (the waits alerts always had:
 * counted from the tries before, at twice the base of 2 s).
 */
export const ALERT_BACKOFF = { baseMs: 4_000 } as const;

export interface DeliverySettings {
  /** This many alerts or more due for one channel become one digest message. */
  digestThreshold: number;
  /** Alerts taken from the outbox per platform per round. */
  batch: number;
  /** How often the outbox is looked at when nothing pokes it. */
  tickMs: number;
  /**
   * How long alerts taken for a round stay claimed (default CLAIM_MS): the alerts of an instance
   * that died mid-round are taken again by another once their claim expires.
   */
  claimMs?: number;
  /** The explorer of an alert whose chain is not among `chains` (nor a known one). */
  explorerUrl: string;
  /**
   * The chains served: an alert links to its chain's explorer, and names its chain when there
   * are several. Default: one chain, on `explorerUrl`.
   */
  chains?: readonly Pick<Chain, "id" | "name" | "explorer" | "spam">[];
  /** Failed tries after which an alert is dropped (rate limits do not count). */
  maxAttempts: number;
  /**
   * A contract this many members of a channel reported as spam is not posted there (its queued
   * alert is dropped, with a one-line note the first time); 0: never suppressed. Default 2.
   */
  suppressReports?: number;
}

export interface DeliveryDeps {
  alerts: OutboxStore;
  /** The channels' spam reports: contracts reported enough in a channel are not posted there. */
  reports?: Pick<ReportStore, "spamReporters">;
  /** Sends, follows a move, pauses a chat that refuses the bot (src/outbound). */
  outbound: Outbound;
  /** Only the process holding the poller's lease delivers: two processes never both send. */
  isLeader: () => boolean;
  /** Who claims the alerts (the poller's lease holder name); default "delivery". */
  holder?: string;
  /** Whether a claimer is known to be gone (see isDeadLocalHolder): its claims are free at once. */
  isDeadHolder?: (holder: string) => boolean;
  /** Told of every delivered message's alerts (metrics). */
  onDelivered?: (alerts: readonly DueAlert[]) => void;
  /** Told of alerts given up on after `maxAttempts` failed tries (metrics). */
  onDropped?: (alerts: readonly DueAlert[]) => void;
  /** Told of alerts not posted because members of their channel reported the contract (metrics). */
  onSuppressed?: (alerts: readonly DueAlert[]) => void;
  logger: Logger;
  settings: DeliverySettings;
  now?: () => number;
}

export interface DeliveryStats {
  delivered: number;
  messages: number;
  retries: number;
  paused: number;
  dropped: number;
  /** Alerts not posted: members of their channel reported the contract as spam. */
  suppressed: number;
}

/**
 * A round's claim: long enough for a round at the platforms' rates, short enough that a dead
 * leader's alerts are taken again soon after its successor starts.
 */
export const CLAIM_MS = 15_000;

/**
 * Drains the outbox, one lane per platform so a slow platform never holds up another. Each lane
 * takes the due alerts of its platform, makes one message per alert (or one digest per channel
 * for a burst), sends with at most the platform's in-flight limit, and marks an alert delivered
 * only after the platform accepted it. A crash re-sends only what was in flight.
 */
export class DeliveryWorker {
  readonly stats: DeliveryStats = {
    delivered: 0,
    messages: 0,
    retries: 0,
    paused: 0,
    dropped: 0,
    suppressed: 0,
  };
  private readonly lanes = new Map<Platform, Lane>();
  private readonly now: () => number;

  constructor(private readonly deps: DeliveryDeps) {
    this.now = deps.now ?? Date.now;
    for (const platform of deps.outbound.platforms)
      this.lanes.set(platform, new Lane(platform, this));
  }

  start(): void {
    for (const lane of this.lanes.values()) lane.start();
  }

  /** New alerts are waiting: look now rather than at the next tick. */
  poke(): void {
    for (const lane of this.lanes.values()) lane.poke();
  }

  /** Stops taking rows and waits for the sends in flight. */
  async stop(): Promise<void> {
    await Promise.all([...this.lanes.values()].map((lane) => lane.stop()));
  }

  /** One round on every platform (tests, and the lanes' own loop). */
  async drain(): Promise<number> {
    const counts = await Promise.all([...this.lanes.values()].map((lane) => lane.round()));
    return counts.reduce((a, b) => a + b, 0);
  }

  /** @internal one round of one platform's lane. */
  async drainPlatform(platform: Platform, stopping: () => boolean): Promise<number> {
    if (!this.deps.isLeader()) return 0;
    const { settings } = this.deps;
    const due = await this.deps.alerts.claim({
      now: this.now(),
      limit: settings.batch,
      platform,
      holder: this.deps.holder ?? "delivery",
      claimMs: settings.claimMs ?? CLAIM_MS,
      isDead: this.deps.isDeadHolder,
    });
    const { kept, notes } = await this.withoutReported(platform, due);
    const chains = settings.chains ?? [];
    const groups = bySubscription(kept).map((alerts) =>
      messagesFor(
        alerts,
        alertChain(alerts[0]?.chain ?? "", chains, settings.explorerUrl),
        settings.digestThreshold,
        () => this.now(),
      ),
    );
    groups.push(...notes.map((note) => [note]));
    const queue = interleave(groups);
    // A channel whose send failed is skipped for the rest of the round (its alerts were rescheduled).
    const halted = new Set<number>();
    const workers = Array.from(
      { length: Math.max(1, Math.min(this.deps.outbound.maxInFlight(platform), queue.length)) },
      async () => {
        for (let message = queue.shift(); message; message = queue.shift()) {
          if (stopping()) return;
          const subscription = message.alerts[0]?.subscriptionId ?? 0;
          if (halted.has(subscription)) continue;
          const ok = await this.send(platform, message, queue);
          if (!ok) halted.add(subscription);
        }
      },
    );
    await Promise.all(workers);
    // Stopping: what was claimed but not tried goes back at once, for the next leader.
    if (queue.length > 0)
      await this.deps.alerts.retryLater(
        queue.flatMap((m) => m.alerts),
        this.now(),
        "not tried: the bot stopped",
        false,
      );
    return due.length;
  }

  /**
   * Takes out the alerts of contracts that members of their channel reported as spam (at least
   * `suppressReports` people). Where the channel was told already, they are dropped at once;
   * otherwise they become one note per channel, and are dropped once the note is sent.
   */
  private async withoutReported(
    platform: Platform,
    due: DueAlert[],
  ): Promise<{ kept: DueAlert[]; notes: Message[] }> {
    const threshold = this.deps.settings.suppressReports ?? 2;
    const reports = this.deps.reports;
    if (!reports || threshold <= 0 || due.length === 0) return { kept: due, notes: [] };
    // Counted per chain: one address may be another contract on another chain.
    const key = (chain: string, chatId: string, contract: string) =>
      `${chain}\u0000${chatId}\u0000${contract.toLowerCase()}`;
    const reporters = new Map<string, number>();
    for (const chain of new Set(due.map((alert) => alert.chain))) {
      const onChain = due.filter((alert) => alert.chain === chain);
      const counted = await reports.spamReporters(
        platform,
        chain,
        onChain.map((alert) => alert.chatId),
        onChain.map((alert) => alert.contract.address),
      );
      for (const row of counted) reporters.set(key(chain, row.chatId, row.contract), row.reporters);
    }
    const countOf = (alert: DueAlert) =>
      reporters.get(key(alert.chain, alert.chatId, alert.contract.address)) ?? 0;
    const suppressed = due.filter((alert) => countOf(alert) >= threshold);
    if (suppressed.length === 0) return { kept: due, notes: [] };
    const kept = due.filter((alert) => countOf(alert) < threshold);
    const noted = await this.deps.alerts.alreadyNoted(suppressed);
    const silent = suppressed.filter((alert) => noted.has(alert.id));
    if (silent.length > 0) await this.dropSuppressed(silent, threshold, false);
    const notes = bySubscription(suppressed.filter((a) => !noted.has(a.id))).map(
      (alerts): Message => ({
        reply: suppressedReply(
          alerts.map((alert) => ({ contract: alert.contract, reporters: countOf(alert) })),
        ),
        alerts,
        suppressedBy: Math.max(...alerts.map(countOf)),
      }),
    );
    return { kept, notes };
  }

  private async dropSuppressed(alerts: DueAlert[], reports: number, noted: boolean) {
    await this.deps.alerts.suppress(alerts, { reports, noted, now: this.now() });
    this.stats.suppressed += alerts.length;
    this.deps.onSuppressed?.(alerts);
    const first = alerts[0];
    this.deps.logger.info(
      {
        platform: first?.platform,
        chat: first?.chatId,
        contracts: alerts.map((alert) => alert.contract.address),
        noted,
      },
      "alerts not posted: members of the channel reported the contracts as spam",
    );
  }

  /** The policy alerts are sent under: ALERT_MAX_ATTEMPTS failed tries, ALERT_BACKOFF waits. */
  private get policy(): SendPolicy {
    return { maxAttempts: this.deps.settings.maxAttempts, backoff: ALERT_BACKOFF };
  }

  private async send(platform: Platform, message: Message, queue: Message[]): Promise<boolean> {
    const first = message.alerts[0];
    if (!first) return true;
    const key = idempotencyKey(message.alerts);
    const sent = await this.deps.outbound.send({
      platform,
      chatId: first.chatId,
      reply: message.reply,
      key: message.suppressedBy === undefined ? key : `n${key.slice(1)}`,
      // The message's tries: those of its most tried alert.
      attempts: Math.max(...message.alerts.map((alert) => alert.attempts)),
      policy: this.policy,
      what: "alert",
    });
    if (sent.outcome !== "sent") {
      // This message is tried again later, and so are the channel's others still queued this
      // round (without counting a try: they were not tried).
      const others = queue
        .filter((m) => m.alerts[0]?.subscriptionId === first.subscriptionId)
        .flatMap((m) => m.alerts);
      await this.handleFailure(message.alerts, others, sent);
      return false;
    }
    if (message.suppressedBy !== undefined) {
      await this.dropSuppressed(message.alerts, message.suppressedBy, true);
      return true;
    }
    await this.deps.alerts.delivered(message.alerts, this.now());
    this.deps.onDelivered?.(message.alerts);
    this.stats.delivered += message.alerts.length;
    this.stats.messages++;
    return true;
  }

  /** Records what the outbound module did with a message that did not go through. */
  private async handleFailure(
    failed: DueAlert[],
    others: DueAlert[],
    sent: Exclude<Sent, { outcome: "sent" }>,
  ): Promise<void> {
    const { logger } = this.deps;
    const first = failed[0];
    if (!first) return;
    const where = {
      platform: first.platform,
      chat: first.chatId,
      subscription: first.subscriptionId,
    };
    switch (sent.outcome) {
      case "unserved":
        // A lane runs only for a platform served: nothing to record.
        return;
      case "paused":
        this.stats.paused++;
        logger.warn(
          { ...where, reason: sent.reason },
          "alerts paused: the channel refuses messages",
        );
        return;
      case "retry":
      case "spent": {
        this.stats.retries++;
        if (sent.moved)
          logger.info(
            { ...where, newChat: sent.moved.to },
            "chat moved to a new id; its subscription and alerts follow",
          );
        if (sent.outcome === "retry" && !sent.counted) {
          await this.deps.alerts.retryLater([...failed, ...others], sent.at, sent.reason, false);
          logger.info(
            { ...where, retryAfterMs: sent.at - this.now() },
            "alert delivery rate limited",
          );
          return;
        }
        // After a move: at once, to the new id (re-rendered there, so its buttons belong to the
        // new chat).
        await this.retry(failed, others, sent.at, sent.reason);
        if (sent.moved) this.poke();
        else
          logger.warn(
            { ...where, reason: sent.reason, attempts: sent.attempts },
            "alert delivery failed; will retry",
          );
        return;
      }
    }
  }

  /** Counts a try for the failed alerts, dropping those out of tries; the others just wait. */
  private async retry(
    failed: DueAlert[],
    others: DueAlert[],
    dueAt: number,
    reason: string,
  ): Promise<void> {
    const { maxAttempts } = this.deps.settings;
    // Each alert's own tries: an alert of a digest may have fewer than the message's.
    const spent = failed.filter((alert) => spentBy(this.policy, alert.attempts));
    await this.deps.alerts.retryLater(
      failed.filter((alert) => !spentBy(this.policy, alert.attempts)),
      dueAt,
      reason,
      true,
    );
    await this.deps.alerts.retryLater(others, dueAt, reason, false);
    if (spent.length === 0) return;
    await this.deps.alerts.giveUp(spent, reason, this.now());
    this.stats.dropped += spent.length;
    this.deps.onDropped?.(spent);
    const first = spent[0];
    this.deps.logger.error(
      {
        platform: first?.platform,
        chat: first?.chatId,
        subscription: first?.subscriptionId,
        contracts: spent.map((alert) => alert.contract.address),
        reason,
        attempts: maxAttempts,
      },
      "alert dropped after its last try; it will not be sent",
    );
  }

  /** @internal */
  get tickMs(): number {
    return this.deps.settings.tickMs;
  }

  /** @internal */
  get batch(): number {
    return this.deps.settings.batch;
  }

  /** @internal */
  get logger(): Logger {
    return this.deps.logger;
  }

  /** Each platform lane's last good round (health judges them on the leader). */
  get liveness(): Liveness[] {
    return [...this.lanes.values()].flatMap((lane) => (lane.liveness ? [lane.liveness] : []));
  }

  /** @internal */
  logRoundFailure(platform: Platform, error: unknown): void {
    this.deps.logger.error({ err: error, platform }, "alert delivery round failed");
  }
}

/** One platform's delivery loop: rounds back to back while there is work, else every tick. */
class Lane {
  private loop: LoopHandle | undefined;
  private stopped = false;

  constructor(
    private readonly platform: Platform,
    private readonly worker: DeliveryWorker,
  ) {}

  start(): void {
    this.loop = startLoop({
      name: `delivery ${this.platform}`,
      everyMs: this.worker.tickMs,
      round: async () => (await this.round()) >= this.worker.batch,
      logger: this.worker.logger,
      onError: (error) => this.worker.logRoundFailure(this.platform, error),
    });
  }

  poke(): void {
    this.loop?.poke();
  }

  get liveness(): Liveness | undefined {
    return this.loop?.liveness;
  }

  async stop(): Promise<void> {
    this.stopped = true;
    await this.loop?.stop();
  }

  round(): Promise<number> {
    return this.worker.drainPlatform(this.platform, () => this.stopped);
  }
}
