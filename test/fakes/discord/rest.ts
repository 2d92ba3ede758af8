import {
  createServer,
  type IncomingHttpHeaders,
  type IncomingMessage,
  type Server,
  type ServerResponse,
} from "node:http";
import type { AddressInfo } from "node:net";
import type { APIApplicationCommand, APIMessage } from "discord.js";
import { recommendedShards } from "./gateway.ts";
import type { Recorder } from "./recorder.ts";
import { snowflake } from "./snowflake.ts";
import {
  type DiscordErrorBody,
  invalidFormBody,
  isEmptyMessage,
  validateAutocomplete,
  validateCommands,
  validateMessage,
} from "./validate.ts";
import { type InteractionRecord, PERMISSION, type RecordedFile, type World } from "./world.ts";

/** How long Discord remembers an enforced nonce ("the past few minutes"). */
const NONCE_WINDOW_MS = 5 * 60_000;

export type RouteName =
  | "getGateway"
  | "getGatewayBot"
  | "getCurrentUser"
  | "getCurrentApplication"
  | "getCommands"
  | "putCommands"
  | "interactionCallback"
  | "getWebhookMessage"
  | "editWebhookMessage"
  | "deleteWebhookMessage"
  | "createFollowUp"
  | "getChannel"
  | "createMessage"
  | "getMessage"
  | "editMessage"
  | "deleteMessage"
  | "getGuild"
  | "getGuildRoles"
  | "getMember"
  | "addMemberRole"
  | "removeMemberRole"
  | "createDm"
  | "unknown";

export interface RouteParams {
  applicationId?: string;
  guildId?: string;
  interactionId?: string;
  token?: string;
  channelId?: string;
  /** `@original` or a message id. */
  messageId?: string;
  userId?: string;
  roleId?: string;
}

export interface RecordedRequest {
  /** Order of arrival, from 1. */
  seq: number;
  at: number;
  method: string;
  /** The path under `/api/v10`, percent-decoded (`%40original` arrives as `@original`). */
  path: string;
  route: RouteName;
  params: RouteParams;
  query: Record<string, string>;
  headers: IncomingHttpHeaders;
  /** Parsed JSON body; for multipart requests the parsed `payload_json`. */
  body: unknown;
  files: RecordedFile[];
  /** The status the fake answered. */
  status: number;
  /** The JSON the fake answered, if any. */
  response: unknown;
  /** The headers the fake answered with (rate limit headers among them). */
  responseHeaders: Record<string, string>;
  /** A bug in the fake itself (answered 500), so a test can show it. */
  error?: string;
}

/** Makes requests under `/channels/{id}` fail, as Discord does when access is lost or limits hit. */
export interface ChannelFailure {
  status: number;
  /** Discord's JSON error code, e.g. 10003 Unknown Channel, 50001 Missing Access, 50013 Missing Permissions. */
  code?: number;
  message?: string;
  /** For 429: seconds to wait (may have decimals). Default 1. */
  retryAfter?: number;
  /** For 429: a global rate limit rather than the route's. */
  global?: boolean;
  /** How many requests fail before the channel works again; default: until cleared. */
  times?: number;
}

export interface RateLimitConfig {
  /** Messages allowed per channel in each window; discord.js learns it from the headers. */
  perChannel?: { limit: number; windowMs: number };
  /** Requests a second across all bot-authenticated routes (interaction routes are exempt). */
  globalPerSecond?: number;
}

const ERROR_MESSAGES: Record<number, string> = {
  0: "General error",
  10003: "Unknown Channel",
  10004: "Unknown Guild",
  10007: "Unknown Member",
  10011: "Unknown Role",
  10013: "Unknown User",
  10008: "Unknown Message",
  10015: "Unknown Webhook",
  10062: "Unknown interaction",
  40060: "Interaction has already been acknowledged.",
  50001: "Missing Access",
  50006: "Cannot send an empty message",
  50007: "Cannot send messages to this user",
  50013: "Missing Permissions",
  50035: "Invalid Form Body",
};

const BUCKET = "f4k3b0ck3tch4nn3lm355ag35";

class HttpError {
  constructor(
    readonly status: number,
    readonly body: DiscordErrorBody | RateLimitBody,
    readonly headers: Record<string, string> = {},
  ) {}
}

interface RateLimitBody {
  message: string;
  retry_after: number;
  global: boolean;
}

