// @discordjs/rest and discord-api-types, not discord.js: `npm run register` and HTTP-interactions
// mode register commands without loading the gateway client.
import { REST } from "@discordjs/rest";
import {
  ApplicationCommandOptionType,
  PermissionFlagsBits,
  type RESTPostAPIChatInputApplicationCommandsJSONBody,
  Routes,
} from "discord-api-types/v10";
import { shownOptions } from "../../core/chain-option.ts";
import type { AnyCommand, AnyOption } from "../../core/command.ts";
import { cutText } from "../../strings.ts";

/** Discord's REST base, unless DISCORD_API_URL points elsewhere (a proxy, a fake in tests). */
export const DISCORD_API_URL = "https://discord.com/api";

const MAX_CHOICES = 25;
const MAX_DESCRIPTION = 100;

const optionType = (option: AnyOption) =>
  option.kind === "integer"
    ? ApplicationCommandOptionType.Integer
    : option.kind === "boolean"
      ? ApplicationCommandOptionType.Boolean
      : option.kind === "role"
        ? ApplicationCommandOptionType.Role
        : // Token ids and amounts are strings: INTEGER holds only +-2^53.
          ApplicationCommandOptionType.String;

const cut = (text: string, max = MAX_DESCRIPTION) => cutText(text, max, { unit: "utf16" });

/**
 * The slash-command registration payload, built from the same definitions as /help and the
 * Telegram menu. Required options come first (Discord refuses them after optional ones);
 * commands that change channel settings are hidden from members without Manage Channels.
 * Hidden (retired) commands are not registered at all.
 */
export function slashCommands(
  commands: readonly AnyCommand[],
): RESTPostAPIChatInputApplicationCommandsJSONBody[] {
  const shown = commands.filter((command) => !command.hidden);
  return shown.map((command) => {
    // Hidden options (the chain when there is one) are left out: nothing to choose.
    const options = shownOptions(command)
      .map(([name, option]) => {
        const base = {
          type: optionType(option),
          name,
          description: cut(option.description),
          required: option.required,
        };
        if (option.choices && option.choices.length <= MAX_CHOICES) {
          return {
            ...base,
            choices: option.choices.map((choice) => ({
              name: cut(choice.name),
              value: choice.value,
            })),
          };
        }
        if (option.autocomplete) return { ...base, autocomplete: true };
        return base;
      })
      .sort((a, b) => Number(b.required) - Number(a.required));
    return {
      name: command.name,
      description: cut(command.description),
      options: options as RESTPostAPIChatInputApplicationCommandsJSONBody["options"],
      ...(command.requiresManageChannel
        ? { default_member_permissions: PermissionFlagsBits.ManageChannels.toString() }
        : {}),
    };
  });
}

/** Registers the commands globally, or to one guild (instant, for development). */
export async function registerSlashCommands(options: {
  token: string;
  commands: readonly AnyCommand[];
  guildId?: string | undefined;
  apiUrl?: string | undefined;
  applicationId?: string;
}): Promise<{ applicationId: string; count: number; scope: string }> {
  const rest = new REST(options.apiUrl ? { api: options.apiUrl } : {}).setToken(options.token);
  const applicationId =
    options.applicationId ?? ((await rest.get(Routes.currentApplication())) as { id: string }).id;
  const body = slashCommands(options.commands);
  const route = options.guildId
    ? Routes.applicationGuildCommands(applicationId, options.guildId)
    : Routes.applicationCommands(applicationId);
  await rest.put(route, { body });
  return {
    applicationId,
    count: body.length,
    scope: options.guildId ? `guild ${options.guildId}` : "global",
  };
}
