/**
 * A Discord on 127.0.0.1 for end-to-end tests: a REST server under `/api/v10` and a JSON
 * gateway that the real discord.js Client talks to. Point the client at it with
 * `new Client({ intents, rest: { api: fake.apiBase } })` and `client.login(fake.token)`.
 *
 * It answers as Discord does where the bot could get it wrong: payloads over Discord's limits
 * get 400 / 50035 Invalid Form Body, a second acknowledgement 40060, an acknowledgement after
 * the 3 s deadline 10062, an unknown channel 10003. Everything is recorded and can be waited on.
 */

import { sign } from "node:crypto";
import type {
  APIApplicationCommand,
  APIApplicationCommandAutocompleteInteraction,
  APIChatInputApplicationCommandInteraction,
  APIInteraction,
  APIMessage,
  APIMessageComponentButtonInteraction,
  APIPingInteraction,
  APIUser,
} from "discord.js";
import { FakeGateway, type GatewayFrame } from "./gateway.ts";
import { Recorder } from "./recorder.ts";
import {
  type ChannelFailure,
  FakeRest,
  type RateLimitConfig,
  type RecordedRequest,
  type RouteName,
} from "./rest.ts";
import { snowflake } from "./snowflake.ts";
import {
  type ApplicationCommandOptionInput,
  type ButtonClickContext,
  type FakeChannel,
  type FakeChannelInput,
  type FakeGuild,
  type FakeGuildInput,
  type FakeMember,
  type FakeRole,
  type FakeRoleInput,
  type InteractionContext,
  newInteractionRecord,
  type OptionRecord,
  World,
} from "./world.ts";

export type { GatewayFrame } from "./gateway.ts";
export { GATEWAY_OP } from "./gateway.ts";
export type {
  ChannelFailure,
  RateLimitConfig,
  RecordedRequest,
  RouteName,
  RouteParams,
} from "./rest.ts";
export type {
  ApplicationCommandOptionInput,
  ButtonClickContext,
  FakeChannel,
  FakeChannelInput,
  FakeGuild,
  FakeGuildInput,
  FakeMember,
  FakeRole,
  FakeRoleInput,
  FakeUserInput,
  InteractionContext,
  OptionRecord,
  OptionValue,
  RecordedFile,
} from "./world.ts";
export {
  BOT_PERMISSIONS,
  DEFAULT_USER,
  MEMBER_PERMISSIONS,
  PERMISSION,
  populatedGuilds,
} from "./world.ts";

/** A token in Discord's shape; the fake accepts only the one it was started with. */
export const FAKE_DISCORD_TOKEN =
  "MTAwMDAwMDAwMDAwMDAwMDAw.GfAkEd.ZmFrZS1kaXNjb3JkLXRva2VuLWZvci10ZXN0cw";

export interface PostInteractionOptions {
  /** X-Signature-Timestamp, seconds since the epoch; default now. */
  timestamp?: string;
  /** X-Signature-Ed25519; default the right one; null leaves the header out. */
  signature?: string | null;
  /** Sent instead of the signed body (a body changed on its way). */
  sentBody?: string;
  /**
   * Discord takes this long to act on the bot's answer once it has it (its own processing, a
   * busy machine): a webhook edit the bot sends at once races it, and finds no message yet.
   */
  ackDelayMs?: number;
}

export interface EndpointDelivery {
  /** The bot's HTTP status. */
  status: number;
  /** Its JSON answer, when it gave one. */
  body: unknown;
  /** The answer as Discord took it (for a 200 to anything but a PING): the interaction's callback. */
  callback?: RecordedRequest;
}

