import { Redis, ReplyError } from "ioredis";
import type { Logger } from "../log.ts";

export interface RedisLinkOptions {
  /** redis:// or rediss://; may hold a password, which is never logged. */
  url: string;
  /** Every key the bot writes starts with it, so several bots (or tests) can share one Redis. */
  prefix: string;
  logger: Logger;
  /** A command not answered this soon fails, and counts against Redis. */
  commandTimeoutMs?: number;
  /** Commands failing in a row (timeouts, a lost connection) that open the breaker. */
  failuresToOpen?: number;
  /** How long Redis is left alone once the breaker opens, before one probe decides. */
  coolingMs?: number;
}

/** Redis was not asked: the breaker is open. The caller answers from its in-process fallback. */
export class RedisUnavailableError extends Error {
  override name = "RedisUnavailableError";
}

/**
 * What /healthz shows of Redis: its fallbacks keep the bot working, so "degraded" (not a failed
 * check), with why and since when.
 */
export type RedisHealth =
  | { redis: "ok" }
  | { redis: "degraded"; redisDown: { reason: string; since?: string | undefined } };

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

const describe = (error: unknown) => (error instanceof Error ? error.message : String(error));

/**
 * How long a probe waits for a fresh connection to become ready: past the connect timeout and the
 * reconnect delay.
 */
const PROBE_CONNECT_WAIT_MS = 4_000;

/**
 * The bot's one connection to Redis, behind a circuit breaker. Nothing waits for Redis for long:
 * a command not answered within the command timeout fails, and after `failuresToOpen` failures in
 * a row (or a lost connection) the breaker opens: for `coolingMs` every command fails at once
 * (RedisUnavailableError) and its caller uses the in-process version. A connection that stopped
 * answering without being closed (a failover, a dropped NAT flow) stays "ready" for ever, so
 * opening the breaker also drops it. After the cooling one probe (a fresh connection, a PING)
 * closes the breaker or starts another cooling. The outage is logged once when it begins and once
 * when it ends, never per command.
 */
export class RedisLink {
  readonly client: Redis;
  readonly prefix: string;
  private readonly logger: Logger;
  private readonly where: string;
  private readonly failuresToOpen: number;
  private readonly coolingMs: number;
  /** Failures since the last command that succeeded. */
  private failures = 0;
  /** The breaker is open (or probing) since then, for that reason. */
  private open: { reason: string; since: Date } | undefined;
  private probeTimer: NodeJS.Timeout | undefined;
  /** A probe is in flight: the one that runs on "ready" must not start a second. */
  private probing = false;
  private closed = false;

  constructor(options: RedisLinkOptions) {
    this.prefix = options.prefix;
    this.logger = options.logger;
    this.where = redactRedisUrl(options.url);
    this.failuresToOpen = options.failuresToOpen ?? 3;
    this.coolingMs = options.coolingMs ?? 10_000;
    this.client = new Redis(options.url, {
      enableOfflineQueue: false,
      maxRetriesPerRequest: 0,
      commandTimeout: options.commandTimeoutMs ?? 500,
      connectTimeout: 2_000,
      // Reconnect for ever, at most every 2 s: an outage ends when Redis is back, not at a count.
      retryStrategy: (times) => Math.min(100 * times, 2_000),
    });
    // The lost connection is what the breaker reports; ioredis's own event needs no other handling.
    this.client.on("error", () => {});
    this.client.on("close", () => {
      if (!this.closed) this.trip("the connection to Redis closed");
    });
    // A fresh connection came up while the breaker is open: one PING decides now, so health
    // recovers within ioredis's reconnect back-off (2 s at most) of Redis answering, not at the
    // end of the cooling (10 s by default), which a monitor polling /healthz saw as an outage.
    this.client.on("ready", () => {
      if (this.open && !this.closed && !this.probing) {
        clearTimeout(this.probeTimer);
        void this.probe();
      }
    });
  }

  /** Redis answers now: the breaker is closed and the connection ready. */
  get healthy(): boolean {
    return this.open === undefined && this.client.status === "ready";
  }

  health(): RedisHealth {
    if (this.open)
      return {
        redis: "degraded",
        redisDown: {
          reason: `${this.open.reason}; answers cache and rate limits are this instance's own until Redis answers again`,
          since: this.open.since.toISOString(),
        },
      };
    if (this.client.status !== "ready")
      return { redis: "degraded", redisDown: { reason: `connection ${this.client.status}` } };
    return { redis: "ok" };
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

  /**
   * Runs commands on Redis through the breaker: fails at once while it is open; a failure other
   * than Redis's own refusal of a command (a timeout, a lost connection) counts towards opening it.
   */
  async run<T>(commands: (client: Redis) => Promise<T>): Promise<T> {
    if (this.open) throw new RedisUnavailableError(`Redis is not asked: ${this.open.reason}`);
    try {
      const result = await commands(this.client);
      this.failures = 0;
      return result;
    } catch (error) {
      if (!(error instanceof ReplyError)) this.failed(error);
      throw error;
    }
  }

  private failed(error: unknown): void {
    if (this.open || this.closed) return;
    this.failures++;
    if (this.failures >= this.failuresToOpen)
      this.trip(`${this.failures} commands in a row failed, the last with: ${describe(error)}`);
  }

  private trip(reason: string): void {
    if (this.open || this.closed) return;
    this.open = { reason, since: new Date() };
    this.logger.warn(
      { reason, redis: this.where, coolingMs: this.coolingMs },
      "Redis is unreachable: answers cache and rate limits fall back to this instance's own until it is back",
    );
    this.drop();
    this.scheduleProbe();
  }

  /** Drops the connection (a frozen one never recovers) and lets ioredis open a fresh one. */
  private drop(): void {
    if (this.client.status === "ready" || this.client.status === "connect")
      this.client.disconnect(true);
  }

  private scheduleProbe(): void {
    clearTimeout(this.probeTimer);
    this.probeTimer = setTimeout(() => void this.probe(), this.coolingMs);
    this.probeTimer.unref();
  }

  private async probe(): Promise<void> {
    if (this.closed || !this.open || this.probing) return;
    this.probing = true;
    try {
      await this.probeOnce(this.open.since);
    } finally {
      this.probing = false;
    }
  }

  private async probeOnce(since: Date): Promise<void> {
    try {
      // A connection stuck in its handshake (opened while the network was frozen) never ends.
      if (this.client.status === "connect") this.client.disconnect(true);
      if (!(await this.ready(PROBE_CONNECT_WAIT_MS)))
        throw new Error(`no connection to Redis within ${PROBE_CONNECT_WAIT_MS} ms`);
      await this.client.ping();
    } catch (error) {
      if (this.closed) return;
      this.open = { reason: `the probe failed: ${describe(error)}`, since };
      this.drop();
      this.scheduleProbe();
      return;
    }
    if (this.closed) return;
    this.open = undefined;
    this.failures = 0;
    this.logger.info(
      { redis: this.where },
      "Redis is reachable again: shared cache and limits resume",
    );
  }

  async close(): Promise<void> {
    this.closed = true;
    clearTimeout(this.probeTimer);
    if (this.open || this.client.status !== "ready") {
      this.client.disconnect();
      return;
    }
    try {
      await this.client.quit();
    } catch {
      this.client.disconnect();
    }
  }
}
