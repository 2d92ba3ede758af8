import { boundedCall, CallCutError } from "../core/bounded-call.ts";
import type { Platform } from "../core/command.ts";
import type { RenderableReply, Reply } from "../core/reply.ts";
import type { ChatMover } from "../store/move-chat.ts";
import type { ChatPauseStore, SendWait, SendWaitStore } from "../store/types.ts";
import { type SendPolicy, sendStep, spentBy } from "./policy.ts";
import type { ChatSender, Materialize, PrivateTarget, SendFailure } from "./types.ts";

/** One post to a chat, sent unasked (not an answer to a command). */
export interface Post {
  platform: Platform;
  chatId: string;
  /** What is sent: a reply, or how to build it (a failure to build is a transient failure). */
  reply: Reply | (() => Promise<Reply>);
  /** The same for every try at this post (see ChatSender.sendToChat). */
  key: string;
  /**
   * Failed tries counted before this one: from the sender's own row (an alert's, a digest run's),
   * or, for a post sent with a `stream`, from the chat's wait there (Outbound.waits).
   */
  attempts: number;
  policy: SendPolicy;
  /** What the post is, for the reason a post that could not be built gives ("digest"). */
  what: string;
  /**
   * For a sender with no row of its own to count tries in (the watches): the outbound module keeps
   * the chat's wait and count in this stream, persisted, and clears them once a post goes through.
   */
  stream?: string;
}

/** Where a chat that moved went (the alert delivery logs it). */
export interface Moved {
  to: string;
}

/**
 * What became of a post. `retry`: try again from `at` (at once after a move), in `chatId` (the
 * new id after a move), with `attempts` failed tries counted now (`counted`: this one counted; a
 * rate limit never does). `spent`: its tries are spent, give it up (`at`: when it would have been
 * tried again). `paused`: the chat refuses the
 * bot and is paused (every feature's work for it waits). `unserved`: no sender for its platform in
 * this process.
 */
export type Sent =
  | { outcome: "sent" }
  | { outcome: "unserved" }
  | {
      outcome: "retry";
      at: number;
      chatId: string;
      attempts: number;
      counted: boolean;
      rateLimited: boolean;
      reason: string;
      moved?: Moved;
    }
  | { outcome: "spent"; at: number; attempts: number; reason: string; moved?: Moved }
  | { outcome: "paused"; reason: string };

export interface OutboundDeps {
  senders: Partial<Record<Platform, ChatSender>>;
  materialize: Materialize;
  /** Moves everything of a chat that got a new id (src/store/move-chat.ts). */
  moveChat: ChatMover;
  chatPauses: Pick<ChatPauseStore, "pause">;
  waits: SendWaitStore;
  now?: () => number;
}

/** One key per chat (a chat id is unique on its platform only). */
export const chatKey = (chat: { platform: string; chatId: string }): string =>
  `${chat.platform}\u0000${chat.chatId}`;

/**
 * The one place that sends to a chat outside an answer (alerts, digests, watches). It carries out
 * the one send decision (policy.ts) the same way for all of them: a rate limit waits its
 * Retry-After without counting a try; a transient failure backs off and counts; a chat that moved
 * (Telegram's migrate_to_chat_id) is followed, everything of it moved, and tried again at once
 * there, the try counted so a chat that keeps moving cannot loop; a refusal pauses the chat; a
 * post whose tries are spent is given up. What it returns is what the sender records in its own
 * rows (or, with a `stream`, what the outbound module recorded for it).
 */
export class Outbound {
  private readonly now: () => number;

  constructor(private readonly deps: OutboundDeps) {
    this.now = deps.now ?? Date.now;
  }

  /** The platforms this process sends to. */
  get platforms(): Platform[] {
    return (Object.keys(this.deps.senders) as Platform[]).filter((p) => this.deps.senders[p]);
  }

  /** Whether this process sends to `platform`. */
  serves(platform: string): boolean {
    return this.deps.senders[platform as Platform] !== undefined;
  }

