import { createServer, type IncomingMessage, type Server, type ServerResponse } from "node:http";
import type { Socket } from "node:net";
import { Gauge, type Registry } from "prom-client";
import type { Logger } from "../log.ts";
import { DEFAULT_HTTP_LIMITS, type HttpLimits } from "./limits.ts";

export type { HttpLimits } from "./limits.ts";

/** What a route reads its request's body with; see HttpHost's `readBody`. */
export interface RequestBody {
  /**
   * The whole body, or undefined when it was refused and answered already (larger than
   * `maxBytes`: 413; over the host's budget for bodies not yet authenticated: 503; cut off).
   * `unauthenticated`: nothing yet tells this request comes from whom it claims (a signature
   * over the body is still to check), so its bytes count against the shared budget.
   */
  read(maxBytes: number, trust: "authenticated" | "unauthenticated"): Promise<Buffer | undefined>;
}

/** Answers one request; a thrown error is logged and answered 500. */
export type RouteHandler = (
  req: IncomingMessage,
  res: ServerResponse,
  body: RequestBody,
) => Promise<void> | void;

export interface HttpRoute {
  /**
   * The exact path, without query string ("/healthz", "/telegram/webhook"); with `prefix`, a
   * path ending in "/" that every path under it goes to ("/verify/" serves "/verify/<token>").
   */
  path: string;
  /** Serve every path under `path` too (exact routes still win over a prefix). */
  prefix?: boolean;
  handle: RouteHandler;
}

export interface HttpStats {
  connections: number;
  /** Connections closed at once because `maxConnections` were open. */
  refusedConnections: number;
  /** Bytes of unauthenticated bodies held now, and the most ever held at once. */
  unauthenticatedBodyBytes: number;
  peakUnauthenticatedBodyBytes: number;
  /** Unauthenticated bodies refused (503) to keep within the budget. */
  shedBodies: number;
  /** Connections closed because a request's headers or body did not arrive in time. */
  timedOutRequests: number;
}

/** An unauthenticated body being read: its bytes so far, and how to refuse it. */
interface PendingBody {
  bytes: number;
  shed(): void;
}

/** A connection's own deadlines (see HttpHost.watch). */
interface Deadlines {
  /** When the connection opened: its first request started then, as Node counts it. */
  opened: number;
  /** Requests received on it so far. */
  requests: number;
  /** Requests received whose answer is not finished yet (pipelined ones included). */
  answering: Set<ServerResponse>;
  /** Closes the connection unless the next request's headers arrive in time. */
  headers: NodeJS.Timeout | undefined;
  /** One per request whose body may still be arriving. */
  bodies: Set<NodeJS.Timeout>;
}

/** What Node answers a request it timed out; sent only when no answer has begun on the connection. */
const REQUEST_TIMEOUT_RESPONSE = "HTTP/1.1 408 Request Timeout\r\nConnection: close\r\n\r\n";

/**
 * How much later than the host's own deadlines Node's request timeout fires: it stays a second
 * line, and the host's counter sees the timeouts.
 */
const NODE_BACKSTOP_MS = 1_000;

/**
 * The bot's one HTTP server, on one port: the operators' /healthz and /metrics, the Telegram
 * webhook, and whatever else mounts a route (`host.mount(route)`). Paths nobody mounted are 404.
 *
 * Bounded against a hostile client: headers and whole requests must arrive within their timeouts,
 * enforced by the host's own timers (Node's request timeout misses requests that started on the
 * same reading of a coarse monotonic clock: see `watch`), connections are capped, and bodies not yet authenticated (Discord's interactions before their
 * signature is checked) share one byte budget. Over the budget the body being read the longest is
 * refused 503: Discord sends its few kilobytes at once, so the oldest partial body is the one a
 * slow sender holds.
 */
export class HttpHost {
  private readonly routes = new Map<string, RouteHandler>();
  /** Prefix routes, the longest first: the most specific one serves a path. */
  private prefixes: { path: string; handle: RouteHandler }[] = [];
  private readonly limits: HttpLimits;
  private server: Server | undefined;
  /** Insertion order is reading order: the first is the oldest. */
  private readonly pending = new Set<PendingBody>();
  private held = 0;
  private peak = 0;
  private shed = 0;
  private connections = 0;
  private refused = 0;
  private timedOut = 0;
  private readonly deadlines = new WeakMap<Socket, Deadlines>();

