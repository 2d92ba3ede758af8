import type { AddressInfo } from "node:net";
import { type WebSocket, WebSocketServer } from "ws";
import type { Recorder } from "./recorder.ts";
import { randomToken } from "./snowflake.ts";
import type { FakeGuild, World } from "./world.ts";

export interface GatewayFrame {
  /** Which socket, counting from 1 in the order clients connected. */
  connection: number;
  direction: "received" | "sent";
  op: number;
  t: string | null;
  s: number | null;
  d: unknown;
  at: number;
}

export const GATEWAY_OP = {
  Dispatch: 0,
  Heartbeat: 1,
  Identify: 2,
  Resume: 6,
  Reconnect: 7,
  InvalidSession: 9,
  Hello: 10,
  HeartbeatAck: 11,
} as const;

/** Guilds one shard may hold: past it Discord closes IDENTIFY with 4011 (sharding required). */
export const MAX_GUILDS_PER_SHARD = 2500;

export const recommendedShards = (guilds: number) => Math.max(1, Math.ceil(guilds / 1000));

/** The shard a guild's events go to: (guild_id >> 22) % num_shards, as Discord routes them. */
const shardOf = (guildId: string, count: number) =>
  Number((BigInt(guildId) >> 22n) % BigInt(count));

interface Session {
  id: string;
  seq: number;
  /** Every dispatch of the session, so a RESUME can replay what the client missed. */
  events: { s: number; t: string; d: unknown }[];
  socket: WebSocket | undefined;
  connection: number;
  resumable: boolean;
}

interface Payload {
  op: number;
  d?: unknown;
  s?: number | null;
  t?: string | null;
}

/**
 * A Discord gateway on 127.0.0.1 (JSON encoding, no compression): HELLO, IDENTIFY -> READY and,
 * with the Guilds intent, a GUILD_CREATE per guild, heartbeats and ACKs, RESUME with replay -> RESUMED, and sequence numbers.
 */
export class FakeGateway {
  readonly #world: World;
  readonly #frames: Recorder<GatewayFrame>;
  readonly #heartbeatIntervalMs: number;
  readonly #lean: boolean;
  readonly #sessions = new Map<string, Session>();
  #server: WebSocketServer | undefined;
  #current: Session | undefined;
  #connections = 0;
  url = "";

  /**
   * `lean`: GUILD_CREATE dispatches are neither recorded nor kept for a RESUME's replay, so that
   * thousands of guilds cost the fake no memory (benches).
   */
  constructor(
    world: World,
    frames: Recorder<GatewayFrame>,
    heartbeatIntervalMs: number,
    lean = false,
  ) {
    this.#world = world;
    this.#frames = frames;
    this.#heartbeatIntervalMs = heartbeatIntervalMs;
    this.#lean = lean;
  }

  async listen(): Promise<string> {
    const server = new WebSocketServer({ host: "127.0.0.1", port: 0 });
    this.#server = server;
    await new Promise<void>((resolve, reject) => {
      server.once("listening", resolve);
      server.once("error", reject);
    });
    const { port } = server.address() as AddressInfo;
    this.url = `ws://127.0.0.1:${port}`;
    server.on("connection", (socket, request) => {
      this.#accept(socket, new URL(request.url ?? "/", this.url));
    });
    return this.url;
  }

  /** Whether a client holds an identified, open connection. */
  get connected(): boolean {
    return this.#current?.socket !== undefined;
  }