const discordError = (status: number, code: number, message?: string) =>
  new HttpError(status, { code, message: message ?? ERROR_MESSAGES[code] ?? "Error" });

const formError = (errors: ReturnType<typeof validateMessage>) =>
  new HttpError(400, invalidFormBody(errors));

interface Reply {
  status: number;
  body?: unknown;
  headers?: Record<string, string>;
}

interface Parsed {
  method: string;
  path: string;
  route: RouteName;
  params: RouteParams;
  query: URLSearchParams;
  headers: IncomingHttpHeaders;
  body: unknown;
  files: RecordedFile[];
}

const ROUTES: { method: string; pattern: RegExp; route: RouteName; keys: (keyof RouteParams)[] }[] =
  [
    { method: "GET", pattern: /^\/gateway$/, route: "getGateway", keys: [] },
    { method: "GET", pattern: /^\/gateway\/bot$/, route: "getGatewayBot", keys: [] },
    { method: "GET", pattern: /^\/users\/@me$/, route: "getCurrentUser", keys: [] },
    { method: "GET", pattern: /^\/applications\/@me$/, route: "getCurrentApplication", keys: [] },
    {
      method: "GET",
      pattern: /^\/applications\/(\d+)\/commands$/,
      route: "getCommands",
      keys: ["applicationId"],
    },
    {
      method: "PUT",
      pattern: /^\/applications\/(\d+)\/commands$/,
      route: "putCommands",
      keys: ["applicationId"],
    },
    {
      method: "GET",
      pattern: /^\/applications\/(\d+)\/guilds\/(\d+)\/commands$/,
      route: "getCommands",
      keys: ["applicationId", "guildId"],
    },
    {
      method: "PUT",
      pattern: /^\/applications\/(\d+)\/guilds\/(\d+)\/commands$/,
      route: "putCommands",
      keys: ["applicationId", "guildId"],
    },
    {
      method: "POST",
      pattern: /^\/interactions\/(\d+)\/([^/]+)\/callback$/,
      route: "interactionCallback",
      keys: ["interactionId", "token"],
    },
    {
      method: "GET",
      pattern: /^\/webhooks\/(\d+)\/([^/]+)\/messages\/([^/]+)$/,
      route: "getWebhookMessage",
      keys: ["applicationId", "token", "messageId"],
    },
    {
      method: "PATCH",
      pattern: /^\/webhooks\/(\d+)\/([^/]+)\/messages\/([^/]+)$/,
      route: "editWebhookMessage",
      keys: ["applicationId", "token", "messageId"],
    },
    {
      method: "DELETE",
      pattern: /^\/webhooks\/(\d+)\/([^/]+)\/messages\/([^/]+)$/,
      route: "deleteWebhookMessage",
      keys: ["applicationId", "token", "messageId"],
    },
    {
      method: "POST",
      pattern: /^\/webhooks\/(\d+)\/([^/]+)$/,
      route: "createFollowUp",
      keys: ["applicationId", "token"],
    },
    { method: "GET", pattern: /^\/channels\/(\d+)$/, route: "getChannel", keys: ["channelId"] },
    {
      method: "POST",
      pattern: /^\/channels\/(\d+)\/messages$/,
      route: "createMessage",
      keys: ["channelId"],
    },
    {
      method: "GET",
      pattern: /^\/channels\/(\d+)\/messages\/(\d+)$/,
      route: "getMessage",
      keys: ["channelId", "messageId"],
    },
    {
      method: "PATCH",
      pattern: /^\/channels\/(\d+)\/messages\/(\d+)$/,
      route: "editMessage",
      keys: ["channelId", "messageId"],
    },
    {
      method: "DELETE",
      pattern: /^\/channels\/(\d+)\/messages\/(\d+)$/,
      route: "deleteMessage",
      keys: ["channelId", "messageId"],
    },
    {
      method: "GET",
      pattern: /^\/guilds\/(\d+)$/,
      route: "getGuild",
      keys: ["guildId"],
    },
    {
      method: "GET",
      pattern: /^\/guilds\/(\d+)\/roles$/,
      route: "getGuildRoles",
      keys: ["guildId"],
    },
    {
      method: "GET",
      pattern: /^\/guilds\/(\d+)\/members\/(\d+)$/,
      route: "getMember",
      keys: ["guildId", "userId"],
    },
    {
      method: "PUT",
      pattern: /^\/guilds\/(\d+)\/members\/(\d+)\/roles\/(\d+)$/,
      route: "addMemberRole",
      keys: ["guildId", "userId", "roleId"],
    },
    {
      method: "DELETE",
      pattern: /^\/guilds\/(\d+)\/members\/(\d+)\/roles\/(\d+)$/,
      route: "removeMemberRole",
      keys: ["guildId", "userId", "roleId"],
    },
    { method: "POST", pattern: /^\/users\/@me\/channels$/, route: "createDm", keys: [] },
  ];