export interface FakeDiscordOptions {
  /** The bot token the fake accepts (REST `Authorization: Bot …` and gateway IDENTIFY). */
  token?: string;
  applicationId?: string;
  botName?: string;
  /** Default: one guild "Fake Guild" with one text channel "general". */
  guilds?: FakeGuildInput[];
  /** HELLO's heartbeat interval; Discord's is 41250 ms. */
  heartbeatIntervalMs?: number;
  /** How long an interaction may wait for its callback; Discord allows 3 s. */
  ackDeadlineMs?: number;
  rateLimits?: RateLimitConfig;
  /** GUILD_CREATEs neither recorded nor kept for replay: for benches with thousands of guilds. */
  lean?: boolean;
  /**
   * Shards that may IDENTIFY at once (session_start_limit.max_concurrency): 1 below 150,000
   * guilds, so discord.js spaces a sharded bot's IDENTIFYs 5 s apart; more keeps a test short.
   */
  maxConcurrency?: number;
}

export interface FakeDiscord {
  /** For `new Client({ rest: { api: fake.apiBase } })`: `http://127.0.0.1:PORT/api`. */
  readonly apiBase: string;
  /** The gateway URL `GET /gateway/bot` answers: `ws://127.0.0.1:PORT`. */
  readonly gatewayUrl: string;
  readonly token: string;
  readonly applicationId: string;
  readonly botUser: APIUser;
  /** The first guild and its first channel: where interactions happen unless told otherwise. */
  readonly guildId: string;
  readonly channelId: string;
  readonly guilds: readonly FakeGuild[];

  /** Every REST request, in order of arrival. */
  readonly requests: readonly RecordedRequest[];
  /** Every gateway frame, both directions. */
  readonly gatewayFrames: readonly GatewayFrame[];
  /** Whether a client holds an identified, open gateway connection. */
  readonly connected: boolean;

  /** The first request, already recorded or still to come, that matches. */
  waitFor(
    predicate: (request: RecordedRequest) => boolean,
    timeoutMs?: number,
  ): Promise<RecordedRequest>;
  /** The first gateway frame, already recorded or still to come, that matches. */
  waitForGateway(
    predicate: (frame: GatewayFrame) => boolean,
    timeoutMs?: number,
  ): Promise<GatewayFrame>;
  /** The accepted (2xx) callback of an interaction. */
  waitForCallback(
    interaction: { id: string } | string,
    timeoutMs?: number,
  ): Promise<RecordedRequest>;
  /** The accepted (2xx) edit of an interaction's `@original` message. */
  waitForOriginalEdit(
    interaction: { token: string } | string,
    timeoutMs?: number,
  ): Promise<RecordedRequest>;
  /** The accepted (2xx) follow-up of an interaction. */
  waitForFollowUp(
    interaction: { token: string } | string,
    timeoutMs?: number,
  ): Promise<RecordedRequest>;
  /** The accepted (2xx) message create in a channel. */
  waitForChannelMessage(channelId: string, timeoutMs?: number): Promise<RecordedRequest>;
  /** Requests of one route, optionally filtered. */
  requestsOf(
    route: RouteName,
    predicate?: (request: RecordedRequest) => boolean,
  ): RecordedRequest[];

  /** Registered commands: global, or of a guild. */
  commands(guildId?: string): APIApplicationCommand[];
  /** Messages the fake holds for a channel, oldest first (ephemeral ones included, flag 64). */
  messages(channelId: string): APIMessage[];
  message(messageId: string): APIMessage | undefined;

  /** Payload builders (nothing is sent until `sendInteraction`). */
  slashCommand(
    name: string,
    options?: ApplicationCommandOptionInput,
    context?: InteractionContext,
  ): APIChatInputApplicationCommandInteraction;
  buttonClick(customId: string, context?: ButtonClickContext): APIMessageComponentButtonInteraction;
  autocomplete(
    name: string,
    options: OptionRecord,
    focused: string,
    context?: InteractionContext,
  ): APIApplicationCommandAutocompleteInteraction;

  /** Dispatches INTERACTION_CREATE and starts the interaction's 3 s acknowledgement clock. */
  sendInteraction<T extends APIInteraction>(payload: T): T;

