import type { ApiClient } from "../api/client.ts";
import type { Chain } from "../chains.ts";
import type { Platform } from "../core/command.ts";
import type { Reply } from "../core/reply.ts";
import type { Lease } from "../jobs/lease.ts";
import { LeasedLoop, MinuteBudget } from "../jobs/leased-loop.ts";
import type { Check } from "../jobs/liveness.ts";
import type { Logger } from "../log.ts";
import { sendKey } from "../outbound/key.ts";
import { chatKey, type Outbound } from "../outbound/outbound.ts";
import type { SendPolicy } from "../outbound/policy.ts";
import type { LeaseStore, SendWait } from "../store/types.ts";
import { mergeReplies, ownersReply, walletReply, whalesReply } from "./posts.ts";
import {
  FRESHNESS_MS,
  ownersDailyMove,
  parseState,
  readOrder,
  sign,
  type WatchState,
  whaleShareMove,
} from "./reading.ts";
import type { Watch, WatchStore } from "./types.ts";

export {
  FRESHNESS_MS,
  ownersDailyMove,
  whaleShareMove,
} from "./reading.ts";

/** The watch checker's lease: one process checks every chain's watches. */
export const WATCH_LEASE = "watches";

/** Where the outbound module keeps the waits of chats whose watch post failed. */
export const WATCH_STREAM = "watches";

/**
 * A watch's post is never given up (it stays owed until it goes through, or its watch is
 * removed); its chat waits 30 s after a failed try, doubling, spread ±25%.
 */
export const WATCH_POLICY: SendPolicy = {
  maxAttempts: Number.POSITIVE_INFINITY,
  backoff: { baseMs: 30_000 },
};

/** A post owed, stored with the state that caused it. */
interface Pending {
  reply: Reply;
}

export interface WatchCheckerSettings {
  /** How often the watches are looked at (each part still waits for its freshness). */
  tickMs: number;
  /** Upstream reads the watches may make in a minute (WATCH_CHECKS_PER_MINUTE). */
  checksPerMinute: number;
  /** Lease lifetime; default 3 ticks, at least 10 s. */
  leaseTtlMs?: number;
}

export interface WatchCheckerDeps {
  watches: WatchStore;
  apis: ReadonlyMap<string, ApiClient>;
  chains: readonly Pick<Chain, "id" | "name" | "explorer" | "spam">[];
  /**
   * Sends, follows a move, pauses a chat that refuses the bot, and keeps the waits and counted
   * tries of chats whose post failed, across restarts (src/outbound).
   */
  outbound: Outbound;
  leases: LeaseStore;
  holder: string;
  logger: Logger;
  settings: WatchCheckerSettings;
  /** Wall clock (check times are stored). */
  now?: () => number;
}

export interface WatchCheckStats {
  checks: number;
  posts: number;
  /** Reads left for a later tick: the per-minute share was spent. */
  deferred: number;
  failures: number;
  /** Chats whose watches paused because the chat refused the bot. */
  paused: number;
}

/**
 * Checks the channels' watches at the data's freshness and posts what moved. Only the holder of
 * the `watches` lease checks. Each read's result is stored with the post it causes (one write),
 * then the post is sent and cleared: a crash between the two sends it once more at most (with
 * the same idempotency key, which Discord deduplicates), and a restart never reposts a change
 * already stored.
 */
export class WatchChecker {
  readonly stats: WatchCheckStats = { checks: 0, posts: 0, deferred: 0, failures: 0, paused: 0 };
  private readonly now: () => number;
  /** One process checks every chain's watches. */
  private readonly job: LeasedLoop;
  /** Reads made in the current minute (the watches' share of the upstream budget). */
  private readonly reads: MinuteBudget;
  /**
   * Chats whose post failed, by chatKey: not sent to again before `until` (a rate limit's
   * Retry-After, or the back-off after `attempts` failed tries). Kept by the outbound module in the
   * store, so a restart keeps them; read at the start of each round.
   */
  private waits = new Map<string, SendWait>();
  /** Chats waiting after a failed post: at most the chats that have watches. */
  get waitingChats(): number {
    return this.waits.size;
  }

  /** Chats paused during this round (the round's watch list was read before). */
  private readonly pausedNow = new Set<string>();

  constructor(private readonly deps: WatchCheckerDeps) {
    this.now = deps.now ?? Date.now;
    this.job = new LeasedLoop({
      lease: WATCH_LEASE,
      name: "watches",
      leases: deps.leases,
      holder: deps.holder,
      tickMs: deps.settings.tickMs,
      leaseTtlMs: deps.settings.leaseTtlMs,
      logger: deps.logger,
      now: this.now,
      messages: {
        failed: "watch check failed; will try again",
        notReleased: "could not release the watch lease",
      },
      onFailure: () => {
        this.stats.failures++;
      },
    });
    this.reads = new MinuteBudget(deps.settings.checksPerMinute, this.now);
  }

