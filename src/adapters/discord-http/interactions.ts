import { DiscordAPIError, type REST } from "@discordjs/rest";
import {
  type APIApplicationCommandAutocompleteInteraction,
  type APIApplicationCommandInteractionDataBasicOption,
  type APIChatInputApplicationCommandInteraction,
  type APIInteraction,
  type APIInteractionResponse,
  type APIMessageComponentInteraction,
  ApplicationCommandType,
  ComponentType,
  InteractionResponseType,
  InteractionType,
  MessageFlags,
  PermissionFlagsBits,
  Routes,
} from "discord-api-types/v10";
import pRetry from "p-retry";
import { CHAIN_OPTION } from "../../core/chain-option.ts";
import type { Invocation } from "../../core/command.ts";
import type { Answered } from "../../core/outcome.ts";
import { newInvocationId, type Runtime } from "../../core/runtime.ts";
import { renderDiscord, withoutFlags } from "../../render/discord.ts";
import { within } from "../../within.ts";
import type { DiscordNames } from "../discord/names.ts";
import { apiMessage, interactionConfirm } from "../discord/rest-messages.ts";
import { isRefusal } from "../types.ts";

/**
 * One interaction from Discord's HTTP POST, answered by the same runtime as the gateway mode: the
 * HTTP response acknowledges it (within Discord's 3 s), and what comes after (a deferred answer,
 * an answer with files) goes through REST with the interaction's token. Nothing is kept between
 * requests: buttons are in the store, so any instance answers any interaction.
 */

export interface InteractionDeps {
  runtime: Runtime;
  rest: REST;
  /** Servers' and the bot's names, for /verify's page (an interaction carries neither). */
  names?: DiscordNames | undefined;
  /** How long to wait for an answer before deferring it (Discord allows 3 s for the response). */
  deferAfterMs: number;
}

/** The HTTP response, and what to do through REST once it is sent. */
export interface Handled {
  response: APIInteractionResponse;
  after?: () => Promise<void>;
}

/** Not an interaction this bot answers (a modal, a select menu, a message command). */
export class UnsupportedInteraction extends Error {
  override name = "UnsupportedInteraction";
}

const EPHEMERAL = MessageFlags.Ephemeral;
const MANAGE = PermissionFlagsBits.ManageChannels | PermissionFlagsBits.Administrator;
/** What seeing a server's members takes: Manage Server (or Administrator). */
const MANAGE_SERVER = PermissionFlagsBits.ManageGuild | PermissionFlagsBits.Administrator;

/** Refusals, errors, private and confidential answers are for the invoker's eyes only. */
const isForInvoker = ({ reply, outcome }: Answered) =>
  isRefusal(outcome) || reply.private === true || reply.confidential !== undefined;

export async function handleInteraction(
  interaction: APIInteraction,
  deps: InteractionDeps,
): Promise<Handled> {
  switch (interaction.type) {
    case InteractionType.Ping:
      return { response: { type: InteractionResponseType.Pong } };
    case InteractionType.ApplicationCommandAutocomplete:
      return autocomplete(interaction, deps);
    case InteractionType.ApplicationCommand:
      if (interaction.data.type !== ApplicationCommandType.ChatInput) break;
      return command(interaction as APIChatInputApplicationCommandInteraction, deps);
    case InteractionType.MessageComponent:
      if (interaction.data.component_type !== ComponentType.Button) break;
      return button(interaction, deps);
  }
  throw new UnsupportedInteraction(`interaction type ${interaction.type}`);
}

