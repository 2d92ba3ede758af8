import { write, writeSync } from "node:fs";

/**
 * What a log destination says of itself: /healthz shows `failing`, /metrics the counts.
 */
export interface LogDestinationState {
  /** What the logs go to ("log file /data/bot.log", "stderr"). */
  name: string;
  /** Why its lines are dropped now (a write failed: ENOSPC, EIO…), or undefined while written. */
  failing: string | undefined;
  /** Writes that failed since start (each begins a time of dropped lines, or prolongs one). */
  failures: number;
  /** Lines dropped since start: while failing, or beyond the buffer while the fd would block. */
  dropped: number;
}

export interface LogDestinationOptions {
  /** What the logs go to, as told in health and in the notices. */
  name: string;
  /** Lines are gathered up to this many bytes per write... */
  minLength?: number;
  /** ...or for at most this long. */
  flushMs?: number;
  /** While failing, a write is tried again this often. */
  retryMs?: number;
  /** Bytes kept while the fd would block (a full pipe); beyond them lines are dropped. */
  maxBuffered?: number;
  /**
   * Told once when writes start failing and once when they succeed again (main.ts prints it on
   * stderr when the logs go to a file). Never called from a write on the caller's stack.
   */
  notice?: (line: string) => void;
  /** Epoch ms for the line written when the destination recovers (default Date.now). */
  now?: () => number;
}

/** Errors that mean "not now" (a non-blocking pipe that is full), not a failed destination. */
const WOULD_BLOCK = new Set(["EAGAIN", "EWOULDBLOCK", "EBUSY"]);

const codeOf = (error: unknown): string =>
  String((error as NodeJS.ErrnoException | null)?.code ?? (error as Error)?.message ?? error);

/**
 * pino's destination, written by the bot itself (in place of sonic-boom, whose failed write is an
 * uncaught 'error' and whose flushSync retries a failed write for ever on the main thread: a full
 * disk hung the bot, deaf to SIGTERM). Lines are gathered up to 4 KiB or 200 ms per write, one
 * write in flight at a time. A write that fails (ENOSPC, EIO, EBADF…) drops what it carried and
 * marks the destination failing: lines are then dropped and counted, never queued, and a write is
 * tried again every `retryMs` (a line saying how many were lost). Once it succeeds, the lines go
 * to the file again. Nothing here throws, emits or blocks: `flushSync` (pino's, at a fatal line)
 * makes one attempt, none while failing.
 */
export class LogDestination {
  private chunks: string[] = [];
  private bytes = 0;
  private writing = false;
  /** The bytes of a write not all taken (a partial write): written before anything else. */
  private rest: Buffer | undefined;
  private failingSince: number | undefined;
  private why: string | undefined;
  /** The file ends in the middle of a line (a partial write): the next line starts a new one. */
  private lineOpen = false;
  private failures = 0;
  private dropped = 0;
  /** Dropped at the last recovery: the recovery line says how many since. */
  private droppedBefore = 0;
  private readonly flushTimer: NodeJS.Timeout;
  private retryTimer: NodeJS.Timeout | undefined;
  private waiting: (() => void)[] = [];
  private readonly minLength: number;
  private readonly retryMs: number;
  private readonly maxBuffered: number;
  private readonly now: () => number;

  constructor(
    private readonly fd: number,
    private readonly options: LogDestinationOptions,
  ) {
    this.minLength = options.minLength ?? 4096;
    this.retryMs = options.retryMs ?? 5_000;
    this.maxBuffered = options.maxBuffered ?? 4 * 1024 * 1024;
    this.now = options.now ?? Date.now;
    this.flushTimer = setInterval(() => this.writeOut(), options.flushMs ?? 200);
    this.flushTimer.unref();
  }

  state(): LogDestinationState {
    return {
      name: this.options.name,
      failing: this.why,
      failures: this.failures,
      dropped: this.dropped,
    };
  }

  /** pino's: one line (with its newline). */
  write(line: string): void {
    if (this.why !== undefined || this.bytes + line.length > this.maxBuffered) {
      this.dropped++;
      return;
    }
    this.chunks.push(line);
    this.bytes += line.length;
    if (this.bytes >= this.minLength) this.writeOut();
  }

  /** Writes what is gathered; `done` once it is written, or dropped, within 2 s whatever. */
  flush(done?: (error?: Error) => void): void {
    if (done) {
      let called = false;
      const once = () => {
        if (called) return;
        called = true;
        clearTimeout(bound);
        done();
      };
      const bound = setTimeout(once, 2_000);
      bound.unref();
      this.waiting.push(once);
    }
    this.writeOut();
    this.settleWaiting();
  }