  get lease(): Lease {
    return this.job.lease;
  }

  start(): void {
    this.job.start(async () => {
      await this.tick();
    });
  }

  stop(): Promise<void> {
    return this.job.stop();
  }

  /** For /healthz, without I/O (src/jobs/leased-loop.ts). */
  checks(boundMs: number): Check[] {
    return this.job.checks(boundMs);
  }

  /** One round: takes the lease, sends what is owed, reads what is due. False: not the leader. */
  async tick(): Promise<boolean> {
    const ttl = this.lease.ttlMs;
    const hold = () => this.job.held();
    if (!(await hold())) return false;
    let heldAt = this.now();
    let spent = false;
    this.pausedNow.clear();
    const watches = await this.deps.watches.all();
    // A chat whose watches were all removed (or that moved) while it waited is not kept for ever.
    const chats = new Set(watches.map(chatKey));
    this.waits = await this.deps.outbound.waits(WATCH_STREAM);
    for (const [chat, wait] of this.waits)
      if (!chats.has(chat)) {
        await this.deps.outbound.forget(WATCH_STREAM, wait.platform, wait.chatId);
        this.waits.delete(chat);
      }
    for (const watch of readOrder(watches)) {
      // A long round renews the lease as it goes, and stops if another process took it.
      if (this.now() - heldAt > ttl / 3) {
        if (!(await hold())) return false;
        heldAt = this.now();
      }
      // A chat on a platform this process does not serve: its reads would buy posts it cannot send.
      if (!this.deps.outbound.serves(watch.platform)) continue;
      // A chat that refuses the bot: nothing is read for it until it works again.
      if (watch.pausedAt !== null || this.pausedNow.has(chatKey(watch))) continue;
      // A chat whose post failed waits (Retry-After, back-off): nothing read or sent for it.
      if ((this.waits.get(chatKey(watch))?.until ?? 0) > this.now()) continue;
      // A post owed from before (a crash, a failed send) goes first; nothing new is read meanwhile.
      if (watch.pending !== null) {
        await this.send(watch, watch.pending);
        continue;
      }
      // Once this minute's reads are spent, only owed posts go out; the reads wait.
      if (!spent && (await this.check(watch)) === "spent") spent = true;
    }
    return true;
  }

  private async check(watch: Watch): Promise<"done" | "spent"> {
    const api = this.deps.apis.get(watch.chain);
    const served = this.deps.chains.find((c) => c.id === watch.chain);
    // A chain no longer served: its watches wait.
    if (!api || !served) return "done";
    const chain = { ...served, several: this.deps.chains.length > 1 };
    const state = parseState(watch.state);
    const now = this.now();
    const replies: Reply[] = [];
    let changed = false;
    const due = (at: number | undefined, every: number) => at === undefined || now - at >= every;
    // Fresh: this schedule already asks no more often than the data changes, and a cached
    // answer (a command's, read minutes ago) could hide the change it is looking for.
    const options = { background: true, fresh: true };
    let reading: keyof typeof FRESHNESS_MS | undefined;
    try {
      if (watch.kind === "collection") {
        if (watch.ownersPercent !== null && due(state.ownersAt, FRESHNESS_MS.owners)) {
          if (!this.reads.take()) return this.deferred();
          this.stats.checks++;
          reading = "owners";
          const { dataPoints } = await api.collections.ownersCount(
            watch.target,
            "DURATION_7_DAYS",
            "GROUP_BY_PERIOD_1_DAY",
            {},
            options,
          );
          const move = ownersDailyMove(dataPoints);
          const over = move === undefined ? 0 : sign(move, watch.ownersPercent);
          if (over !== 0 && over !== (state.ownersOver ?? 0) && move !== undefined)
            replies.push(ownersReply(watch, chain, move, dataPoints.at(-1)?.count ?? "0"));
          state.ownersAt = now;
          state.ownersOver = over;
          changed = true;
        }
        if (watch.whalesPoints !== null && due(state.whalesAt, FRESHNESS_MS.whales)) {
          if (!this.reads.take()) return this.finish(watch, state, replies, changed, "spent");
          this.stats.checks++;
          reading = "whales";
          const { aggregatedBehaviors } = await api.audiences.behaviorsByCollection(
            watch.target,
            options,
          );
          const whales = whaleShareMove(aggregatedBehaviors);
          const over = sign(whales.move, watch.whalesPoints);
          if (over !== 0 && over !== (state.whalesOver ?? 0))
            replies.push(whalesReply(watch, chain, whales));
          state.whalesAt = now;
          state.whalesOver = over;
          changed = true;
        }
      } else if (due(state.nftsAt, FRESHNESS_MS.nfts)) {
        if (!this.reads.take()) return this.deferred();
        this.stats.checks++;
        reading = "nfts";
        const { nfts } = await api.wallets.nfts(
          watch.target,
          chain.spam ? { spam: "SPAM_FILTER_EXCLUDE" } : {},
          options,
        );
        const keys = nfts
          .filter((item) => !item.spam)
          .map((item) => `${item.nft.contractAddress.toLowerCase()}:${item.nft.tokenId}`);
        // The first read is what the wallet had when the watch began: nothing is posted for it.
        if (state.nfts !== undefined) {
          const before = new Set(state.nfts);
          const fresh = nfts.filter(
            (item) =>
              !item.spam &&
              !before.has(`${item.nft.contractAddress.toLowerCase()}:${item.nft.tokenId}`),
          );
          if (fresh.length > 0) replies.push(walletReply(watch, chain, fresh));
        }
        state.nfts = [...new Set(keys)].sort();
        state.nftsAt = now;
        changed = true;
      }
    } catch (error) {
      this.stats.failures++;
      this.deps.logger.warn(
        { err: error, watch: watch.id, chain: watch.chain },
        "a watch's data could not be read; tried again in 5 minutes at most",
      );
      // Not asked again at every tick: in 5 minutes, or at the data's freshness if sooner.
      if (reading !== undefined) {
        const every = FRESHNESS_MS[reading];
        state[`${reading}At`] = now - every + Math.min(every, 5 * 60_000);
        changed = true;
      }
      return this.finish(watch, state, replies, changed, "done");
    }
    return this.finish(watch, state, replies, changed, "done");
  }

