import type { IncomingMessage, ServerResponse } from "node:http";
import { DiscordAPIError, HTTPError, RateLimitError, REST } from "@discordjs/rest";
import {
  type APIApplication,
  type APIInteraction,
  type APIInteractionResponse,
  InteractionResponseType,
  InteractionType,
  MessageFlags,
  Routes,
} from "discord-api-types/v10";
import { LRUCache } from "lru-cache";
import type { RenderableReply } from "../../core/reply.ts";
import { StartupError } from "../../errors.ts";
import type { HttpRoute, RequestBody } from "../../http/host.ts";
import type { SendFailure } from "../../outbound/types.ts";
import type { UpdateDedup } from "../../store/types.ts";
import { bounded, SEEN_CHECK_MS } from "../../within.ts";
import { DISCORD_API_URL, registerSlashCommands } from "../discord/commands.ts";
import { DiscordGateMembership } from "../discord/gates.ts";
import type { DiscordAdapterOptions } from "../discord/index.ts";
import { DiscordNames } from "../discord/names.ts";
import {
  alertPace,
  classifyDiscordSendError,
  postAlert,
  restFailure,
  sendDiscordPrivately,
} from "../discord/rest-messages.ts";
import { DISCORD_REST_SWEEPS } from "../discord/rest-options.ts";
import type { SteadyPace } from "../pace.ts";
import type { ChatAdapter, PrivateTarget } from "../types.ts";
import { INTERACTIONS_PATH } from "./endpoint.ts";
import { handleInteraction, UnsupportedInteraction } from "./interactions.ts";
import { ed25519PublicKey, INTERACTION_REPLAY_WINDOW_MS, verifyInteraction } from "./verify.ts";

export { INTERACTIONS_PATH } from "./endpoint.ts";
export { INTERACTION_REPLAY_WINDOW_MS } from "./verify.ts";

/** A snowflake: 64-bit, so it fits the store's BIGINT (below 2^63). */
/** A Discord id: a 64-bit integer in decimal (Discord's ids never set the sign bit). */
function isSnowflake(id: unknown): id is string {
  return typeof id === "string" && /^\d{1,19}$/.test(id) && BigInt(id) < 2n ** 63n;
}

/** Ids this process saw, for when the shared store cannot answer (a full disk, an outage). */
const LOCAL_REPLAY_IDS = 50_000;

/**
 * Interactions are a few kilobytes (a button's carries the message it sits under, at most some
 * 30 KB of embeds and components); anything far larger is not from Discord, and is not read.
 */
const MAX_BODY_BYTES = 256 * 1024;

/** The gateway adapter's options, with the key interactions are signed with. */
export interface DiscordHttpAdapterOptions extends DiscordAdapterOptions {
  /** The application's public key (hex), that every interaction is signed with. */
  publicKey: string;
  /** The wall clock in ms, against which signature timestamps are judged. */
  now?: () => number;
  /**
   * Interaction ids already taken, shared by every instance and kept for
   * INTERACTION_REPLAY_WINDOW_MS: a signed request captured and sent again is valid for that
   * long, and Discord itself never sends one interaction twice.
   */
  interactions: UpdateDedup;
}

/**
 * Discord over HTTP interactions: Discord POSTs every slash command, button press and
 * autocomplete to `POST /discord/interactions` on the bot's HTTP host, signed with the
 * application's key; the bot answers in the HTTP response, and through REST after. No gateway
 * connection: nothing ties an interaction to this process, so any instance behind a load
 * balancer answers any. Alerts are posted through REST as in gateway mode.
 */
