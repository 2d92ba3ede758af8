import {
  type AutocompleteInteraction,
  type ButtonInteraction,
  type ChatInputCommandInteraction,
  Client,
  DiscordAPIError,
  Events,
  HTTPError,
  type Interaction,
  MessageFlags,
  PermissionFlagsBits,
  RateLimitError,
} from "discord.js";
import { CHAIN_OPTION } from "../../core/chain-option.ts";
import type { Invocation } from "../../core/command.ts";
import type { Outcome } from "../../core/outcome.ts";
import type { RenderableReply } from "../../core/reply.ts";
import { newInvocationId, type Runtime } from "../../core/runtime.ts";
import type { HttpRoute } from "../../http/host.ts";
import type { Logger } from "../../log.ts";
import type { SendFailure } from "../../outbound/types.ts";
import { renderDiscord, withoutFlags } from "../../render/discord.ts";
import { within } from "../../within.ts";
import type { SharedPace, SteadyPace } from "../pace.ts";
import type { PrivateTarget } from "../types.ts";
import { type ChatAdapter, isRefusal } from "../types.ts";
import { discordGatewayOptions } from "./caches.ts";
import { DISCORD_API_URL, registerSlashCommands } from "./commands.ts";
import { DiscordGateMembership } from "./gates.ts";
import { DiscordNames } from "./names.ts";
import {
  alertPace,
  classifyDiscordSendError,
  interactionConfirm,
  postAlert,
  sendDiscordPrivately,
} from "./rest-messages.ts";
import { DISCORD_REST_SWEEPS } from "./rest-options.ts";

export interface DiscordAdapterOptions {
  token: string;
  runtime: Runtime;
  logger: Logger;
  /** REST base (a proxy, or a fake in tests), e.g. http://127.0.0.1:8080/api. */
  apiUrl?: string | undefined;
  guildId?: string | undefined;
  registerOnStart?: boolean;
  /**
   * How long to wait for an answer before deferring. Discord drops an interaction not
   * acknowledged within 3 s; deferring earlier leaves room for a slow network.
   */
  deferAfterMs?: number;
  /** Alert sends in flight at once (waiting for their turn included). */
  maxInFlight?: number;
  /**
   * Alert sends started per second, evenly spaced: under Discord's global limit of 50 requests a
   * second (interaction answers are exempt and not paced), with room for the bot's other calls.
   */
  globalPerSecond?: number;
  /** With several instances: the global limit counted across all of them (over Redis). */
  sharedPace?: SharedPace | undefined;
  /** The Guilds intent and discord.js's default caches, as before (only to measure the saving). */
  fullCaches?: boolean;
}

/** Refusals, errors, private and confidential answers are for the invoker's eyes only. */
const isForInvoker = ({ reply, outcome }: { reply: RenderableReply; outcome: Outcome }) =>
  isRefusal(outcome) || reply.private === true || reply.confidential !== undefined;

/**
 * Discord on discord.js: slash commands, buttons and autocomplete, every interaction acknowledged
 * within Discord's 3 s (answered at once when the answer is quick, deferred otherwise).
 */
export class DiscordAdapter implements ChatAdapter {
  readonly platform = "discord";
  readonly label = "Discord";
  readonly connectsTo: string;
  readonly tokenSetting = "DISCORD_TOKEN";
  /** Gateway mode: nothing on the HTTP host (HTTP interactions are src/adapters/discord-http/). */
  readonly routes: readonly HttpRoute[] = [];
  readonly client: Client;
  /** Sends carry an enforced nonce, so several may be in flight without risking duplicates. */
  readonly maxInFlight: number;
  private readonly inFlight = new Set<Promise<void>>();
  private readonly pace: SteadyPace;
  private stopping = false;
  /** Holder roles (issue 29), through the client's REST: no gateway cache or intent needed. */
  readonly gateMembership: DiscordGateMembership;
  /** Servers' and the bot's names for /verify's page, through the client's REST. */
  private readonly names = new DiscordNames(() => this.client.rest);