  private deferred(): "spent" {
    this.stats.deferred++;
    return "spent";
  }

  private async finish(
    watch: Watch,
    state: WatchState,
    replies: Reply[],
    changed: boolean,
    result: "done" | "spent",
  ): Promise<"done" | "spent"> {
    if (result === "spent") this.stats.deferred++;
    if (!changed) return result;
    const reply = mergeReplies(replies);
    const pending = reply ? JSON.stringify({ reply } satisfies Pending) : null;
    await this.deps.watches.advance(watch.id, JSON.stringify(state), pending);
    if (pending) await this.send(watch, pending);
    return result;
  }

  /** Sends the owed post; cleared once the platform took it, or when the chat refuses the bot. */
  private async send(watch: Watch, pending: string): Promise<void> {
    if (!this.deps.outbound.serves(watch.platform)) return;
    let reply: Reply;
    try {
      reply = (JSON.parse(pending) as Pending).reply;
    } catch {
      await this.deps.watches.posted(watch.id, pending);
      return;
    }
    const chat = chatKey(watch);
    const sent = await this.deps.outbound.send({
      platform: watch.platform as Platform,
      chatId: watch.chatId,
      reply,
      key: sendKey(`watch:${watch.id}:${pending}`),
      attempts: this.waits.get(chat)?.attempts ?? 0,
      policy: WATCH_POLICY,
      what: "watch post",
      stream: WATCH_STREAM,
    });
    const where = { watch: watch.id, platform: watch.platform, chat: watch.chatId };
    switch (sent.outcome) {
      case "sent":
        this.waits.delete(chat);
        this.stats.posts++;
        await this.deps.watches.posted(watch.id, pending);
        return;
      case "unserved":
        return;
      case "retry":
      case "spent":
        // The post stays owed (a watch's post is never given up); the chat's posts wait, and its
        // watches read nothing new meanwhile. After a move, the post goes to the new id at the
        // next round.
        this.waits.delete(chat);
        this.waits.set(
          chatKey({ platform: watch.platform, chatId: sent.moved?.to ?? watch.chatId }),
          {
            stream: WATCH_STREAM,
            platform: watch.platform,
            chatId: sent.moved?.to ?? watch.chatId,
            attempts: sent.attempts,
            until: sent.at,
            reason: sent.reason,
          },
        );
        if (sent.moved)
          this.deps.logger.info(
            { ...where, newChat: sent.moved.to },
            "chat moved to a new id; its watches follow",
          );
        else
          this.deps.logger.info(
            { ...where, reason: sent.reason, retryInMs: Math.round(sent.at - this.now()) },
            "a watch's post could not be sent; tried again later",
          );
        return;
      case "paused":
        // The post stays owed: it goes out when the chat works again.
        this.pausedNow.add(chat);
        this.waits.delete(chat);
        this.stats.paused++;
        this.deps.logger.warn(
          { ...where, reason: sent.reason },
          "the chat refuses the bot: its watches pause until it works again",
        );
        return;
    }
  }
}
