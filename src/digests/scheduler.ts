import type { ApiClient } from "../api/client.ts";
import type { Chain } from "../chains.ts";
import type { Platform } from "../core/command.ts";
import type { KnownCollections } from "../core/known-collections.ts";
import { latestSlot } from "../core/schedule.ts";
import type { Liveness } from "../jobs/liveness.ts";
import { type LoopHandle, startLoop } from "../jobs/loop.ts";
import type { Logger } from "../log.ts";
import { sendKey } from "../outbound/key.ts";
import type { Outbound, Sent } from "../outbound/outbound.ts";
import { digestPost } from "./post.ts";
import type { Digest, DigestRun, DigestStore } from "./types.ts";

export interface DigestSchedulerSettings {
  /** How often the digests are looked at. */
  tickMs: number;
  /** A slot posted more than this after its time says it is late (the bot was down). */
  lateAfterMs: number;
  /** How long a claimed slot stays claimed (default 2 minutes: building and sending one post). */
  claimMs?: number;
  /** Failed tries of one slot before it is given up (rate limits do not count). */
  maxAttempts: number;
}

export interface DigestSchedulerDeps {
  digests: DigestStore;
  /** Each chain's client, by chain id. */
  apis: ReadonlyMap<string, ApiClient>;
  /** The chains served, the default first. */
  chains: readonly Pick<Chain, "id" | "name" | "symbol">[];
  /** Each chain's collection index, by chain id (names the top list leaves out). */
  collectionIndexes?: ReadonlyMap<string, KnownCollections>;
  /** Sends, follows a move, pauses a chat that refuses the bot (src/outbound). */
  outbound: Outbound;
  /**
   * Whether this instance looks for due slots (the default chain's poller lease holder). Not
   * what makes a slot post once: the run's claim in the store is.
   */
  isLeader: () => boolean;
  /** Who claims runs (the lease holder's name). */
  holder: string;
  logger: Logger;
  settings: DigestSchedulerSettings;
  now?: () => number;
  /** Told of every slot posted (on time or late) or given up (metrics). */
  onOutcome?: (outcome: "posted" | "late" | "failed") => void;
}

export interface DigestStats {
  posted: number;
  late: number;
  retries: number;
  failed: number;
  /** Chats whose digests paused because the chat refused the bot. */
  paused: number;
}

export const DIGEST_CLAIM_MS = 120_000;

/** A slot's waits after failed tries: 30 s, doubling, not spread (one post per digest). */
export const DIGEST_BACKOFF = { baseMs: 30_000, jitter: false } as const;

/** The same key for every try at one slot of one digest (Discord's nonce drops a re-send). */
export const digestKey = (digestId: number, slot: number) => sendKey(`digest:${digestId}:${slot}`);

/**
 * Posts scheduled digests. Every tick (on the leader), each digest's most recent slot is looked
 * at: a slot not yet posted is claimed in the store (one row per digest and slot), built, sent,
 * and marked sent once the platform took it. So a slot posts once across restarts and instances;
 * a slot whose time passed while the bot was down is the most recent one at start, and is posted
 * then, saying it is late; older missed slots are not. A claimer that dies mid-send leaves its
 * claim to expire, and the slot is sent again then: one duplicate per crash at most (none on
 * Discord, whose nonce drops it). A slot before the digest was added is never posted.
 */
export class DigestScheduler {
  readonly stats: DigestStats = { posted: 0, late: 0, retries: 0, failed: 0, paused: 0 };
  private readonly now: () => number;
  private loop: LoopHandle | undefined;
  private stopping = false;
  /**
   * Per digest, a slot this instance need not ask the store about again until `until`: posted
   * or given up (for ever), or held by another claimer (until its claim could have expired). So
   * a tick writes to the store only for slots that may still be owed.
   */
  private readonly settled = new Map<number, { slot: number; until: number }>();
  /** How many digests a settled slot is remembered for: at most the digests there are. */
  get remembered(): number {
    return this.settled.size;
  }

  /** When this scheduler began: a slot before it passed while this process was not running. */
  private readonly startedAt: number;

  constructor(private readonly deps: DigestSchedulerDeps) {
    this.now = deps.now ?? Date.now;
    this.startedAt = this.now();
  }

  start(): void {
    this.stopping = false;
    this.loop = startLoop({
      name: "digests",
      everyMs: this.deps.settings.tickMs,
      round: async () => {
        await this.tick();
      },
      logger: this.deps.logger,
      onError: (error) =>
        this.deps.logger.error({ err: error }, "digest round failed; trying again next tick"),
    });
  }

  async stop(): Promise<void> {
    this.stopping = true;
    await this.loop?.stop();
  }

  /** The last good round (health judges it on the leader). */
  get liveness(): Liveness | undefined {
    return this.loop?.liveness;
  }