  constructor(private readonly options: DiscordAdapterOptions) {
    this.connectsTo = options.apiUrl ?? DISCORD_API_URL;
    this.maxInFlight = options.maxInFlight ?? 16;
    this.pace = alertPace(options);
    this.client = new Client({
      // Slash commands and buttons arrive as interactions: no intent needed (caches.ts).
      ...discordGatewayOptions(options.fullCaches),
      // As many shards as Discord recommends (GET /gateway/bot): past 2,500 guilds one shard is
      // refused (close 4011) and the bot would never connect.
      shards: "auto",
      allowedMentions: { parse: [] },
      rest: { ...DISCORD_REST_SWEEPS, ...(options.apiUrl ? { api: options.apiUrl } : {}) },
    });
    const { logger } = options;
    this.client.on(Events.InteractionCreate, (interaction) => {
      if (this.stopping) return;
      const handled = this.onInteraction(interaction).catch((error: unknown) => {
        logger.error({ err: error, interaction: interaction.id }, "discord interaction failed");
      });
      this.inFlight.add(handled);
      void handled.finally(() => this.inFlight.delete(handled));
    });
    this.client.on(Events.Error, (error) => logger.error({ err: error }, "discord client error"));
    this.client.on(Events.Warn, (message) => logger.warn({ message }, "discord warning"));
    this.client.on(Events.ShardError, (error, shard) =>
      logger.error({ err: error, shard }, "discord shard error"),
    );
    this.client.on(Events.ShardDisconnect, (event, shard) =>
      logger.warn({ code: event.code, shard }, "discord shard disconnected"),
    );
    this.client.on(Events.ShardResume, (shard) => logger.info({ shard }, "discord shard resumed"));
    this.client.rest.on("rateLimited", (info) =>
      logger.debug(
        { route: info.route, retryAfter: info.retryAfter, global: info.global },
        "discord rate limit",
      ),
    );
    this.gateMembership = new DiscordGateMembership({
      rest: this.client.rest,
      logger,
      botUserId: () => this.client.user?.id,
    });
  }

  async start(): Promise<void> {
    const ready = new Promise<void>((resolve) =>
      this.client.once(Events.ClientReady, () => resolve()),
    );
    await this.client.login(this.options.token);
    await ready;
    this.options.logger.info({ user: this.client.user?.tag }, "discord ready");
    if (this.options.registerOnStart) {
      const applicationId = this.client.application?.id;
      const result = await registerSlashCommands({
        token: this.options.token,
        commands: this.options.runtime.commands,
        guildId: this.options.guildId,
        apiUrl: this.options.apiUrl,
        ...(applicationId ? { applicationId } : {}),
      });
      this.options.logger.info(result, "slash commands registered");
    }
  }

  healthy(): boolean {
    return this.client.isReady();
  }

  /** Stops taking interactions, finishes the replies in flight, then disconnects. */
  async stop(): Promise<void> {
    this.stopping = true;
    await Promise.allSettled([...this.inFlight]);
    // destroy() can stay pending forever when it lands mid-reconnect (between IDENTIFY and
    // READY): shutdown must not hang on it.
    let timer: NodeJS.Timeout | undefined;
    await Promise.race([
      this.client.destroy(),
      new Promise<void>((resolve) => {
        timer = setTimeout(resolve, 3000);
      }),
    ]);
    clearTimeout(timer);
  }

  /**
   * Alert delivery: a channel message through REST, started at our steady pace. discord.js would
   * only react to the global limit: it counts 50 per second from its own first request, so a
   * burst at the edge of its second lands two of its seconds inside one of Discord's, and every
   * 429 counts toward an IP ban.
   */
  async sendToChat(
    channelId: string,
    reply: RenderableReply,
    idempotencyKey?: string,
  ): Promise<void> {
    await this.pace.run(() => postAlert(this.client.rest, channelId, reply, idempotencyKey));
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
    return sendDiscordPrivately(this.client.rest, to, message, this.options.logger, signal);
  }

