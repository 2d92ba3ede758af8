import { allCommands } from "../commands/index.ts";
import { DISCORD_API_URL, registerSlashCommands } from "./adapters/discord/commands.ts";
import { inviteUrl } from "./adapters/discord/invite.ts";
import { interactionsEndpointHint } from "./adapters/discord-http/endpoint.ts";
import { explainFailure } from "./cause.ts";
import { ConfigError, loadDotEnv, parseConfig, secretsOf } from "./config.ts";
import { servedCommands } from "./core/chain-option.ts";
import { buildRegistry } from "./core/registry.ts";
import { FEATURES } from "./features.ts";
import { featureCommands } from "./kernel/feature.ts";
import { scrubSecrets } from "./log.ts";

/** What `npm run register` says when DISCORD_TOKEN is not set: where to get it, in plain words. */
const NO_TOKEN = [
  "DISCORD_TOKEN is not set: npm run register publishes the bot's slash commands with its token.",
  "Get it in the Discord Developer Portal (https://discord.com/developers/applications): your application → Bot → Reset Token, and copy the token shown.",
  "Then run DISCORD_TOKEN=<the token> npm run register, or put DISCORD_TOKEN=<the token> in .env.",
  "The application id is not needed: it is read from the token, and the invite link printed here carries it.",
].join("\n");

/** How soon the commands show, and how to have them at once on one server. */
function whenTheyShow(guildId: string | undefined): string {
  return guildId
    ? "They show on that server (DISCORD_GUILD_ID) at once; without DISCORD_GUILD_ID they are registered globally, for every server the bot is in."
    : "Global commands can take up to an hour to appear in Discord. To try them at once, set DISCORD_GUILD_ID to a server's id (the bot must be in it) and register again: they then show on that one server at once.";
}

/**
 * `npm run register`: publishes the slash commands (globally, or to DISCORD_GUILD_ID), says when
 * they show, and whether to set or leave empty the portal's Interactions Endpoint URL.
 */
async function main(): Promise<void> {
  loadDotEnv();
  const config = parseConfig(process.env);
  if (!config.discord.token) throw new ConfigError(NO_TOKEN);
  // As the bot serves them: with the chain option and its choices when CHAINS names several.
  const commands = [
    ...buildRegistry(
      servedCommands(allCommands(featureCommands(FEATURES)), config.chains),
    ).values(),
  ];
  const { token, guildId, apiUrl } = config.discord;
  let result: Awaited<ReturnType<typeof registerSlashCommands>>;
  try {
    result = await registerSlashCommands({ token, commands, guildId, apiUrl });
  } catch (error) {
    const cause = explainFailure(error, {
      service: "Discord",
      url: apiUrl ?? DISCORD_API_URL,
      credential: "DISCORD_TOKEN",
      credentialName: "bot token",
    });
    // A guild's commands need the application in that guild, with the applications.commands scope.
    const hint =
      cause.kind === "forbidden" && guildId
        ? `. Is the bot in the server DISCORD_GUILD_ID (${guildId}), invited with the applications.commands scope?`
        : "";
    throw new Error(scrubSecrets(`${cause.line}${hint}`, secretsOf(config)));
  }
  process.stdout.write(
    `Registered ${result.count} commands (${result.scope}) for application ${result.applicationId}.\n` +
      `${whenTheyShow(guildId)}\n` +
      `Add the bot to a server with ${inviteUrl(result.applicationId)}\n`,
  );
  const hint = interactionsEndpointHint(config.http.publicUrl, config.discord.mode === "http");
  process.stdout.write(`${hint.join("\n")}\n`);
}

main().catch((error: unknown) => {
  process.stderr.write(`${error instanceof Error ? error.message : String(error)}\n`);
  process.exit(1);
});