  /** The application's public key (hex), as the developer portal shows it. */
  readonly publicKey: string;
  /** A PING (type 1), as Discord sends when an Interactions Endpoint URL is saved. */
  ping(): APIPingInteraction;
  /** The signature Discord would send for `timestamp` + `body` (hex). */
  sign(timestamp: string, body: string): string;
  /**
   * Discord in Interactions Endpoint URL mode: POSTs the interaction to `url`, signed, starts its
   * 3 s acknowledgement clock, and takes the bot's HTTP answer as its callback (checked and
   * recorded as `waitForCallback` sees it). `options` forge what a test needs forged.
   */
  postInteraction<T extends APIInteraction>(
    url: string,
    payload: T,
    options?: PostInteractionOptions,
  ): Promise<EndpointDelivery>;
  /** Sends any dispatch event to the connected client. */
  dispatch(event: string, data: unknown): void;
  /** Adds a text channel to a guild and tells the client (CHANNEL_CREATE). */
  addChannel(input: FakeChannelInput, guildId?: string): FakeChannel;

  /**
   * Roles and members (REST only: no GUILD_ROLE_* or GUILD_MEMBER_* events are sent). A guild
   * starts with the bot as a member holding no role; @everyone has MEMBER_PERMISSIONS.
   */
  addRole(input: FakeRoleInput, guildId?: string): FakeRole;
  /** A move in Server Settings → Roles, a permission or `managed` changed. */
  editRole(roleId: string, change: Partial<Omit<FakeRole, "id">>, guildId?: string): FakeRole;
  deleteRole(roleId: string, guildId?: string): void;
  role(roleId: string, guildId?: string): FakeRole | undefined;
  /** Sets the roles the bot holds in a guild. */
  setBotRoles(roleIds: string[], guildId?: string): void;
  addMember(userId: string, roles?: string[], guildId?: string): FakeMember;
  /** The person leaves the server (or is kicked). */
  removeMember(userId: string, guildId?: string): void;
  member(userId: string, guildId?: string): FakeMember | undefined;
  /** The person turns off DMs from server members: sends to them get 403 50007. */
  closeDms(userId: string): void;
  /** The messages the bot sent the person in DM, oldest first. */
  dms(userId: string): APIMessage[];

  /** Closes the client's socket: code 4000 by default (discord.js resumes), or abruptly. */
  dropConnection(options?: { code?: number; abrupt?: boolean }): void;
  /** Gateway op 7: the client must reconnect and resume. */
  requestReconnect(): void;
  /** Gateway op 9: not resumable by default, so the client identifies anew. */
  invalidateSession(resumable?: boolean): void;

  /** Makes requests under `/channels/{id}` fail (404 10003, 403 50001/50013, 429, 5xx). */
  failChannel(channelId: string, failure: ChannelFailure): void;
  /** Makes requests under `/guilds/{id}` fail (roles, members): 429, 5xx, 403. */
  failGuild(guildId: string, failure: ChannelFailure): void;
  clearFailures(channelId?: string): void;
  setRateLimits(config: RateLimitConfig | undefined): void;

  close(): Promise<void>;
}

const DEFAULT_TIMEOUT_MS = 5000;

function describeRequest(r: RecordedRequest): string {
  return `#${r.seq} ${r.method} ${r.path} -> ${r.status}${r.error ? ` (fake error: ${r.error})` : ""}`;
}

function describeFrame(f: GatewayFrame): string {
  return `[${f.connection}] ${f.direction} op ${f.op}${f.t ? ` ${f.t}` : ""}${f.s === null ? "" : ` s=${f.s}`}`;
}

const ok = (r: RecordedRequest) => r.status >= 200 && r.status < 300;

function safeJson(text: string): unknown {
  try {
    return JSON.parse(text);
  } catch {
    return text;
  }
}

