import { createServer, type IncomingMessage, type Server, type ServerResponse } from "node:http";
import type { Logger } from "../log.ts";

/** Answers one request; a thrown error is logged and answered 500. */
export type RouteHandler = (req: IncomingMessage, res: ServerResponse) => Promise<void> | void;

export interface HttpRoute {
  /** The exact path, without query string ("/healthz", "/telegram/webhook"). */
  path: string;
  handle: RouteHandler;
}

/**
 * The bot's one HTTP server, on one port: the operators' /healthz and /metrics, the Telegram
 * webhook, and whatever else mounts a route (`host.mount(route)`). Paths nobody mounted are 404.
 */
export class HttpHost {
  private readonly routes = new Map<string, RouteHandler>();
  private server: Server | undefined;

  constructor(private readonly logger: Logger) {}

  /** Serves a route; mounting a path twice is a wiring bug. */
  mount(route: HttpRoute): void {
    if (this.routes.has(route.path)) throw new Error(`HTTP path mounted twice: ${route.path}`);
    this.routes.set(route.path, route.handle);
  }

  get paths(): string[] {
    return [...this.routes.keys()];
  }

  get listening(): boolean {
    return this.server?.listening ?? false;
  }

  async listen(port: number, host: string): Promise<void> {
    const server = createServer((req, res) => this.dispatch(req, res));
    await new Promise<void>((resolve, reject) => {
      server.once("error", reject);
      server.listen(port, host, () => resolve());
    });
    this.server = server;
    this.logger.info({ host, port, paths: this.paths }, "http listening");
  }

  private dispatch(req: IncomingMessage, res: ServerResponse): void {
    const path = (req.url ?? "/").split("?")[0] ?? "/";
    const handle = this.routes.get(path);
    if (!handle) {
      req.resume();
      res.writeHead(404, { "content-type": "text/plain" }).end("not found\n");
      return;
    }
    Promise.resolve()
      .then(() => handle(req, res))
      .catch((error: unknown) => {
        this.logger.error({ err: error, path }, "http request failed");
        if (!res.headersSent) res.writeHead(500).end();
      });
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