/** Interaction endpoints authenticate by their token, not the bot token, and skip the global limit. */
const INTERACTION_ROUTES = new Set<RouteName>([
  "interactionCallback",
  "getWebhookMessage",
  "editWebhookMessage",
  "deleteWebhookMessage",
  "createFollowUp",
]);

function matchRoute(method: string, path: string): { route: RouteName; params: RouteParams } {
  for (const candidate of ROUTES) {
    if (candidate.method !== method) continue;
    const match = candidate.pattern.exec(path);
    if (!match) continue;
    const params: RouteParams = {};
    candidate.keys.forEach((key, i) => {
      const value = match[i + 1];
      if (value !== undefined) params[key] = value;
    });
    return { route: candidate.route, params };
  }
  return { route: "unknown", params: {} };
}

async function readBody(
  request: IncomingMessage,
): Promise<{ body: unknown; files: RecordedFile[] }> {
  const chunks: Buffer[] = [];
  for await (const chunk of request) chunks.push(chunk as Buffer);
  const raw = Buffer.concat(chunks);
  if (raw.length === 0) return { body: undefined, files: [] };
  const type = request.headers["content-type"] ?? "";
  if (type.startsWith("multipart/form-data")) {
    const form = await new Response(raw, { headers: { "content-type": type } }).formData();
    let body: unknown;
    const files: RecordedFile[] = [];
    for (const [field, value] of form.entries()) {
      if (typeof value === "string") {
        if (field === "payload_json") body = JSON.parse(value);
        continue;
      }
      files.push({
        field,
        filename: value.name,
        contentType: value.type || "application/octet-stream",
        data: Buffer.from(await value.arrayBuffer()),
      });
    }
    return { body, files };
  }
  const text = raw.toString("utf8");
  try {
    return { body: JSON.parse(text), files: [] };
  } catch {
    throw new HttpError(400, { code: 50109, message: "The request body contains invalid JSON." });
  }
}

const asObject = (value: unknown): Record<string, unknown> =>
  typeof value === "object" && value !== null && !Array.isArray(value)
    ? (value as Record<string, unknown>)
    : {};

/** Discord's REST API on 127.0.0.1, under `/api/v10`. */
export class FakeRest {
  readonly #world: World;
  readonly #requests: Recorder<RecordedRequest>;
  readonly #gatewayUrl: () => string;
  readonly #failures = new Map<string, ChannelFailure & { left: number }>();
  readonly #ackDeadlineMs: number;
  readonly #maxConcurrency: number;
  #rateLimits: RateLimitConfig | undefined;
  readonly #buckets = new Map<string, { start: number; count: number }>();
  #globalWindow = { start: 0, count: 0 };
  #server: Server | undefined;
  #seq = 0;
  url = "";

  constructor(
    world: World,
    requests: Recorder<RecordedRequest>,
    options: {
      gatewayUrl: () => string;
      ackDeadlineMs: number;
      rateLimits?: RateLimitConfig;
      maxConcurrency?: number;
    },
  ) {
    this.#maxConcurrency = options.maxConcurrency ?? 1;
    this.#world = world;
    this.#requests = requests;
    this.#gatewayUrl = options.gatewayUrl;
    this.#ackDeadlineMs = options.ackDeadlineMs;
    this.#rateLimits = options.rateLimits;
  }

  async listen(): Promise<string> {
    const server = createServer((request, response) => {
      void this.#handle(request, response);
    });
    this.#server = server;
    await new Promise<void>((resolve, reject) => {
      server.once("error", reject);
      server.listen(0, "127.0.0.1", () => resolve());
    });
    const { port } = server.address() as AddressInfo;
    this.url = `http://127.0.0.1:${port}`;
    return this.url;
  }

  failChannel(channelId: string, failure: ChannelFailure): void {
    this.#failures.set(channelId, { ...failure, left: failure.times ?? Number.POSITIVE_INFINITY });
  }