  /** One look at every digest; returns how many posts were sent. */
  async tick(): Promise<number> {
    if (!this.deps.isLeader()) return 0;
    let sent = 0;
    // Chats that refused the bot in this round (its digests were read before).
    const pausedNow = new Set<string>();
    const digests = await this.deps.digests.all();
    // A removed digest's slot is not remembered for ever: the map follows the digests there are.
    const present = new Set(digests.map((digest) => digest.id));
    for (const id of this.settled.keys()) if (!present.has(id)) this.settled.delete(id);
    for (const digest of digests) {
      if (this.stopping) break;
      // A platform not configured in this run: its digests wait for it.
      if (!this.deps.outbound.serves(digest.platform)) continue;
      // A chat that refuses the bot: its digests wait until it works again, untried.
      const chat = `${digest.platform}\u0000${digest.chatId}`;
      if (digest.pausedAt !== null || pausedNow.has(chat)) continue;
      let slot: number;
      try {
        slot = latestSlot(digest, this.now());
      } catch (error) {
        this.deps.logger.warn({ err: error, digest: digest.id }, "digest has no slot");
        continue;
      }
      if (slot < digest.createdAt) continue;
      const known = this.settled.get(digest.id);
      if (known && known.slot === slot && known.until > this.now()) continue;
      const claimMs = this.deps.settings.claimMs ?? DIGEST_CLAIM_MS;
      const run = await this.deps.digests.claimRun({
        digestId: digest.id,
        slot,
        holder: this.deps.holder,
        now: this.now(),
        claimMs,
      });
      if (!run) {
        this.settled.set(digest.id, { slot, until: this.now() + claimMs });
        continue;
      }
      const outcome = await this.post(digest, run);
      if (outcome === "sent") sent++;
      if (outcome === "paused") {
        pausedNow.add(chat);
        // Resumed before its next slot, this one is still owed.
        this.settled.delete(digest.id);
        continue;
      }
      // Sent or given up: never again; to be retried: from when its wait ends.
      this.settled.set(digest.id, {
        slot,
        until: typeof outcome === "number" ? outcome : Number.POSITIVE_INFINITY,
      });
    }
    return sent;
  }

  /** Builds and sends one slot's post: sent, given up, or the time to try it again from. */
  private async post(
    digest: Digest,
    run: DigestRun,
  ): Promise<"sent" | "failed" | "paused" | number> {
    const { digests, logger, settings } = this.deps;
    const where = {
      digest: digest.id,
      platform: digest.platform,
      chat: digest.chatId,
      slot: run.slot,
    };
    const api = this.deps.apis.get(digest.chain);
    const chainOf = this.deps.chains.find((c) => c.id === digest.chain);
    if (!api || !chainOf) {
      await digests.finishRun(digest.id, run.slot, "failed", this.now(), "chain not served");
      this.stats.failed++;
      this.deps.onOutcome?.("failed");
      logger.warn({ ...where, chain: digest.chain }, "digest of a chain no longer served: skipped");
      return "failed";
    }
    const now = this.now();
    // Late: its time passed before this process ran, and its first try comes well after it (a
    // slot merely queued behind others, or retried, is not "late": the bot was up).
    const late =
      run.attempts === 0 && run.slot < this.startedAt && now - run.slot > settings.lateAfterMs;
    const sent = await this.deps.outbound.send({
      platform: digest.platform as Platform,
      chatId: digest.chatId,
      reply: () =>
        digestPost({
          digest,
          slot: run.slot,
          late,
          api,
          chain: chainOf,
          collections: this.deps.collectionIndexes?.get(digest.chain) ?? undefined,
          chainName: this.deps.chains.length > 1 ? chainOf.name : undefined,
        }),
      key: digestKey(digest.id, run.slot),
      attempts: run.attempts,
      policy: { maxAttempts: settings.maxAttempts, backoff: DIGEST_BACKOFF },
      what: "digest",
    });
    if (sent.outcome !== "sent") return this.failed(digest, run, sent);
    await digests.finishRun(digest.id, run.slot, "sent", this.now());
    this.stats.posted++;
    if (late) this.stats.late++;
    this.deps.onOutcome?.(late ? "late" : "posted");
    logger.info({ ...where, late }, "digest posted");
    return "sent";
  }

  /** Records what the outbound module did with a slot's post that did not go through. */
  private async failed(
    digest: Digest,
    run: DigestRun,
    sent: Exclude<Sent, { outcome: "sent" }>,
  ): Promise<"failed" | "paused" | number> {
    const { digests, logger } = this.deps;
    const where = {
      digest: digest.id,
      platform: digest.platform,
      chat: digest.chatId,
      slot: run.slot,
    };
    const now = this.now();
    switch (sent.outcome) {
      case "unserved":
        // The platform was checked before the claim: let the claim lapse, untried.
        return now;
      case "paused":
        // Not a failure of the slot: the chat's digests wait, the reason shown in /digest list,
        // and this slot stays owed (posted if the chat works again before the next).
        await digests.retryRun(digest.id, run.slot, now, sent.reason, false);
        this.stats.paused++;
        logger.warn(
          { ...where, reason: sent.reason },
          "the chat refuses the bot: its digests pause until it works again",
        );
        return "paused";
      case "spent":
        return this.giveUp(digest, run, sent.reason);
      case "retry":
        if (sent.moved) {
          logger.info({ ...where, newChat: sent.moved.to }, "chat moved; its digests follow");
          // At once, to the new id (the next tick reads the digest anew).
          await digests.retryRun(digest.id, run.slot, sent.at, sent.reason, true);
          return sent.at;
        }
        this.stats.retries++;
        await digests.retryRun(digest.id, run.slot, sent.at, sent.reason, sent.counted);
        if (sent.counted)
          logger.warn(
            { ...where, reason: sent.reason, attempts: sent.attempts },
            "digest post failed; will retry",
          );
        return sent.at;
    }
  }

  /** The slot's tries are spent: it is not posted; the next slot tries again. */
  private async giveUp(digest: Digest, run: DigestRun, reason: string): Promise<"failed"> {
    await this.deps.digests.finishRun(digest.id, run.slot, "failed", this.now(), reason);
    this.stats.failed++;
    this.deps.onOutcome?.("failed");
    this.deps.logger.error(
      { digest: digest.id, platform: digest.platform, chat: digest.chatId, slot: run.slot, reason },
      "digest not posted for this slot; the next slot tries again",
    );
    return "failed";
  }
}