  private invocation(interaction: ChatInputCommandInteraction | ButtonInteraction): Invocation {
    return {
      id: newInvocationId(),
      platform: "discord",
      user: { id: interaction.user.id, name: interaction.user.username },
      chat: { id: interaction.channelId, kind: interaction.inGuild() ? "group" : "private" },
      ...(interaction.guildId !== null
        ? {
            guild: {
              id: interaction.guildId,
              roleNames: Object.fromEntries(
                (interaction.isChatInputCommand()
                  ? [...(interaction.options.resolved?.roles?.values() ?? [])]
                  : []
                ).flatMap((role) => (role ? [[role.id, role.name]] : [])),
              ),
            },
          }
        : {}),
      names: () => this.names.of(interaction.guildId ?? undefined),
      confirm: interactionConfirm(interaction.applicationId, interaction.token),
      // Buttons are not gated by default_member_permissions: every click is checked here. Only
      // this channel's rights are known (confidential replies stay in it, ephemeral).
      canManageChannel: async (chatId) => {
        if (chatId !== undefined && chatId !== interaction.channelId) return false;
        return interaction.inGuild()
          ? (interaction.memberPermissions?.has(PermissionFlagsBits.ManageChannels) ?? false)
          : true;
      },
      // Its members' wallets are the server's managers' business, not a channel moderator's.
      canManageCommunity: async () =>
        interaction.inGuild() &&
        (interaction.memberPermissions?.has(PermissionFlagsBits.ManageGuild) ?? false),
    };
  }

  private async onInteraction(interaction: Interaction): Promise<void> {
    if (interaction.isAutocomplete()) return this.onAutocomplete(interaction);
    if (interaction.isChatInputCommand()) return this.onCommand(interaction);
    if (interaction.isButton()) return this.onButton(interaction);
  }

  private async onAutocomplete(interaction: AutocompleteInteraction): Promise<void> {
    const focused = interaction.options.getFocused(true);
    // Suggestions from the chain chosen so far, else the channel's.
    const choices = await this.options.runtime.autocomplete(
      interaction.commandName,
      focused.name,
      String(focused.value),
      {
        chain: interaction.options.get(CHAIN_OPTION)?.value?.toString(),
        chat: { platform: "discord", chat: { id: interaction.channelId, kind: "group" } },
      },
    );
    await interaction.respond(choices.slice(0, 25));
  }

  private async onCommand(interaction: ChatInputCommandInteraction): Promise<void> {
    const command = this.options.runtime.find(interaction.commandName);
    const raw: Record<string, string | undefined> = {};
    for (const name of Object.keys(command?.options ?? {})) {
      const value = interaction.options.get(name)?.value;
      if (value !== undefined && value !== null) raw[name] = String(value);
    }
    const work = this.options.runtime.answerCommand(
      this.invocation(interaction),
      interaction.commandName,
      raw,
    );
    const first = await within(work, this.options.deferAfterMs ?? 2000);
    if (first.done) {
      await interaction.reply(renderDiscord(first.value.reply));
      return;
    }
    await interaction.deferReply();
    const answer = await first.pending;
    const { reply } = answer;
    if (isForInvoker(answer)) {
      // The deferred "thinking…" message is public: a private answer replaces it privately.
      await interaction.deleteReply();
      await interaction.followUp({ ...renderDiscord(reply), flags: MessageFlags.Ephemeral });
      return;
    }
    await interaction.editReply(withoutFlags(renderDiscord(reply)));
  }

  private async onButton(interaction: ButtonInteraction): Promise<void> {
    const work = this.options.runtime.answerButton(
      this.invocation(interaction),
      interaction.customId,
    );
    const first = await within(work, this.options.deferAfterMs ?? 2000);
    if (first.done) {
      const { reply } = first.value;
      const message = renderDiscord(reply);
      if (isForInvoker(first.value))
        await interaction.reply({ ...message, flags: MessageFlags.Ephemeral });
      else if (reply.replaceOriginal) await interaction.update(withoutFlags(message));
      else await interaction.reply(message);
      return;
    }
    await interaction.deferUpdate();
    const answer = await first.pending;
    const message = renderDiscord(answer.reply);
    if (isForInvoker(answer))
      await interaction.followUp({ ...message, flags: MessageFlags.Ephemeral });
    else if (answer.reply.replaceOriginal) await interaction.editReply(withoutFlags(message));
    else await interaction.followUp(message);
  }
}