  /** Sends allowed in flight at once on `platform` (see ChatSender.maxInFlight). */
  maxInFlight(platform: Platform): number {
    return this.deps.senders[platform]?.maxInFlight ?? 1;
  }

  /** The chats waiting in `stream` after a failed post, by chatKey. */
  async waits(stream: string): Promise<Map<string, SendWait>> {
    const waits = await this.deps.waits.all(stream);
    return new Map(waits.map((wait) => [chatKey(wait), wait]));
  }

  /** Forgets a chat's wait in `stream` (its posts are gone: nothing is owed there any more). */
  forget(stream: string, platform: string, chatId: string): Promise<void> {
    return this.deps.waits.clear(stream, platform, chatId);
  }

  /** Builds, sends and, on a failure, carries out the send decision. Never throws a send error. */
  async send(post: Post): Promise<Sent> {
    const sender = this.deps.senders[post.platform];
    if (!sender) return { outcome: "unserved" };
    let failure: SendFailure;
    try {
      const reply = typeof post.reply === "function" ? await post.reply() : post.reply;
      const rendered = await this.deps.materialize(post.platform, post.chatId, reply);
      try {
        await sender.sendToChat(post.chatId, rendered, post.key);
        if (post.stream) await this.deps.waits.clear(post.stream, post.platform, post.chatId);
        return { outcome: "sent" };
      } catch (error) {
        failure = sender.classifySendError(error);
      }
    } catch (error) {
      failure = {
        kind: "transient",
        reason: `could not build the ${post.what}: ${(error as Error).message}`,
      };
    }
    return this.failed(post, failure);
  }

  private async failed(post: Post, failure: SendFailure): Promise<Sent> {
    const { platform, chatId, attempts, policy, stream } = post;
    const now = this.now();
    const next = sendStep(failure, attempts, policy.backoff);
    switch (next.step) {
      case "pause":
        // Not the post's failure: the chat waits, the post stays owed until it works again.
        await this.deps.chatPauses.pause(platform, chatId, next.reason, now);
        if (stream) await this.deps.waits.clear(stream, platform, chatId);
        return { outcome: "paused", reason: next.reason };
      case "follow": {
        await this.deps.moveChat(platform, chatId, next.newChatId);
        const moved = { to: next.newChatId };
        return this.counted(post, next.newChatId, now, next.reason, moved);
      }
      case "retry":
        if (next.countsTry) return this.counted(post, chatId, now + next.afterMs, next.reason);
        if (stream)
          await this.wait(stream, platform, chatId, attempts, now + next.afterMs, next.reason);
        return {
          outcome: "retry",
          at: now + next.afterMs,
          chatId,
          attempts,
          counted: false,
          rateLimited: failure.kind === "rate_limited",
          reason: next.reason,
        };
    }
  }

  /** A failure that counts a try: retried from `at` in `chatId`, or given up when spent. */
  private async counted(
    post: Post,
    chatId: string,
    at: number,
    reason: string,
    moved?: Moved,
  ): Promise<Sent> {
    const { platform, attempts, policy, stream } = post;
    if (spentBy(policy, attempts)) {
      if (stream) await this.deps.waits.clear(stream, platform, chatId);
      return { outcome: "spent", at, attempts: attempts + 1, reason, ...(moved ? { moved } : {}) };
    }
    if (stream) await this.wait(stream, platform, chatId, attempts + 1, at, reason);
    return {
      outcome: "retry",
      at,
      chatId,
      attempts: attempts + 1,
      counted: true,
      rateLimited: false,
      reason,
      ...(moved ? { moved } : {}),
    };
  }

  private wait(
    stream: string,
    platform: string,
    chatId: string,
    attempts: number,
    until: number,
    reason: string,
  ): Promise<void> {
    return this.deps.waits.set({ stream, platform, chatId, attempts, until, reason });
  }