  /** Makes requests under `/guilds/{id}` fail (roles, members) the same way. */
  failGuild(guildId: string, failure: ChannelFailure): void {
    this.failChannel(`guild:${guildId}`, failure);
  }

  clearFailures(channelId?: string): void {
    if (channelId === undefined) this.#failures.clear();
    else this.#failures.delete(channelId);
  }

  setRateLimits(config: RateLimitConfig | undefined): void {
    this.#rateLimits = config;
    this.#buckets.clear();
    this.#globalWindow = { start: 0, count: 0 };
  }

  async close(): Promise<void> {
    const server = this.#server;
    if (!server) return;
    server.closeAllConnections();
    await new Promise<void>((resolve) => server.close(() => resolve()));
  }

  async #handle(request: IncomingMessage, response: ServerResponse): Promise<void> {
    const url = new URL(request.url ?? "/", this.url);
    const method = request.method ?? "GET";
    const rawPath = url.pathname.replace(/^\/api(\/v\d+)?/, "");
    const path = rawPath
      .split("/")
      .map((segment) => {
        try {
          return decodeURIComponent(segment);
        } catch {
          return segment;
        }
      })
      .join("/");
    const { route, params } = matchRoute(method, path);
    let parsed: Parsed = {
      method,
      path,
      route,
      params,
      query: url.searchParams,
      headers: request.headers,
      body: undefined,
      files: [],
    };
    let reply: Reply;
    let failure: string | undefined;
    try {
      const { body, files } = await readBody(request);
      parsed = { ...parsed, body, files };
      reply = this.#route(parsed);
    } catch (error) {
      if (error instanceof HttpError) {
        reply = { status: error.status, body: error.body, headers: error.headers };
      } else {
        failure = error instanceof Error ? (error.stack ?? error.message) : String(error);
        reply = { status: 500, body: { code: 0, message: "500: Internal Server Error" } };
      }
    }
    const headers = this.#record(parsed, reply, failure);
    response.writeHead(reply.status, headers);
    response.end(reply.body === undefined ? undefined : JSON.stringify(reply.body));
  }

  #record(parsed: Parsed, reply: Reply, failure?: string): Record<string, string> {
    const headers: Record<string, string> = { ...reply.headers };
    if (reply.body !== undefined) headers["content-type"] = "application/json";
    this.#seq += 1;
    this.#requests.push({
      seq: this.#seq,
      at: Date.now(),
      method: parsed.method,
      path: parsed.path,
      route: parsed.route,
      params: parsed.params,
      query: Object.fromEntries(parsed.query),
      headers: parsed.headers,
      body: parsed.body,
      files: parsed.files,
      status: reply.status,
      response: reply.body,
      responseHeaders: headers,
      ...(failure === undefined ? {} : { error: failure }),
    });
    return headers;
  }

  /**
   * Discord reading the bot's HTTP answer to an interaction it POSTed to an Interactions Endpoint
   * URL: checked as the callback route checks a callback (the 3 s deadline, a second
   * acknowledgement, the types, the limits) and recorded as that interaction's callback, marked
   * `x-fake-via: interactions-endpoint`, so tests wait on it as on a REST callback.
   */
  acceptEndpointResponse(interactionId: string, token: string, body: unknown): RecordedRequest {
    const parsed: Parsed = {
      method: "POST",
      path: `/interactions/${interactionId}/${token}/callback`,
      route: "interactionCallback",
      params: { interactionId, token },
      query: new URLSearchParams(),
      headers: { "x-fake-via": "interactions-endpoint" },
      body,
      files: [],
    };
    let reply: Reply;
    try {
      reply = this.#callback(parsed);
    } catch (error) {
      if (!(error instanceof HttpError)) throw error;
      reply = { status: error.status, body: error.body, headers: error.headers };
    }
    this.#record(parsed, reply);
    const recorded = this.#requests.entries.at(-1);
    if (!recorded) throw new Error("fake Discord: the endpoint response was not recorded");
    return recorded;
  }

  #route(request: Parsed): Reply {
    const { route, params } = request;
    if (route === "unknown") throw new HttpError(404, { code: 0, message: "404: Not Found" });
    if (!INTERACTION_ROUTES.has(route)) {
      if (request.headers.authorization !== `Bot ${this.#world.token}`) {
        throw new HttpError(401, { code: 0, message: "401: Unauthorized" });
      }
      this.#checkGlobalLimit();
    }
    if (params.applicationId !== undefined && params.applicationId !== this.#world.applicationId) {
      throw discordError(403, 50001);
    }
    if (params.guildId !== undefined) this.#injected(`guild:${params.guildId}`);
    const channelHeaders = params.channelId ? this.#checkChannel(params.channelId, route) : {};
    const reply = this.#dispatch(request);
    return { ...reply, headers: { ...channelHeaders, ...reply.headers } };
  }

  #dispatch(request: Parsed): Reply {
    const { route, params } = request;
    const world = this.#world;
    switch (route) {
      case "getGateway":
        return { status: 200, body: { url: this.#gatewayUrl() } };
      case "getGatewayBot":
        return {
          status: 200,
          body: {
            url: this.#gatewayUrl(),
            // Discord recommends about a shard per 1,000 guilds (and requires one per 2,500).
            shards: recommendedShards(world.guilds.size),
            session_start_limit: {
              total: 1000,
              remaining: 999,
              reset_after: 14_400_000,
              max_concurrency: this.#maxConcurrency,
            },
          },
        };
      case "getCurrentUser":
        return { status: 200, body: { ...world.botUser, verified: true, mfa_enabled: false } };
      case "getCurrentApplication":
        return {
          status: 200,
          body: {
            id: world.applicationId,
            name: world.botUser.username,
            icon: null,
            description: "",
            summary: "",
            type: null,
            bot_public: true,
            bot_require_code_grant: false,
            verify_key: world.publicKeyHex,
            flags: 0,
            team: null,
            owner: { ...world.user(), flags: 0 },
            bot: world.botUser,
            approximate_guild_count: world.guilds.size,
            install_params: { scopes: ["bot", "applications.commands"], permissions: "0" },
            integration_types_config: { "0": {} },
          },
        };
      case "getCommands":
        return { status: 200, body: this.#commandsOf(params.guildId) };
      case "putCommands":
        return this.#putCommands(request);
      case "interactionCallback":
        return this.#callback(request);
      case "getWebhookMessage":
      case "editWebhookMessage":
      case "deleteWebhookMessage":
        return this.#webhookMessage(request);
      case "createFollowUp":
        return this.#followUp(request);
      case "getChannel": {
        const dmTo = world.dmChannels.get(params.channelId ?? "");
        if (dmTo !== undefined)
          return {
            status: 200,
            body: {
              id: params.channelId,
              type: 1,
              last_message_id: null,
              flags: 0,
              recipients: [world.user({ id: dmTo })],
            },
          };
        const channel = world.channels.get(params.channelId ?? "");
        if (!channel) throw discordError(404, 10003);
        return { status: 200, body: world.channelPayload(channel) };
      }
      case "createMessage":
        return this.#createMessage(request);
      case "getGuild": {
        const guild = world.guilds.get(params.guildId ?? "");
        if (!guild) throw discordError(404, 10004);
        return { status: 200, body: world.guildPayload(guild) };
      }
      case "getGuildRoles": {
        const guild = world.guilds.get(params.guildId ?? "");
        if (!guild) throw discordError(404, 10004);
        return { status: 200, body: world.rolesPayload(guild) };
      }
      case "getMember": {
        const guild = world.guilds.get(params.guildId ?? "");
        if (!guild) throw discordError(404, 10004);
        const member = guild.members.get(params.userId ?? "");
        if (!member) throw discordError(404, 10007);
        return { status: 200, body: world.memberPayload(member) };
      }
      case "addMemberRole":
      case "removeMemberRole":
        return this.#memberRole(request);
      case "createDm": {
        const recipient = asObject(request.body).recipient_id;
        if (typeof recipient !== "string" || !/^\d+$/.test(recipient))
          throw formError([
            {
              path: ["recipient_id"],
              code: "BASE_TYPE_REQUIRED",
              message: "This field is required",
            },
          ]);
        const channelId = world.dmChannel(recipient);
        return {
          status: 200,
          body: {
            id: channelId,
            type: 1,
            last_message_id: null,
            flags: 0,
            recipients: [world.user({ id: recipient })],
          },
        };
      }
      case "getMessage":
      case "editMessage":
      case "deleteMessage":
        return this.#channelMessage(request);
      case "unknown":
        throw new HttpError(404, { code: 0, message: "404: Not Found" });
    }
  }

  #commandsOf(guildId: string | undefined): APIApplicationCommand[] {
    if (guildId === undefined) return this.#world.globalCommands;
    return this.#world.guildCommands.get(guildId) ?? [];
  }

  #putCommands(request: Parsed): Reply {
    const { guildId } = request.params;
    if (guildId !== undefined && !this.#world.guilds.has(guildId)) throw discordError(403, 50001);
    const errors = validateCommands(request.body);
    if (errors.length > 0) throw formError(errors);
    const previous = this.#commandsOf(guildId);
    const commands = (request.body as Record<string, unknown>[]).map((input) => {
      const type = (input.type as number | undefined) ?? 1;
      const kept = previous.find((c) => c.name === input.name && c.type === type);
      return {
        ...input,
        id: kept?.id ?? snowflake(),
        application_id: this.#world.applicationId,
        version: snowflake(),
        type,
        default_member_permissions: input.default_member_permissions ?? null,
        nsfw: input.nsfw ?? false,
        ...(guildId === undefined
          ? {
              integration_types: input.integration_types ?? [0],
              contexts: input.contexts ?? null,
            }
          : { guild_id: guildId }),
        ...(type === 1 ? { description: input.description } : { description: "" }),
      } as APIApplicationCommand;
    });
    if (guildId === undefined) this.#world.globalCommands = commands;
    else this.#world.guildCommands.set(guildId, commands);
    return { status: 200, body: commands };
  }

  #interaction(interactionId: string | undefined, token: string | undefined): InteractionRecord {
    const record = interactionId
      ? this.#world.interactions.get(interactionId)
      : this.#world.interactionsByToken.get(token ?? "");
    if (!record || record.token !== token) throw discordError(404, 10062);
    return record;
  }

  #checkMessageBody(body: Record<string, unknown>, files: RecordedFile[], creating: boolean): void {
    const errors = validateMessage(body, files.length);
    if (errors.length > 0) throw formError(errors);
    if (creating && isEmptyMessage(body, files.length)) throw discordError(400, 50006);
  }

  #callback(request: Parsed): Reply {
    const world = this.#world;
    const record = this.#interaction(request.params.interactionId, request.params.token);
    if (Date.now() - record.createdAt > this.#ackDeadlineMs) throw discordError(404, 10062);
    if (record.responseType !== undefined) throw discordError(400, 40060);
    const body = asObject(request.body);
    const type = body.type;
    const data = asObject(body.data);
    const kind = record.payload.type;
    const invalidType = () =>
      formError([
        {
          path: ["type"],
          code: "INTERACTION_RESPONSE_TYPE_INVALID",
          message: `Interaction response type ${String(type)} is not valid for interaction type ${kind}`,
        },
      ]);
    let message: APIMessage | undefined;
    switch (type) {
      case 4: {
        if (kind !== 2 && kind !== 3 && kind !== 5) throw invalidType();
        this.#checkMessageBody(data, request.files, true);
        message = world.buildMessage({
          channelId: record.channelId,
          body: data,
          files: request.files,
          interaction: record,
          webhook: true,
        });
        break;
      }
      case 5: {
        if (kind !== 2 && kind !== 3 && kind !== 5) throw invalidType();
        const flags = (typeof data.flags === "number" ? data.flags & 64 : 0) | 128;
        message = world.buildMessage({
          channelId: record.channelId,
          body: { content: "", flags },
          files: [],
          interaction: record,
          webhook: true,
        });
        break;
      }
      case 6:
      case 7: {
        if (kind !== 3 && kind !== 5) throw invalidType();
        const clicked = record.payload.type === 3 ? record.payload.message : undefined;
        const stored = clicked ? (world.messages.get(clicked.id) ?? clicked) : undefined;
        if (stored) world.messages.set(stored.id, stored);
        if (type === 7) {
          this.#checkMessageBody(data, request.files, false);
          if (!stored) throw discordError(404, 10008);
          message = world.buildMessage({
            channelId: stored.channel_id,
            body: data,
            files: request.files,
            previous: stored,
          });
        } else {
          message = stored;
        }
        break;
      }
      case 8: {
        if (kind !== 4) throw invalidType();
        const errors = validateAutocomplete(body.data);
        if (errors.length > 0) throw formError(errors);
        break;
      }
      case 9: {
        if (kind === 4 || kind === 5) throw invalidType();
        break;
      }
      default:
        throw invalidType();
    }
    record.responseType = type;
    if (message) record.originalMessageId = message.id;
    if (request.query.get("with_response") !== "true") return { status: 204 };
    return {
      status: 200,
      body: {
        interaction: {
          id: record.id,
          type: kind,
          ...(message
            ? {
                response_message_id: message.id,
                response_message_loading: type === 5,
                response_message_ephemeral: ((message.flags ?? 0) & 64) === 64,
              }
            : {}),
        },
        resource: { type, ...(message && type !== 5 ? { message } : {}) },
      },
    };
  }

  #webhookMessage(request: Parsed): Reply {
    const world = this.#world;
    const record = world.interactionsByToken.get(request.params.token ?? "");
    if (!record) throw discordError(404, 10015);
    const messageId =
      request.params.messageId === "@original"
        ? record.originalMessageId
        : request.params.messageId;
    const stored = messageId ? world.messages.get(messageId) : undefined;
    if (record.responseType === undefined || !stored) throw discordError(404, 10008);
    if (request.route === "getWebhookMessage") return { status: 200, body: stored };
    if (request.route === "deleteWebhookMessage") {
      world.messages.delete(stored.id);
      return { status: 204 };
    }
    const body = asObject(request.body);
    this.#checkMessageBody(body, request.files, false);
    const edited = world.buildMessage({
      channelId: stored.channel_id,
      body: { ...body, flags: (stored.flags ?? 0) & ~128 },
      files: request.files,
      previous: stored,
      webhook: true,
    });
    return { status: 200, body: edited };
  }

  #followUp(request: Parsed): Reply {
    const world = this.#world;
    const record = world.interactionsByToken.get(request.params.token ?? "");
    if (!record) throw discordError(404, 10015);
    if (record.responseType === undefined) throw discordError(404, 10015);
    const body = asObject(request.body);
    this.#checkMessageBody(body, request.files, true);
    const message = world.buildMessage({
      channelId: record.channelId,
      body: { ...body, flags: typeof body.flags === "number" ? body.flags & 64 : 0 },
      files: request.files,
      interaction: record,
      webhook: true,
    });
    if (request.query.get("wait") === "false") return { status: 204 };
    return { status: 200, body: message };
  }

  readonly #nonces = new Map<string, { messageId: string; at: number }>();

  /**
   * Adding or removing a member's role, with Discord's checks in its order: the guild, the role,
   * the member, then the bot's right (Manage Roles or Administrator, from @everyone and its roles)
   * and the hierarchy (only roles below the bot's highest; never a managed one).
   */
  #memberRole(request: Parsed): Reply {
    const world = this.#world;
    const { guildId = "", userId = "", roleId = "" } = request.params;
    const guild = world.guilds.get(guildId);
    if (!guild) throw discordError(404, 10004);
    const role = guild.roles.find((r) => r.id === roleId);
    if (!role) throw discordError(404, 10011);
    const member = guild.members.get(userId);
    if (!member) throw discordError(404, 10007);
    const bot = world.botUser.id;
    const permissions = world.memberPermissions(guildId, bot);
    if ((permissions & PERMISSION.ManageRoles) === 0n) throw discordError(403, 50013);
    if (role.managed || role.position >= world.highestPosition(guildId, bot))
      throw discordError(403, 50013);
    if (request.route === "addMemberRole") {
      if (!member.roles.includes(roleId)) member.roles.push(roleId);
    } else {
      member.roles = member.roles.filter((id) => id !== roleId);
    }
    return { status: 204 };
  }

  #createMessage(request: Parsed): Reply {
    const world = this.#world;
    const channelId = request.params.channelId ?? "";
    const dmTo = world.dmChannels.get(channelId);
    if (dmTo !== undefined && world.closedDms.has(dmTo)) throw discordError(403, 50007);
    if (!world.channels.has(channelId) && dmTo === undefined) throw discordError(404, 10003);
    const body = asObject(request.body);
    this.#checkMessageBody(body, request.files, true);
    // enforce_nonce: a nonce seen from this author in the last few minutes returns the message
    // it created, and no new message is made (Discord's idempotent create).
    const nonce =
      typeof body.nonce === "string" || typeof body.nonce === "number"
        ? String(body.nonce)
        : undefined;
    if (nonce !== undefined && nonce.length > 25) throw discordError(400, 50035);
    const nonceKey =
      nonce !== undefined && body.enforce_nonce === true ? `${channelId}:${nonce}` : undefined;
    const earlier = nonceKey ? this.#nonces.get(nonceKey) : undefined;
    if (earlier && Date.now() - earlier.at < NONCE_WINDOW_MS) {
      const existing = world.messages.get(earlier.messageId);
      if (existing) return { status: 200, body: existing };
    }
    const message = world.buildMessage({
      channelId,
      body: { ...body, flags: typeof body.flags === "number" ? body.flags & ~64 : 0 },
      files: request.files,
    });
    if (nonceKey) this.#nonces.set(nonceKey, { messageId: String(message.id), at: Date.now() });
    return { status: 200, body: message };
  }

  #channelMessage(request: Parsed): Reply {
    const world = this.#world;
    const { channelId = "", messageId = "" } = request.params;
    if (!world.channels.has(channelId)) throw discordError(404, 10003);
    const stored = world.messages.get(messageId);
    if (!stored || stored.channel_id !== channelId) throw discordError(404, 10008);
    if (request.route === "getMessage") return { status: 200, body: stored };
    if (request.route === "deleteMessage") {
      world.messages.delete(stored.id);
      return { status: 204 };
    }
    const body = asObject(request.body);
    this.#checkMessageBody(body, request.files, false);
    return {
      status: 200,
      body: world.buildMessage({ channelId, body, files: request.files, previous: stored }),
    };
  }

  // ---- failures and rate limits -----------------------------------------------------------

  /** Throws the failure injected for a channel (or `guild:{id}`), while it lasts. */
  #injected(key: string): void {
    const failure = this.#failures.get(key);
    if (!failure || failure.left <= 0) return;
    failure.left -= 1;
    if (failure.left <= 0) this.#failures.delete(key);
    if (failure.status === 429) throw rateLimited(failure.retryAfter ?? 1, failure.global ?? false);
    throw discordError(failure.status, failure.code ?? 0, failure.message);
  }

  #checkGlobalLimit(): void {
    const perSecond = this.#rateLimits?.globalPerSecond;
    if (perSecond === undefined) return;
    const now = Date.now();
    if (now >= this.#globalWindow.start + 1000) this.#globalWindow = { start: now, count: 0 };
    if (this.#globalWindow.count >= perSecond) {
      const retryAfter = (this.#globalWindow.start + 1000 - now) / 1000;
      throw rateLimited(retryAfter, true);
    }
    this.#globalWindow.count += 1;
  }

  /** Injected failures first, then the per-channel message bucket; returns the bucket headers. */
  #checkChannel(channelId: string, route: RouteName): Record<string, string> {
    this.#injected(channelId);
    const perChannel = this.#rateLimits?.perChannel;
    if (!perChannel || route !== "createMessage") return {};
    const now = Date.now();
    let bucket = this.#buckets.get(channelId);
    if (!bucket || now >= bucket.start + perChannel.windowMs) {
      bucket = { start: now, count: 0 };
      this.#buckets.set(channelId, bucket);
    }
    const resetAfter = (bucket.start + perChannel.windowMs - now) / 1000;
    if (bucket.count >= perChannel.limit) throw rateLimited(resetAfter, false, perChannel.limit);
    bucket.count += 1;
    return bucketHeaders(perChannel.limit, perChannel.limit - bucket.count, resetAfter);
  }
}

function bucketHeaders(
  limit: number,
  remaining: number,
  resetAfter: number,
): Record<string, string> {
  return {
    "x-ratelimit-limit": String(limit),
    "x-ratelimit-remaining": String(remaining),
    "x-ratelimit-reset": ((Date.now() + resetAfter * 1000) / 1000).toFixed(3),
    "x-ratelimit-reset-after": resetAfter.toFixed(3),
    "x-ratelimit-bucket": BUCKET,
  };
}

/** A 429 as Discord sends it: `Retry-After` in whole seconds, `retry_after` with decimals. */
function rateLimited(retryAfter: number, global: boolean, limit = 5): HttpError {
  const headers: Record<string, string> = {
    "retry-after": String(Math.max(1, Math.ceil(retryAfter))),
    "x-ratelimit-scope": global ? "global" : "user",
  };
  if (global) headers["x-ratelimit-global"] = "true";
  else Object.assign(headers, bucketHeaders(limit, 0, retryAfter));
  return new HttpError(
    429,
    { message: "You are being rate limited.", retry_after: retryAfter, global },
    headers,
  );
}