export async function startFakeDiscord(options: FakeDiscordOptions = {}): Promise<FakeDiscord> {
  const world = new World({
    token: options.token ?? FAKE_DISCORD_TOKEN,
    ...(options.applicationId === undefined ? {} : { applicationId: options.applicationId }),
    ...(options.botName === undefined ? {} : { botName: options.botName }),
    ...(options.guilds === undefined ? {} : { guilds: options.guilds }),
  });
  const requests = new Recorder<RecordedRequest>(describeRequest);
  const frames = new Recorder<GatewayFrame>(describeFrame);
  const gateway = new FakeGateway(
    world,
    frames,
    options.heartbeatIntervalMs ?? 41_250,
    options.lean,
  );
  const rest = new FakeRest(world, requests, {
    gatewayUrl: () => gateway.url,
    ...(options.maxConcurrency === undefined ? {} : { maxConcurrency: options.maxConcurrency }),
    ackDeadlineMs: options.ackDeadlineMs ?? 3000,
    ...(options.rateLimits === undefined ? {} : { rateLimits: options.rateLimits }),
  });
  await gateway.listen();
  const restUrl = await rest.listen();

  const idOf = (x: { id: string } | string) => (typeof x === "string" ? x : x.id);
  const tokenOf = (x: { token: string } | string) => (typeof x === "string" ? x : x.token);

  const fake: FakeDiscord = {
    apiBase: `${restUrl}/api`,
    gatewayUrl: gateway.url,
    token: world.token,
    applicationId: world.applicationId,
    botUser: world.botUser,
    guildId: world.defaultGuild.id,
    channelId: world.defaultChannel.id,
    get guilds() {
      return [...world.guilds.values()];
    },
    requests: requests.entries,
    gatewayFrames: frames.entries,
    get connected() {
      return gateway.connected;
    },

    waitFor: (predicate, timeoutMs = DEFAULT_TIMEOUT_MS) =>
      requests.waitFor(predicate, timeoutMs, "a matching request"),
    waitForGateway: (predicate, timeoutMs = DEFAULT_TIMEOUT_MS) =>
      frames.waitFor(predicate, timeoutMs, "a matching gateway frame"),
    waitForCallback: (interaction, timeoutMs = DEFAULT_TIMEOUT_MS) =>
      requests.waitFor(
        (r) =>
          r.route === "interactionCallback" &&
          r.params.interactionId === idOf(interaction) &&
          ok(r),
        timeoutMs,
        `the callback of interaction ${idOf(interaction)}`,
      ),
    waitForOriginalEdit: (interaction, timeoutMs = DEFAULT_TIMEOUT_MS) =>
      requests.waitFor(
        (r) =>
          r.route === "editWebhookMessage" &&
          r.params.token === tokenOf(interaction) &&
          r.params.messageId === "@original" &&
          ok(r),
        timeoutMs,
        "the edit of @original",
      ),
    waitForFollowUp: (interaction, timeoutMs = DEFAULT_TIMEOUT_MS) =>
      requests.waitFor(
        (r) => r.route === "createFollowUp" && r.params.token === tokenOf(interaction) && ok(r),
        timeoutMs,
        "a follow-up",
      ),
    waitForChannelMessage: (channelId, timeoutMs = DEFAULT_TIMEOUT_MS) =>
      requests.waitFor(
        (r) => r.route === "createMessage" && r.params.channelId === channelId && ok(r),
        timeoutMs,
        `a message in channel ${channelId}`,
      ),
    requestsOf: (route, predicate = () => true) =>
      requests.entries.filter((r) => r.route === route && predicate(r)),

    commands: (guildId) =>
      guildId === undefined ? world.globalCommands : (world.guildCommands.get(guildId) ?? []),
    messages: (channelId) => [...world.messages.values()].filter((m) => m.channel_id === channelId),
    message: (messageId) => world.messages.get(messageId),

    slashCommand: (name, commandOptions, context) =>
      world.slashCommand(name, commandOptions, context),
    buttonClick: (customId, context) => world.buttonClick(customId, context),
    autocomplete: (name, commandOptions, focused, context) =>
      world.autocomplete(name, commandOptions, focused, context),

    sendInteraction(payload) {
      const record = newInteractionRecord(payload);
      world.interactions.set(record.id, record);
      world.interactionsByToken.set(record.token, record);
      gateway.dispatch("INTERACTION_CREATE", payload);
      return payload;
    },
    publicKey: world.publicKeyHex,
    ping: () =>
      ({
        id: snowflake(),
        application_id: world.applicationId,
        type: 1,
        token: `ping-${snowflake()}`,
        version: 1,
      }) as unknown as APIPingInteraction,
    sign: (timestamp, body) =>
      sign(null, Buffer.from(timestamp + body), world.signingKey).toString("hex"),
    async postInteraction(url, payload, postOptions = {}) {
      const body = JSON.stringify(payload);
      const timestamp = postOptions.timestamp ?? String(Math.floor(Date.now() / 1000));
      const signature =
        postOptions.signature === undefined ? fake.sign(timestamp, body) : postOptions.signature;
      const isPing = payload.type === 1;
      if (!isPing) {
        const record = newInteractionRecord(payload);
        world.interactions.set(record.id, record);
        world.interactionsByToken.set(record.token, record);
      }
      const response = await fetch(url, {
        method: "POST",
        headers: {
          "content-type": "application/json",
          "user-agent": "Discord-Interactions/1.0 (+https://discord.com)",
          "x-signature-timestamp": timestamp,
          ...(signature === null ? {} : { "x-signature-ed25519": signature }),
        },
        body: postOptions.sentBody ?? body,
      });
      const text = await response.text();
      const answer: unknown = text === "" ? undefined : safeJson(text);
      if (response.status !== 200 || isPing) return { status: response.status, body: answer };
      if (postOptions.ackDelayMs)
        await new Promise((resolve) => setTimeout(resolve, postOptions.ackDelayMs));
      return {
        status: response.status,
        body: answer,
        callback: rest.acceptEndpointResponse(payload.id, payload.token, answer),
      };
    },
    dispatch: (event, data) => gateway.dispatch(event, data),
    addChannel(input, guildId = world.defaultGuild.id) {
      const channel = world.addChannel(guildId, input);
      if (gateway.connected) gateway.dispatch("CHANNEL_CREATE", world.channelPayload(channel));
      return channel;
    },

    addRole: (input, guildId = world.defaultGuild.id) => world.addRole(guildId, input),
    editRole: (roleId, change, guildId = world.defaultGuild.id) =>
      world.editRole(guildId, roleId, change),
    deleteRole: (roleId, guildId = world.defaultGuild.id) => world.deleteRole(guildId, roleId),
    role: (roleId, guildId = world.defaultGuild.id) =>
      world.guild(guildId).roles.find((r) => r.id === roleId),
    setBotRoles(roleIds, guildId = world.defaultGuild.id) {
      const bot = world.guild(guildId).members.get(world.botUser.id);
      if (bot) bot.roles = [...roleIds];
    },
    addMember: (userId, roles, guildId = world.defaultGuild.id) =>
      world.addMember(guildId, userId, roles),
    removeMember: (userId, guildId = world.defaultGuild.id) => world.removeMember(guildId, userId),
    member: (userId, guildId = world.defaultGuild.id) => world.guild(guildId).members.get(userId),
    closeDms: (userId) => world.closedDms.add(userId),
    dms(userId) {
      const channelId = [...world.dmChannels].find(([, to]) => to === userId)?.[0];
      return [...world.messages.values()].filter((m) => m.channel_id === channelId);
    },

    dropConnection: (dropOptions) => gateway.drop(dropOptions),
    requestReconnect: () => gateway.requestReconnect(),
    invalidateSession: (resumable) => gateway.invalidateSession(resumable),

    failChannel: (channelId, failure) => rest.failChannel(channelId, failure),
    failGuild: (guildId, failure) => rest.failGuild(guildId, failure),
    clearFailures: (channelId) => rest.clearFailures(channelId),
    setRateLimits: (config) => rest.setRateLimits(config),

    async close() {
      requests.dispose();
      frames.dispose();
      await Promise.all([gateway.close(), rest.close()]);
    },
  };
  return fake;
}