function invocation(
  interaction: APIChatInputApplicationCommandInteraction | APIMessageComponentInteraction,
  names: DiscordNames | undefined,
): Invocation {
  const user = interaction.member?.user ?? interaction.user;
  const channelId = interaction.channel?.id ?? interaction.channel_id;
  if (!user || !channelId) throw new UnsupportedInteraction("interaction without user or channel");
  const inGuild = interaction.guild_id !== undefined;
  const permissions = BigInt(interaction.member?.permissions ?? "0");
  return {
    id: newInvocationId(),
    platform: "discord",
    user: { id: user.id, name: user.username },
    chat: { id: channelId, kind: inGuild ? "group" : "private" },
    ...(interaction.guild_id !== undefined
      ? { guild: { id: interaction.guild_id, roleNames: roleNames(interaction) } }
      : {}),
    ...(names ? { names: () => names.of(interaction.guild_id) } : {}),
    confirm: interactionConfirm(interaction.application_id, interaction.token),
    // Buttons are not gated by default_member_permissions: every click is checked here, on the
    // member's permissions in this channel, which Discord sends with each interaction.
    canManageChannel: async (chatId) => {
      if (chatId !== undefined && chatId !== channelId) return false;
      return inGuild ? (permissions & MANAGE) !== 0n : true;
    },
    // Its members' wallets are the server's managers' business, not a channel moderator's.
    canManageCommunity: async () => inGuild && (permissions & MANAGE_SERVER) !== 0n,
  };
}

/** The roles a role option names, by id (Discord sends them resolved beside the options). */
function roleNames(
  interaction: APIChatInputApplicationCommandInteraction | APIMessageComponentInteraction,
): Record<string, string> {
  const roles =
    "resolved" in interaction.data &&
    interaction.data.resolved &&
    "roles" in interaction.data.resolved
      ? (interaction.data.resolved.roles ?? {})
      : {};
  return Object.fromEntries(Object.entries(roles).map(([id, role]) => [id, role.name]));
}

function basicOptions(
  interaction:
    | APIChatInputApplicationCommandInteraction
    | APIApplicationCommandAutocompleteInteraction,
): APIApplicationCommandInteractionDataBasicOption[] {
  // This bot's commands have no subcommands: every option is a value.
  return (interaction.data.options ?? []).filter(
    (option): option is APIApplicationCommandInteractionDataBasicOption => "value" in option,
  );
}

async function autocomplete(
  interaction: APIApplicationCommandAutocompleteInteraction,
  { runtime }: InteractionDeps,
): Promise<Handled> {
  const options = basicOptions(interaction);
  const focused = options.find((option) => "focused" in option && option.focused);
  const chain = options.find((option) => option.name === CHAIN_OPTION)?.value;
  const channelId = interaction.channel?.id ?? interaction.channel_id;
  // Suggestions from the chain chosen so far, else the channel's.
  const choices = focused
    ? await runtime.autocomplete(interaction.data.name, focused.name, String(focused.value), {
        chain: chain === undefined ? undefined : String(chain),
        ...(channelId
          ? { chat: { platform: "discord", chat: { id: channelId, kind: "group" } } }
          : {}),
      })
    : [];
  return {
    response: {
      type: InteractionResponseType.ApplicationCommandAutocompleteResult,
      data: { choices: choices.slice(0, 25) },
    },
  };
}

/** Unknown Message, Unknown Webhook: what an edit meets when it overtakes its acknowledgement. */
const NOT_YET_ACKNOWLEDGED = new Set<unknown>([10008, 10015]);

/**
 * A call on the interaction's webhook, sent right after the HTTP answer that acknowledged it: it
 * can reach Discord before Discord has acted on that answer, and then finds no message. Tried
 * again for a few seconds (the token lasts 15 minutes); any other error is final.
 */
function afterAcknowledged(call: () => Promise<unknown>): Promise<unknown> {
  return pRetry(call, {
    retries: 4,
    minTimeout: 250,
    factor: 2,
    shouldRetry: ({ error }) =>
      error instanceof DiscordAPIError && NOT_YET_ACKNOWLEDGED.has(error.code),
  });
}