export class DiscordHttpAdapter implements ChatAdapter {
  readonly platform = "discord";
  readonly label = "Discord";
  readonly connectsTo: string;
  readonly tokenSetting = "DISCORD_TOKEN";
  readonly routes: readonly HttpRoute[];
  readonly rest: REST;
  /** Holder roles (issue 29), through the same REST as the answers and alerts. */
  readonly gateMembership: DiscordGateMembership;
  /** Sends carry an enforced nonce, so several may be in flight without risking duplicates. */
  readonly maxInFlight: number;
  /** The application's id, known once started. */
  applicationId: string | undefined;
  private readonly key;
  private readonly pace: SteadyPace;
  private readonly inFlight = new Set<Promise<unknown>>();
  private readonly seenHere = new LRUCache<string, true>({
    max: LOCAL_REPLAY_IDS,
    ttl: INTERACTION_REPLAY_WINDOW_MS,
  });
  private started = false;
  private stopping = false;
  /** Servers' and the bot's names for /verify's page. */
  private readonly names: DiscordNames;

  constructor(private readonly options: DiscordHttpAdapterOptions) {
    this.connectsTo = options.apiUrl ?? DISCORD_API_URL;
    this.key = ed25519PublicKey(options.publicKey);
    this.maxInFlight = options.maxInFlight ?? 16;
    this.pace = alertPace(options);
    this.rest = new REST({ api: this.connectsTo, version: "10", ...DISCORD_REST_SWEEPS }).setToken(
      options.token,
    );
    this.rest.on("rateLimited", (info) =>
      options.logger.debug(
        { route: info.route, retryAfter: info.retryAfter, global: info.global },
        "discord rate limit",
      ),
    );
    this.gateMembership = new DiscordGateMembership({ rest: this.rest, logger: options.logger });
    this.names = new DiscordNames(() => this.rest);
    this.routes = [
      { path: INTERACTIONS_PATH, handle: (req, res, body) => this.serve(req, res, body) },
    ];
  }

  /**
   * Checks the token and that DISCORD_PUBLIC_KEY is this application's (a wrong key would refuse
   * every interaction, seen only as "This interaction failed" in Discord), then registers the
   * commands when asked to.
   */
  async start(): Promise<void> {
    const application = (await this.rest.get(Routes.currentApplication())) as APIApplication;
    if (application.verify_key.toLowerCase() !== this.options.publicKey.toLowerCase()) {
      throw new StartupError(
        `DISCORD_PUBLIC_KEY is not the public key of the application DISCORD_TOKEN belongs to (${application.id}): copy it from the developer portal's General Information page`,
      );
    }
    this.applicationId = application.id;
    if (this.options.registerOnStart) {
      const result = await registerSlashCommands({
        token: this.options.token,
        commands: this.options.runtime.commands,
        guildId: this.options.guildId,
        apiUrl: this.options.apiUrl,
        applicationId: application.id,
      });
      this.options.logger.info(result, "slash commands registered");
    }
    this.started = true;
    this.options.logger.info(
      { application: application.id, path: INTERACTIONS_PATH },
      "discord http interactions ready",
    );
  }

  /** Taking interactions: started and not stopping (nothing to stay connected to). */
  healthy(): boolean {
    return this.started && !this.stopping;
  }

  /** Stops taking interactions and finishes those in flight, their REST edits included. */
  async stop(): Promise<void> {
    this.stopping = true;
    await Promise.allSettled([...this.inFlight]);
  }

  async sendToChat(
    channelId: string,
    reply: RenderableReply,
    idempotencyKey?: string,
  ): Promise<void> {
    await this.pace.run(() => postAlert(this.rest, channelId, reply, idempotencyKey));
  }

  classifySendError(error: unknown): SendFailure {
    return classifyDiscordSendError(error, { DiscordAPIError, HTTPError, RateLimitError });
  }

  /** A message to one person (a gate's notice, a proof's confirmation): see sendDiscordPrivately. */
  sendPrivately(
    to: PrivateTarget,
    message: RenderableReply | string,
    signal?: AbortSignal,
  ): Promise<void> {
    return sendDiscordPrivately(this.rest, to, message, this.options.logger, signal);
  }

