import { AsyncResource } from "node:async_hooks";
import type { Logger } from "../log.ts";
import type { CommandStore, Invocation } from "./command.ts";

/**
 * The runtime's work after answers (logs, counts, what commands put off), run together after the
 * answers, and the paused chats being resumed after them (chatWorks).
 */
export class AfterReplies {
  /** Work after answers: run together, after the answers. */
  private readonly tasks: (() => void)[] = [];
  /** Resolves when the work in `tasks` has run; undefined when none is waiting. */
  private running: Promise<void> | undefined;
  /** Paused chats being resumed after answers (chatWorks). */
  private readonly resuming = new Set<Promise<unknown>>();

  constructor(
    /** Where a task that fails is told of. */
    private readonly logger: Logger,
    /** The store whose chat pauses a used chat lifts (read at each use). */
    private readonly store: Pick<CommandStore, "chatPauses">,
    /** The runtime's work in flight, which drain() waits for: a resume joins it. */
    private readonly inFlight: Set<Promise<unknown>>,
  ) {}

  /** Whether work waits to run after the answers given. */
  get waiting(): boolean {
    return this.tasks.length > 0;
  }

  /**
   * Resolves once the work put after the answers given so far has run: their log lines and
   * counts (onOutcome), what their commands put off (ctx.afterReply), and a paused chat's resume.
   */
  async settled(): Promise<void> {
    await this.running;
    await Promise.allSettled([...this.resuming]);
  }

  /**
   * Puts `task` after the answer: every such task of the answers given in this turn of the event
   * loop runs on the next one (setImmediate), once the adapters have sent the answers (the sends
   * start in the promise callbacks that get them, before the loop turns). The answer goes out
   * without waiting for logs, counts or bookkeeping.
   */
  add(task: () => void): void {
    // In the answer's own async context: what a task logs or tells belongs to its invocation.
    this.tasks.push(AsyncResource.bind(task));
    if (this.running) return;
    this.running = new Promise<void>((resolve) =>
      setImmediate(() => {
        this.runNow();
        resolve();
      }),
    );
  }

  /** Runs the work waiting after answers now (a new command must find what the last remembered). */
  runNow(): void {
    this.running = undefined;
    for (let task = this.tasks.shift(); task; task = this.tasks.shift()) {
      try {
        task();
      } catch (error) {
        this.logger.warn({ err: error }, "work after an answer failed");
      }
    }
  }

  /**
   * The bot was used in the chat (a command or a button), so the chat works again: the pause it
   * got when it refused the bot is lifted, and with it every feature's work for the chat (alerts,
   * digests, watches; a chat that still refuses pauses again at its next send). After the
   * command ran, so /subscriptions, /watch list and /digest list show the pause; not awaited by
   * the answer, only by stop(). After the answer (see add): SQLite's reads are synchronous, and
   * the answer goes out before them.
   */
  chatWorks(invocation: Invocation, logger: Logger): void {
    const { platform, chat } = invocation;
    const { chatPauses } = this.store;
    if (!chatPauses) return;
    const resuming = Promise.resolve()
      .then(() => chatPauses.resume(platform, chat.id))
      .then(
        (resumed) => {
          if (resumed)
            logger.info(
              "the bot is used in the chat again: its alerts, digests and watches resume",
            );
        },
        (error: unknown) => logger.warn({ err: error }, "could not resume the paused chat"),
      );
    this.inFlight.add(resuming);
    this.resuming.add(resuming);
    resuming.finally(() => {
      this.inFlight.delete(resuming);
      this.resuming.delete(resuming);
    });
  }
}