  /**
   * pino's, after a fatal line: one synchronous attempt at what is gathered, none while failing,
   * never a retry (a full disk would otherwise hold the main thread for ever).
   */
  flushSync(): void {
    if (this.why !== undefined || this.writing) return;
    const buffer = this.take();
    if (buffer === undefined) return;
    try {
      const written = writeSync(this.fd, buffer);
      this.lineOpen = written < buffer.length;
      if (this.lineOpen) this.rest = buffer.subarray(written);
    } catch (error) {
      if (WOULD_BLOCK.has(codeOf(error))) this.rest = buffer;
      else this.fail(error, buffer);
    }
  }

  /** Stops the timers (tests); the fd is the caller's. */
  close(): void {
    clearInterval(this.flushTimer);
    clearTimeout(this.retryTimer);
  }

  /** What is to be written next, as one buffer (undefined when nothing is). */
  private take(): Buffer | undefined {
    if (this.rest !== undefined) {
      const rest = this.rest;
      this.rest = undefined;
      return rest;
    }
    if (this.chunks.length === 0) return undefined;
    const buffer = Buffer.from(this.chunks.join(""));
    this.chunks = [];
    this.bytes = 0;
    return buffer;
  }

  private writeOut(): void {
    if (this.writing || this.why !== undefined) return;
    const buffer = this.take();
    if (buffer === undefined) return;
    this.writing = true;
    write(this.fd, buffer, 0, buffer.length, null, (error, written) => {
      this.writing = false;
      if (error) {
        if (WOULD_BLOCK.has(codeOf(error))) this.rest = buffer;
        else this.fail(error, buffer);
      } else if (written < buffer.length) {
        this.lineOpen = true;
        this.rest = buffer.subarray(written);
        // Some went: the rest at once (the next write says if there is no room left).
        setImmediate(() => this.writeOut());
      } else {
        this.lineOpen = false;
        if (this.bytes >= this.minLength) setImmediate(() => this.writeOut());
      }
      this.settleWaiting();
    });
  }

  private settleWaiting(): void {
    if (this.writing) return;
    if (this.why === undefined && (this.rest !== undefined || this.chunks.length > 0)) return;
    for (const done of this.waiting.splice(0)) done();
  }

  /** A failed write: its lines and all gathered are dropped, and a retry is set. */
  private fail(error: unknown, buffer: Buffer): void {
    this.failures++;
    this.dropped += countLines(buffer) + this.chunks.length;
    this.chunks = [];
    this.bytes = 0;
    this.rest = undefined;
    if (this.why !== undefined) return;
    this.failingSince = this.now();
    const every = `every ${this.retryMs / 1000} s`;
    const what = `the ${this.options.name} (${codeOf(error)})`;
    this.why = `cannot write ${what}: its lines are dropped, trying again ${every}`;
    this.options.notice?.(
      `Cannot write ${what}: its lines are dropped until it can be written again (tried ${every})`,
    );
    this.scheduleRetry();
  }

  private scheduleRetry(): void {
    clearTimeout(this.retryTimer);
    this.retryTimer = setTimeout(() => this.retry(), this.retryMs);
    this.retryTimer.unref();
  }

  /** While failing: tries the line that says how many were lost; back to writing if it goes. */
  private retry(): void {
    if (this.why === undefined) return;
    const lost = this.dropped - this.droppedBefore;
    const line = `${this.lineOpen ? "\n" : ""}${JSON.stringify({
      level: 40,
      time: this.now(),
      dropped: lost,
      since: new Date(this.failingSince ?? this.now()).toISOString(),
      msg: `log file writable again: ${lost} lines were dropped while it could not be written`,
    })}\n`;
    const buffer = Buffer.from(line);
    this.writing = true;
    write(this.fd, buffer, 0, buffer.length, null, (error, written) => {
      this.writing = false;
      if (error || written < buffer.length) {
        // Not yet (or only part: the rest of the line is for the next try).
        this.failures += error ? 1 : 0;
        if (!error && written > 0) this.lineOpen = true;
        this.scheduleRetry();
        return;
      }
      this.why = undefined;
      this.lineOpen = false;
      this.droppedBefore = this.dropped;
      this.failingSince = undefined;
      this.options.notice?.(
        `The ${this.options.name} is written again (${lost} lines were dropped)`,
      );
      this.writeOut();
    });
  }
}

function countLines(buffer: Buffer): number {
  let lines = 0;
  for (let at = buffer.indexOf(10); at !== -1; at = buffer.indexOf(10, at + 1)) lines++;
  return Math.max(lines, 1);
}