  constructor(
    private readonly logger: Logger,
    options: { limits?: Partial<HttpLimits>; registry?: Registry } = {},
  ) {
    this.limits = { ...DEFAULT_HTTP_LIMITS, ...options.limits };
    if (options.registry) this.registerMetrics(options.registry);
  }

  /** Serves a route; mounting a path twice is a wiring bug. */
  mount(route: HttpRoute): void {
    const { path, handle } = route;
    if (this.routes.has(path) || this.prefixes.some((p) => p.path === path))
      throw new Error(`HTTP path mounted twice: ${path}`);
    if (!route.prefix) {
      this.routes.set(path, handle);
      return;
    }
    if (!path.endsWith("/")) throw new Error(`HTTP prefix must end with "/": ${path}`);
    this.prefixes = [...this.prefixes, { path, handle }].sort(
      (a, b) => b.path.length - a.path.length,
    );
  }

  /** The paths served: exact ones as they are, prefixes followed by "*". */
  get paths(): string[] {
    return [...this.routes.keys(), ...this.prefixes.map((p) => `${p.path}*`)];
  }

  /** The port listened on (the one the system chose when asked for 0); undefined before listen. */
  get port(): number | undefined {
    const address = this.server?.address();
    return typeof address === "object" && address ? address.port : undefined;
  }

  get listening(): boolean {
    return this.server?.listening ?? false;
  }

  stats(): HttpStats {
    return {
      connections: this.connections,
      refusedConnections: this.refused,
      unauthenticatedBodyBytes: this.held,
      peakUnauthenticatedBodyBytes: this.peak,
      shedBodies: this.shed,
      timedOutRequests: this.timedOut,
    };
  }

  async listen(port: number, host: string): Promise<void> {
    const { headersTimeoutMs, requestTimeoutMs, keepAliveTimeoutMs, maxConnections } = this.limits;
    const server = createServer(
      {
        // The host's own timers (watch) close late requests; Node's check stays behind them as a
        // second line. Node refuses a header timeout longer than the request's.
        headersTimeout: Math.min(headersTimeoutMs, requestTimeoutMs) + NODE_BACKSTOP_MS,
        requestTimeout: requestTimeoutMs + NODE_BACKSTOP_MS,
        keepAliveTimeout: keepAliveTimeoutMs,
        // Node looks for expired requests every 30 s by default: a short timeout would be
        // overrun by that much.
        connectionsCheckingInterval: Math.max(
          25,
          Math.min(1_000, Math.floor(Math.min(headersTimeoutMs, requestTimeoutMs) / 4)),
        ),
      },
      (req, res) => {
        this.received(req, res);
        this.dispatch(req, res);
      },
    );
    server.maxConnections = maxConnections;
    server.on("connection", (socket: Socket) => {
      this.connections++;
      this.watch(socket);
      socket.once("close", () => {
        this.connections--;
        this.unwatch(socket);
      });
    });
    server.on("drop", () => {
      this.refused++;
    });
    await new Promise<void>((resolve, reject) => {
      server.once("error", reject);
      server.listen(port, host, () => resolve());
    });
    this.server = server;
    this.logger.info({ host, port: this.port, paths: this.paths }, "http listening");
  }

  /**
   * Starts a connection's own deadlines. Node times requests out itself, but keeps the requests it
   * watches in a set ordered by the monotonic time each started, and two that started on the same
   * reading are one entry to it: on a host whose clock ticks coarsely most of a burst of
   * connections was never timed out (1,476 of 1,500 stalled bodies open after 60 s). So each
   * connection has timers of its own: its first request's headers within the headers timeout of
   * the connection opening, and each request's body within the request timeout of its start
   * (the opening for the first request, as Node counts it; its headers' arrival for the next ones,
   * whose headers must come within the keep-alive and headers timeouts of the last answer).
   */
  private watch(socket: Socket): void {
    const deadlines: Deadlines = {
      opened: performance.now(),
      requests: 0,
      answering: new Set(),
      headers: undefined,
      bodies: new Set(),
    };
    this.deadlines.set(socket, deadlines);
    this.awaitHeaders(
      socket,
      deadlines,
      Math.min(this.limits.headersTimeoutMs, this.limits.requestTimeoutMs),
    );
  }