  /** The signature first, on the raw bytes; only a request Discord signed is parsed. */
  private async serve(
    req: IncomingMessage,
    res: ServerResponse,
    requestBody: RequestBody,
  ): Promise<void> {
    // Discord waits 3 s from here: reading the body and asking the store come out of the deferral.
    const arrivedAt = performance.now();
    if (req.method !== "POST") {
      req.resume();
      res.writeHead(405, { allow: "POST" }).end();
      return;
    }
    // Anyone can send one: its bytes count against the host's budget until the signature holds.
    const body = await requestBody.read(MAX_BODY_BYTES, "unauthenticated");
    if (body === undefined) return;
    const verdict = verifyInteraction(
      this.key,
      req.headers["x-signature-ed25519"],
      req.headers["x-signature-timestamp"],
      body,
      (this.options.now ?? Date.now)(),
    );
    if (!verdict.ok) {
      this.options.logger.debug({ reason: verdict.reason }, "discord interaction refused");
      res.writeHead(401, { "content-type": "text/plain" }).end("invalid request signature\n");
      return;
    }
    let interaction: APIInteraction;
    try {
      interaction = JSON.parse(body.toString("utf8")) as APIInteraction;
      if (typeof interaction?.type !== "number") throw new Error("no interaction type");
    } catch (error) {
      this.options.logger.warn({ err: error }, "signed discord request without an interaction");
      res.writeHead(400).end();
      return;
    }
    if (interaction.type !== InteractionType.Ping) {
      if (!isSnowflake(interaction.id)) {
        res.writeHead(400).end();
        return;
      }
      if (this.stopping) {
        res.writeHead(503).end();
        return;
      }
      if (!(await this.firstTime(interaction.id))) {
        this.options.logger.warn({ interaction: interaction.id }, "discord interaction replayed");
        res
          .writeHead(200, { "content-type": "application/json" })
          .end(JSON.stringify(alreadyHandled(interaction)));
        return;
      }
    }
    const work = this.answer(interaction, res, arrivedAt);
    this.inFlight.add(work);
    await work.finally(() => this.inFlight.delete(work));
  }

  /**
   * True the first time an interaction id comes, on any instance. When the shared store fails the
   * interaction still runs (commands answer through an outage), refused only if seen here.
   */
  private async firstTime(id: string): Promise<boolean> {
    const snowflake = BigInt(id);
    const seenHere = this.seenHere.has(id);
    this.seenHere.set(id, true);
    try {
      return (
        (await bounded(
          this.options.interactions.firstSeen(snowflake),
          SEEN_CHECK_MS,
          "the interaction id store",
        )) && !seenHere
      );
    } catch (error) {
      this.options.logger.warn(
        { err: error, interaction: id },
        "interaction ids unavailable: replays refused on this instance only",
      );
      return !seenHere;
    }
  }

  private async answer(
    interaction: APIInteraction,
    res: ServerResponse,
    arrivedAt: number,
  ): Promise<void> {
    const { logger } = this.options;
    let handled: Awaited<ReturnType<typeof handleInteraction>>;
    try {
      handled = await handleInteraction(interaction, {
        runtime: this.options.runtime,
        rest: this.rest,
        names: this.names,
        deferAfterMs: Math.max(
          0,
          (this.options.deferAfterMs ?? 2000) - (performance.now() - arrivedAt),
        ),
      });
    } catch (error) {
      if (!(error instanceof UnsupportedInteraction)) throw error;
      logger.debug({ interaction: interaction.id, why: error.message }, "interaction not handled");
      res.writeHead(400).end();
      return;
    }
    res
      .writeHead(200, { "content-type": "application/json" })
      .end(JSON.stringify(handled.response));
    if (!handled.after) return;
    try {
      await handled.after();
    } catch (error) {
      logger.error(
        { err: restFailure(error, interaction.token), interaction: interaction.id },
        "discord interaction failed",
      );
    }
  }
}

/** What a replayed interaction gets: nothing runs, and only its sender sees why. */
function alreadyHandled(interaction: APIInteraction): APIInteractionResponse {
  if (interaction.type === InteractionType.ApplicationCommandAutocomplete)
    return {
      type: InteractionResponseType.ApplicationCommandAutocompleteResult,
      data: { choices: [] },
    };
  return {
    type: InteractionResponseType.ChannelMessageWithSource,
    data: { content: "This interaction was already handled.", flags: MessageFlags.Ephemeral },
  };
}