  #send(socket: WebSocket, connection: number, payload: Payload, record = true): void {
    const frame = {
      op: payload.op,
      d: payload.d ?? null,
      s: payload.s ?? null,
      t: payload.t ?? null,
    };
    if (record) this.#frames.push({ connection, direction: "sent", ...frame, at: Date.now() });
    if (socket.readyState === socket.OPEN) socket.send(JSON.stringify(frame));
  }

  #accept(socket: WebSocket, url: URL): void {
    this.#connections += 1;
    const connection = this.#connections;
    let session: Session | undefined;
    const close = (code: number, reason: string) => socket.close(code, reason);

    if (url.searchParams.get("v") !== "10") {
      close(4012, "Invalid API version");
      return;
    }
    if ((url.searchParams.get("encoding") ?? "json") !== "json") {
      close(4002, "Error while decoding payload.");
      return;
    }

    socket.on("message", (raw) => {
      let payload: Payload;
      try {
        payload = JSON.parse(raw.toString()) as Payload;
      } catch {
        close(4002, "Error while decoding payload.");
        return;
      }
      this.#frames.push({
        connection,
        direction: "received",
        op: payload.op,
        t: payload.t ?? null,
        s: payload.s ?? null,
        d: payload.d ?? null,
        at: Date.now(),
      });
      switch (payload.op) {
        case GATEWAY_OP.Heartbeat:
          this.#send(socket, connection, { op: GATEWAY_OP.HeartbeatAck });
          return;
        case GATEWAY_OP.Identify: {
          if (session) {
            close(4005, "Already authenticated.");
            return;
          }
          const d = payload.d as { token?: string; intents?: number; shard?: [number, number] };
          if (d?.token !== this.#world.token) {
            close(4004, "Authentication failed.");
            return;
          }
          if (typeof d.intents !== "number") {
            close(4013, "Invalid intent(s).");
            return;
          }
          const [shardId, count] = d.shard ?? [0, 1];
          if (!(shardId >= 0 && shardId < count)) {
            close(4010, "Invalid shard.");
            return;
          }
          const guilds = [...this.#world.guilds.values()].filter(
            (guild) => shardOf(guild.id, count) === shardId,
          );
          if (guilds.length > MAX_GUILDS_PER_SHARD) {
            close(4011, "Sharding required.");
            return;
          }
          session = this.#identify(socket, connection, [shardId, count], d.intents, guilds);
          return;
        }
        case GATEWAY_OP.Resume: {
          const d = payload.d as { token?: string; session_id?: string; seq?: number };
          if (d?.token !== this.#world.token) {
            close(4004, "Authentication failed.");
            return;
          }
          const found = d.session_id ? this.#sessions.get(d.session_id) : undefined;
          if (!found?.resumable) {
            this.#send(socket, connection, { op: GATEWAY_OP.InvalidSession, d: false });
            return;
          }
          session = found;
          this.#resume(found, socket, connection, d.seq ?? 0);
          return;
        }
        default:
          if (!session) close(4003, "Not authenticated.");
      }
    });
    socket.on("close", () => {
      if (session && session.socket === socket) session.socket = undefined;
    });
    socket.on("error", () => {
      // An abrupt client disconnect; the close handler has the bookkeeping.
    });

    this.#send(socket, connection, {
      op: GATEWAY_OP.Hello,
      d: { heartbeat_interval: this.#heartbeatIntervalMs, _trace: ["fake-discord-gateway"] },
    });
  }

  #identify(
    socket: WebSocket,
    connection: number,
    shard: [number, number],
    intents: number,
    guilds: FakeGuild[],
  ): Session {
    const session: Session = {
      id: Buffer.from(crypto.getRandomValues(new Uint8Array(16))).toString("hex"),
      seq: 0,
      events: [],
      socket,
      connection,
      resumable: true,
    };
    this.#sessions.set(session.id, session);
    this.#current = session;
    this.#dispatchTo(session, "READY", {
      v: 10,
      user: this.#world.botUser,
      guilds: guilds.map((g) => ({ id: g.id, unavailable: true })),
      session_id: session.id,
      resume_gateway_url: this.url,
      session_type: "normal",
      shard,
      application: { id: this.#world.applicationId, flags: 0 },
      private_channels: [],
      presences: [],
      relationships: [],
      guild_join_requests: [],
      user_settings: {},
      geo_ordered_rtc_regions: ["loopback"],
      auth_session_id_hash: randomToken(16),
      _trace: ["fake-discord-gateway"],
    });
    // GUILD_CREATE comes with the Guilds intent only (1 << 0); without it READY's unavailable
    // guilds stay so, as on Discord. Interactions come whatever the intents.
    if (intents & 1) void this.#sendGuilds(session, guilds);
    return session;
  }

  /**
   * A GUILD_CREATE per guild, as Discord sends them after READY. Past the first hundred they go
   * as the client reads them (the socket's buffer drained), not all buffered at once.
   */
  async #sendGuilds(session: Session, guilds: FakeGuild[]): Promise<void> {
    for (const [i, guild] of guilds.entries()) {
      if (i > 0 && i % 100 === 0) {
        while ((session.socket?.bufferedAmount ?? 0) > 1_000_000)
          await new Promise((resolve) => setTimeout(resolve, 5));
        await new Promise((resolve) => setImmediate(resolve));
      }
      this.#dispatchTo(session, "GUILD_CREATE", this.#world.guildCreate(guild), !this.#lean);
    }
  }

  #resume(session: Session, socket: WebSocket, connection: number, seq: number): void {
    if (session.socket && session.socket !== socket) session.socket.terminate();
    session.socket = socket;
    session.connection = connection;
    this.#current = session;
    for (const event of session.events) {
      if (event.s > seq) {
        this.#send(socket, connection, {
          op: GATEWAY_OP.Dispatch,
          t: event.t,
          s: event.s,
          d: event.d,
        });
      }
    }
    this.#dispatchTo(session, "RESUMED", { _trace: ["fake-discord-gateway"] });
  }

  /** `keep`: recorded and kept for replay (false only for a lean fake's GUILD_CREATEs). */
  #dispatchTo(session: Session, t: string, d: unknown, keep = true): void {
    session.seq += 1;
    if (keep) session.events.push({ s: session.seq, t, d });
    if (session.socket) {
      this.#send(
        session.socket,
        session.connection,
        { op: GATEWAY_OP.Dispatch, t, s: session.seq, d },
        keep,
      );
    }
  }

  /**
   * Sends a dispatch to the newest session. While its socket is down the event is kept and
   * replayed on RESUME, as Discord does.
   */
  dispatch(t: string, d: unknown): void {
    if (!this.#current)
      throw new Error("fake Discord: no client has identified on the gateway yet");
    this.#dispatchTo(this.#current, t, d);
  }

  /** Closes the current socket: with a code (default 4000, resumable) or abruptly, without a close frame. */
  drop(options: { code?: number; abrupt?: boolean } = {}): void {
    const socket = this.#current?.socket;
    if (!socket) throw new Error("fake Discord: no open gateway connection to drop");
    if (options.abrupt) socket.terminate();
    else socket.close(options.code ?? 4000, "Dropped by the fake Discord");
  }

  /** Sends op 7 RECONNECT: the client closes and resumes. */
  requestReconnect(): void {
    const session = this.#current;
    if (!session?.socket) throw new Error("fake Discord: no open gateway connection");
    this.#send(session.socket, session.connection, { op: GATEWAY_OP.Reconnect });
  }

  /** Sends op 9 INVALID_SESSION; when not resumable the session is forgotten (IDENTIFY again). */
  invalidateSession(resumable = false): void {
    const session = this.#current;
    if (!session?.socket) throw new Error("fake Discord: no open gateway connection");
    if (!resumable) session.resumable = false;
    this.#send(session.socket, session.connection, { op: GATEWAY_OP.InvalidSession, d: resumable });
  }

  async close(): Promise<void> {
    const server = this.#server;
    if (!server) return;
    for (const client of server.clients) client.terminate();
    await new Promise<void>((resolve) => server.close(() => resolve()));
  }
}