  private unwatch(socket: Socket): void {
    const deadlines = this.deadlines.get(socket);
    if (!deadlines) return;
    this.deadlines.delete(socket);
    clearTimeout(deadlines.headers);
    for (const timer of deadlines.bodies) clearTimeout(timer);
    deadlines.bodies.clear();
    deadlines.answering.clear();
  }

  private awaitHeaders(socket: Socket, deadlines: Deadlines, withinMs: number): void {
    clearTimeout(deadlines.headers);
    deadlines.headers = setTimeout(() => this.expire(socket), withinMs);
    deadlines.headers.unref();
  }

  /** A request's headers arrived: its body has until the request deadline. */
  private received(req: IncomingMessage, res: ServerResponse): void {
    const socket = req.socket;
    const deadlines = this.deadlines.get(socket);
    if (!deadlines) return;
    clearTimeout(deadlines.headers);
    deadlines.headers = undefined;
    const started = deadlines.requests === 0 ? deadlines.opened : performance.now();
    deadlines.requests++;
    deadlines.answering.add(res);
    const body = setTimeout(
      () => {
        deadlines.bodies.delete(body);
        if (!req.complete) this.expire(socket);
      },
      Math.max(0, this.limits.requestTimeoutMs - (performance.now() - started)),
    );
    body.unref();
    deadlines.bodies.add(body);
    res.once("finish", () => {
      deadlines.answering.delete(res);
      if (req.complete) {
        clearTimeout(body);
        deadlines.bodies.delete(body);
      }
      // Idle until the next request: keep-alive's wait (Node closes an idle connection a second
      // past it), then its headers' own.
      if (deadlines.answering.size === 0 && !socket.destroyed && this.deadlines.has(socket))
        this.awaitHeaders(
          socket,
          deadlines,
          this.limits.keepAliveTimeoutMs +
            NODE_BACKSTOP_MS +
            Math.min(this.limits.headersTimeoutMs, this.limits.requestTimeoutMs),
        );
    });
  }

  /** Closes a connection whose request came too slowly, answering 408 as Node does. */
  private expire(socket: Socket): void {
    if (socket.destroyed) return;
    this.timedOut++;
    const deadlines = this.deadlines.get(socket);
    const begun = [...(deadlines?.answering ?? [])].some((res) => res.headersSent);
    if (socket.writable && !begun) socket.write(REQUEST_TIMEOUT_RESPONSE);
    socket.destroy();
  }

  private dispatch(req: IncomingMessage, res: ServerResponse): void {
    const path = (req.url ?? "/").split("?")[0] ?? "/";
    const handle =
      this.routes.get(path) ?? this.prefixes.find((p) => path.startsWith(p.path))?.handle;
    if (!handle) {
      req.resume();
      res.writeHead(404, { "content-type": "text/plain" }).end("not found\n");
      return;
    }
    const body: RequestBody = {
      read: (maxBytes, trust) => this.readBody(req, res, maxBytes, trust),
    };
    Promise.resolve()
      .then(() => handle(req, res, body))
      .catch((error: unknown) => {
        this.logger.error({ err: error, path }, "http request failed");
        if (!res.headersSent) res.writeHead(500).end();
      });
  }