  /**
   * Sends a person a private message (a gate's notice, a proof's confirmation), bounded by
   * `timeoutMs` and `signal`, under the same send decision as posts to chats. A refusal (direct
   * messages closed, the bot blocked) is `closed`: the person's, never a chat's pause. With a
   * `stream`, the person's wait and failed tries there are kept, persisted: a person not reached
   * is not tried again before the wait is over (`waiting`), a rate limit waits its Retry-After
   * without counting, a refusal waits `policy.closedWaitMs`, and spent tries wait that long too.
   * Without one it is a single try. Never throws a send error.
   */
  async tell(post: PrivatePost): Promise<Told> {
    const sender = this.deps.senders[post.platform];
    const send = sender?.sendPrivately?.bind(sender);
    if (!sender || !send) return { outcome: "unserved" };
    const { platform, stream, policy } = post;
    const person = post.to.userId;
    const now = this.now();
    const wait =
      stream && !post.fresh ? await this.deps.waits.get(stream, platform, person) : undefined;
    if (wait && wait.until > now)
      return { outcome: "waiting", until: wait.until, reason: wait.reason };
    const attempts = wait?.attempts ?? 0;
    let failure: SendFailure;
    try {
      await boundedCall(`the ${post.what}`, post.timeoutMs, post.signal, (signal) =>
        send(post.to, post.message, signal),
      );
      if ((wait || post.fresh) && stream) await this.deps.waits.clear(stream, platform, person);
      return { outcome: "sent" };
    } catch (error) {
      failure =
        error instanceof CallCutError
          ? { kind: "transient", reason: error.message }
          : sender.classifySendError(error);
    }
    const next = sendStep(failure, attempts, policy.backoff);
    const leftAlone = now + (policy.closedWaitMs ?? 6 * 3_600_000);
    let told: Told;
    let kept: { attempts: number; until: number };
    if (next.step === "pause") {
      told = { outcome: "closed", reason: next.reason };
      kept = { attempts, until: leftAlone };
    } else if (next.step === "retry" && !next.countsTry) {
      // A rate limit: its Retry-After, no try counted.
      told = { outcome: "failed", until: now + next.afterMs, attempts, reason: next.reason };
      kept = told;
    } else if (spentBy(policy, attempts)) {
      told = { outcome: "spent", attempts: attempts + 1, reason: next.reason };
      kept = { attempts: attempts + 1, until: leftAlone };
    } else {
      const afterMs = next.step === "retry" ? next.afterMs : 0;
      told = {
        outcome: "failed",
        until: now + afterMs,
        attempts: attempts + 1,
        reason: next.reason,
      };
      kept = told;
    }
    if (stream) await this.wait(stream, platform, person, kept.attempts, kept.until, told.reason);
    return told;
  }
}

/** A private message to one person (Outbound.tell). */
export interface PrivatePost {
  platform: Platform;
  to: PrivateTarget;
  /** A reply, or plain text (ChatSender.sendPrivately). */
  message: RenderableReply | string;
  /** What it is, for the reason a cut call gives ("gate notice"). */
  what: string;
  /** How long the platform may take; a call cut short is a transient failure. */
  timeoutMs: number;
  /** Whoever asked may end it sooner (a job's stop). */
  signal?: AbortSignal | undefined;
  /** Where the person's wait and failed tries are kept (absent: a single try, nothing kept). */
  stream?: string | undefined;
  /**
   * A new message in its stream: an earlier one's wait does not hold it back and its tries count
   * from none (a failure overwrites the wait).
   */
  fresh?: boolean | undefined;
  policy: SendPolicy & {
    /** How long a person who refused (or whose tries are spent) is left alone. Default 6 h. */
    closedWaitMs?: number;
  };
}

/**
 * What became of a private message. `closed`: the person does not take the bot's messages;
 * `failed`: not delivered, to be tried again from `until` (with a stream); `spent`: its tries are
 * spent; `waiting`: not tried, an earlier failure's wait is not over.
 */
export type Told =
  | { outcome: "sent" }
  | { outcome: "unserved" }
  | { outcome: "closed"; reason: string }
  | { outcome: "failed"; until: number; attempts: number; reason: string }
  | { outcome: "spent"; attempts: number; reason: string }
  | { outcome: "waiting"; until: number; reason: string };