/** Through REST with the interaction's token (no bot token: these routes take none). */
function webhooks(interaction: APIInteraction, rest: REST) {
  const original = Routes.webhookMessage(interaction.application_id, interaction.token);
  return {
    editOriginal: async (answer: Answered) => {
      const { body, files } = apiMessage(withoutFlags(renderDiscord(answer.reply)));
      await afterAcknowledged(() => rest.patch(original, { body, files, auth: false }));
    },
    deleteOriginal: async () => {
      await afterAcknowledged(() => rest.delete(original, { auth: false }));
    },
    followUp: async (answer: Answered, ephemeral: boolean) => {
      const { body, files } = apiMessage(renderDiscord(answer.reply), ephemeral);
      await afterAcknowledged(() =>
        rest.post(Routes.webhook(interaction.application_id, interaction.token), {
          body,
          files,
          auth: false,
        }),
      );
    },
  };
}

/** A message answer in the HTTP response; it cannot carry files (Discord refuses multipart there). */
function inline(answer: Answered, type: 4 | 7): APIInteractionResponse | undefined {
  const message = renderDiscord(answer.reply);
  if (message.files.length > 0) return undefined;
  const { body } = apiMessage(
    type === 7 ? withoutFlags(message) : message,
    type === 4 && isForInvoker(answer),
  );
  return type === 4
    ? { type: InteractionResponseType.ChannelMessageWithSource, data: body }
    : { type: InteractionResponseType.UpdateMessage, data: body };
}

async function command(
  interaction: APIChatInputApplicationCommandInteraction,
  deps: InteractionDeps,
): Promise<Handled> {
  const raw: Record<string, string | undefined> = {};
  for (const option of basicOptions(interaction)) raw[option.name] = String(option.value);
  const work = deps.runtime.answerCommand(
    invocation(interaction, deps.names),
    interaction.data.name,
    raw,
  );
  const rest = webhooks(interaction, deps.rest);
  const first = await within(work, deps.deferAfterMs);
  if (first.done) {
    const answer = first.value;
    const response = inline(answer, 4);
    if (response) return { response };
    // A chart or file: deferred (privately when the answer is), then edited in with the upload.
    return {
      response: {
        type: InteractionResponseType.DeferredChannelMessageWithSource,
        ...(isForInvoker(answer) ? { data: { flags: EPHEMERAL } } : {}),
      },
      after: () => rest.editOriginal(answer),
    };
  }
  return {
    response: { type: InteractionResponseType.DeferredChannelMessageWithSource },
    after: async () => {
      const answer = await first.pending;
      if (!isForInvoker(answer)) return rest.editOriginal(answer);
      // The deferred "thinking…" message is public: a private answer replaces it privately.
      await rest.deleteOriginal();
      await rest.followUp(answer, true);
    },
  };
}

async function button(
  interaction: APIMessageComponentInteraction,
  deps: InteractionDeps,
): Promise<Handled> {
  const work = deps.runtime.answerButton(
    invocation(interaction, deps.names),
    interaction.data.custom_id,
  );
  const rest = webhooks(interaction, deps.rest);
  const first = await within(work, deps.deferAfterMs);
  if (first.done) {
    const answer = first.value;
    const private_ = isForInvoker(answer);
    const replace = !private_ && answer.reply.replaceOriginal === true;
    const response = inline(answer, replace ? 7 : 4);
    if (response) return { response };
    if (replace) {
      // @original of a button's interaction is the message it sits under.
      return {
        response: { type: InteractionResponseType.DeferredMessageUpdate },
        after: () => rest.editOriginal(answer),
      };
    }
    return {
      response: {
        type: InteractionResponseType.DeferredChannelMessageWithSource,
        ...(private_ ? { data: { flags: EPHEMERAL } } : {}),
      },
      after: () => rest.editOriginal(answer),
    };
  }
  return {
    response: { type: InteractionResponseType.DeferredMessageUpdate },
    after: async () => {
      const answer = await first.pending;
      if (isForInvoker(answer)) return rest.followUp(answer, true);
      if (answer.reply.replaceOriginal) return rest.editOriginal(answer);
      return rest.followUp(answer, false);
    },
  };
}