  private readBody(
    req: IncomingMessage,
    res: ServerResponse,
    maxBytes: number,
    trust: "authenticated" | "unauthenticated",
  ): Promise<Buffer | undefined> {
    const refuse = (status: number) => {
      if (!res.headersSent) res.writeHead(status, { connection: "close" }).end();
      // The rest of the body is never read: the connection goes once the answer is out.
      if (res.writableFinished) req.socket.destroy();
      else res.once("finish", () => req.socket.destroy());
    };
    if (Number(req.headers["content-length"] ?? 0) > maxBytes) {
      refuse(413);
      return Promise.resolve(undefined);
    }
    return new Promise((resolve) => {
      const chunks: Buffer[] = [];
      let size = 0;
      let settled = false;
      const pending: PendingBody | undefined =
        trust === "unauthenticated"
          ? {
              bytes: 0,
              shed: () => {
                this.shed++;
                finish(undefined, 503);
              },
            }
          : undefined;
      const finish = (result: Buffer | undefined, status?: number) => {
        if (settled) return;
        settled = true;
        req.off("data", onData);
        req.off("end", onEnd);
        req.off("close", onClose);
        if (pending) {
          this.pending.delete(pending);
          this.held -= pending.bytes;
          pending.bytes = 0;
        }
        chunks.length = 0;
        if (status !== undefined) refuse(status);
        resolve(result);
      };
      const onData = (chunk: Buffer) => {
        size += chunk.length;
        if (size > maxBytes) return finish(undefined, 413);
        if (pending && !this.admit(pending, chunk.length)) return;
        chunks.push(chunk);
      };
      const onEnd = () => finish(Buffer.concat(chunks));
      const onClose = () => finish(undefined);
      if (pending) this.pending.add(pending);
      req.on("data", onData);
      req.on("end", onEnd);
      req.on("close", onClose);
    });
  }

  /**
   * Counts `bytes` more of an unauthenticated body, refusing the oldest bodies (possibly this
   * one) until they fit the budget; false when this body itself was refused.
   */
  private admit(body: PendingBody, bytes: number): boolean {
    while (this.held + bytes > this.limits.unauthenticatedBodyBytes) {
      const oldest = this.pending.values().next().value;
      if (oldest === undefined) break;
      oldest.shed();
      if (oldest === body) return false;
    }
    if (this.held + bytes > this.limits.unauthenticatedBodyBytes) return false;
    body.bytes += bytes;
    this.held += bytes;
    this.peak = Math.max(this.peak, this.held);
    return true;
  }

  private registerMetrics(registry: Registry): void {
    const read = (name: string, help: string, value: (stats: HttpStats) => number) => {
      const host = this;
      new Gauge({
        name,
        help,
        registers: [registry],
        collect() {
          this.set(value(host.stats()));
        },
      });
    };
    read("bot_http_connections", "Open HTTP connections", (s) => s.connections);
    read(
      "bot_http_refused_connections",
      "HTTP connections closed at once since start: HTTP_MAX_CONNECTIONS were open",
      (s) => s.refusedConnections,
    );
    read(
      "bot_http_unauthenticated_body_bytes",
      "Bytes of request bodies held before their authentication (Discord's signature check)",
      (s) => s.unauthenticatedBodyBytes,
    );
    read(
      "bot_http_unauthenticated_body_bytes_peak",
      "The most bytes of unauthenticated request bodies held at once since start",
      (s) => s.peakUnauthenticatedBodyBytes,
    );
    read(
      "bot_http_shed_bodies",
      "Unauthenticated request bodies refused (503) since start to stay within HTTP_UNAUTHENTICATED_BODY_BYTES",
      (s) => s.shedBodies,
    );
    read(
      "bot_http_timed_out_requests",
      "HTTP connections closed since start because a request's headers or body did not arrive within HTTP_HEADERS_TIMEOUT_MS / HTTP_REQUEST_TIMEOUT_MS",
      (s) => s.timedOutRequests,
    );
  }

  async close(): Promise<void> {
    const server = this.server;
    if (!server) return;
    this.server = undefined;
    const closed = new Promise<void>((resolve) => server.close(() => resolve()));
    // close() alone waits for keep-alive connections (scrapers keep them open).
    server.closeAllConnections();
    await closed;
  }
}

/**
 * The bot's own address for the pages it serves (/verify): PUBLIC_URL when set (without its
 * trailing slashes), else the loopback host on the port listened on.
 */
export function publicBaseUrl(publicUrl: string | undefined, port: number): string {
  return publicUrl ? publicUrl.replace(/\/+$/, "") : `http://127.0.0.1:${port}`;
}
