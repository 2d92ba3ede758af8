import { type AddressInfo, connect, createServer, type Server, type Socket } from "node:net";

/**
 * A TCP proxy on loopback that injects the faults a real network makes, in front of any server
 * (PostgreSQL, Redis, a platform): the clients behind it see them, and nobody else does.
 *
 * - `freeze()`: every open connection stops carrying bytes in both directions, with no FIN and no
 *   RST (a failover, a NAT table that dropped the flow, a host that stopped). New connections are
 *   accepted and frozen too, unless `{ refuseNew: true }`: then they are reset at once.
 * - `thaw()`: connections opened from now on work again; the frozen ones stay frozen for ever, as
 *   they would on a real network (their bytes are gone), until `reset()` or `close()`.
 * - `reset()`: every open connection is destroyed (RST-like), new ones work.
 * - `slow(ms)`: every chunk in either direction is held `ms` before it is passed on (0 restores).
 * - `cut()` / `restore()`: stop listening and drop everything; listen again on the same port.
 */
export class FaultProxy {
  private server: Server | undefined;
  private readonly pairs = new Set<{ client: Socket; upstream: Socket; frozen: boolean }>();
  private frozen = false;
  private refuseNew = false;
  private delayMs = 0;
  port = 0;
  /** Connections accepted since start (refused ones aside): a test can act right after one. */
  accepted = 0;

  constructor(
    private readonly target: { host: string; port: number },
    private readonly listenPort = 0,
  ) {}

  /** A proxy in front of the server of a `postgres://` or `redis://` URL (default port given). */
  static forUrl(url: string, defaultPort: number): FaultProxy {
    const { hostname, port } = new URL(url);
    return new FaultProxy({ host: hostname || "127.0.0.1", port: Number(port || defaultPort) });
  }

  /** The same URL, pointing at the proxy. */
  urlFor(url: string): string {
    const u = new URL(url);
    u.hostname = "127.0.0.1";
    u.port = String(this.port);
    return u.toString();
  }

  get connections(): number {
    return this.pairs.size;
  }

  async start(): Promise<void> {
    const server = createServer((client) => this.accept(client));
    await new Promise<void>((resolve) =>
      server.listen(this.port || this.listenPort, "127.0.0.1", resolve),
    );
    this.port = (server.address() as AddressInfo).port;
    this.server = server;
  }

  private accept(client: Socket): void {
    if (this.frozen && this.refuseNew) {
      client.resetAndDestroy();
      return;
    }
    this.accepted++;
    const upstream = connect(this.target);
    const pair = { client, upstream, frozen: this.frozen };
    this.pairs.add(pair);
    const end = () => {
      client.destroy();
      upstream.destroy();
      this.pairs.delete(pair);
    };
    for (const socket of [client, upstream]) {
      socket.on("error", end);
      socket.on("close", end);
    }
    const forward = (from: Socket, to: Socket) => {
      from.on("data", (chunk: Buffer) => {
        // A frozen connection swallows its bytes: they never arrive, as on a dead network path.
        if (pair.frozen) return;
        if (this.delayMs > 0)
          setTimeout(() => {
            if (!pair.frozen && !to.destroyed) to.write(chunk);
          }, this.delayMs);
        else to.write(chunk);
      });
    };
    forward(client, upstream);
    forward(upstream, client);
  }

  freeze(options: { refuseNew?: boolean } = {}): void {
    this.frozen = true;
    this.refuseNew = options.refuseNew ?? false;
    for (const pair of this.pairs) pair.frozen = true;
  }

  thaw(): void {
    this.frozen = false;
    this.refuseNew = false;
  }

  reset(): void {
    for (const pair of [...this.pairs]) {
      pair.client.resetAndDestroy();
      pair.upstream.destroy();
    }
    this.pairs.clear();
  }

  slow(ms: number): void {
    this.delayMs = ms;
  }

  async cut(): Promise<void> {
    const server = this.server;
    this.server = undefined;
    this.reset();
    if (server) await new Promise<void>((resolve) => server.close(() => resolve()));
  }

  restore(): Promise<void> {
    return this.start();
  }

  async close(): Promise<void> {
    this.thaw();
    await this.cut();
  }
}
