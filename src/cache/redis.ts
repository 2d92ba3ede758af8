import { Redis } from "ioredis";
import type { Logger } from "../log.ts";

export interface RedisLinkOptions {
  /** redis:// or rediss://; may hold a password, which is never logged. */
  url: string;
  /** Every key the bot writes starts with it, so several bots (or tests) can share one Redis. */
  prefix: string;
  logger: Logger;
  /** A command not answered this soon fails, and the caller uses its in-process fallback. */
  commandTimeoutMs?: number;
}

/** The URL without its password (or user name), for logs. */
export function redactRedisUrl(url: string): string {
  try {
    const parsed = new URL(url);
    if (parsed.password) parsed.password = "***";
    if (parsed.username) parsed.username = "***";
    return parsed.toString();
  } catch {
    return "(an invalid Redis URL)";
  }
}

/**
 * The bot's one connection to Redis, and whether Redis is reachable now. Nothing waits for Redis:
 * while it is unreachable every command fails at once (no offline queue) and its caller falls back
 * to the in-process version, while ioredis keeps reconnecting in the background. The outage is
 * logged once when it begins and once when it ends, never per command.
 */
export class RedisLink {
  readonly client: Redis;
  readonly prefix: string;
  private readonly logger: Logger;
  private readonly where: string;
  /** An outage has been logged and has not ended yet. */
  private down = false;
  private closed = false;

  constructor(options: RedisLinkOptions) {
    this.prefix = options.prefix;
    this.logger = options.logger;
    this.where = redactRedisUrl(options.url);
    this.client = new Redis(options.url, {
      enableOfflineQueue: false,
      maxRetriesPerRequest: 0,
      commandTimeout: options.commandTimeoutMs ?? 1_000,
      connectTimeout: 2_000,
      // Reconnect for ever, at most every 2 s: an outage ends when Redis is back, not at a count.
      retryStrategy: (times) => Math.min(100 * times, 2_000),
    });
    this.client.on("ready", () => this.up());
    this.client.on("error", (error: Error) => this.failed(error));
    this.client.on("close", () => {
      if (!this.closed) this.failed(new Error("the connection to Redis closed"));
    });
  }

  /** Redis answers now (ready, and no failure since it last became ready). */
  get healthy(): boolean {
    return !this.down && this.client.status === "ready";
  }

  /** Resolves when the connection is ready, or after `timeoutMs` (false) when it is not. */
  ready(timeoutMs: number): Promise<boolean> {
    if (this.client.status === "ready") return Promise.resolve(true);
    return new Promise((resolve) => {
      const done = (ok: boolean) => {
        clearTimeout(timer);
        this.client.off("ready", onReady);
        resolve(ok);
      };
      const onReady = () => done(true);
      const timer = setTimeout(() => done(false), timeoutMs);
      this.client.on("ready", onReady);
    });
  }

  /** A command failed or the connection dropped: the outage begins (logged once). */
  failed(error: unknown): void {
    if (this.down || this.closed) return;
    this.down = true;
    this.logger.warn(
      { err: error instanceof Error ? error.message : String(error), redis: this.where },
      "Redis is unreachable: answers cache and rate limits fall back to this instance's own until it is back",
    );
  }

  private up(): void {
    if (!this.down) return;
    this.down = false;
    this.logger.info(
      { redis: this.where },
      "Redis is reachable again: shared cache and limits resume",
    );
  }

  async close(): Promise<void> {
    this.closed = true;
    try {
      await this.client.quit();
    } catch {
      this.client.disconnect();
    }
  }
}
