import { randomBytes } from "node:crypto";
import { type AddressInfo, connect, createServer, type Server, type Socket } from "node:net";
import { Redis } from "ioredis";
import { REDIS_URL } from "./services.ts";

/** A key prefix no other test (or helper running tests beside us) uses. */
export function testPrefix(what: string): string {
  return `test:${what}:${randomBytes(6).toString("hex")}:`;
}

/** Deletes every key under the prefix (never FLUSHALL: the server is shared). */
export async function deleteKeys(prefix: string): Promise<void> {
  const redis = new Redis(REDIS_URL, { lazyConnect: true, maxRetriesPerRequest: 1 });
  try {
    await redis.connect();
    let cursor = "0";
    do {
      const [next, keys] = await redis.scan(cursor, "MATCH", `${prefix}*`, "COUNT", 500);
      cursor = next;
      if (keys.length > 0) await redis.del(...keys);
    } while (cursor !== "0");
  } finally {
    redis.disconnect();
  }
}

/** Counts the keys under the prefix. */
export async function countKeys(prefix: string, pattern = "*"): Promise<number> {
  const redis = new Redis(REDIS_URL, { lazyConnect: true, maxRetriesPerRequest: 1 });
  try {
    await redis.connect();
    let cursor = "0";
    let count = 0;
    do {
      const [next, keys] = await redis.scan(cursor, "MATCH", `${prefix}${pattern}`, "COUNT", 500);
      cursor = next;
      count += keys.length;
    } while (cursor !== "0");
    return count;
  } finally {
    redis.disconnect();
  }
}

/**
 * A TCP proxy on loopback in front of the shared Redis: `cut()` drops every connection and
 * refuses new ones (Redis "goes down" for the clients behind it, and only for them), `restore()`
 * listens again on the same port.
 */
export class RedisProxy {
  private server: Server | undefined;
  private readonly sockets = new Set<Socket>();
  port = 0;

  get url(): string {
    return `redis://127.0.0.1:${this.port}`;
  }

  async start(): Promise<void> {
    const target = new URL(REDIS_URL);
    const server = createServer((client) => {
      const upstream = connect({
        host: target.hostname || "127.0.0.1",
        port: Number(target.port || 6379),
      });
      for (const socket of [client, upstream]) {
        this.sockets.add(socket);
        socket.on("close", () => this.sockets.delete(socket));
        socket.on("error", () => {
          client.destroy();
          upstream.destroy();
        });
      }
      client.pipe(upstream).pipe(client);
    });
    await new Promise<void>((resolve) => server.listen(this.port, "127.0.0.1", resolve));
    this.port = (server.address() as AddressInfo).port;
    this.server = server;
  }

  async cut(): Promise<void> {
    const server = this.server;
    this.server = undefined;
    for (const socket of this.sockets) socket.destroy();
    this.sockets.clear();
    if (server) await new Promise<void>((resolve) => server.close(() => resolve()));
  }

  restore(): Promise<void> {
    return this.start();
  }

  close(): Promise<void> {
    return this.cut();
  }
}
