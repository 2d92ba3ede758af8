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

/**
 * `npm run register`: publishes the slash commands (globally, or to DISCORD_GUILD_ID), and says
 * what to paste as the Interactions Endpoint URL for HTTP interactions mode.
 */
async function main(): Promise<void> {
  loadDotEnv();
  const config = parseConfig(process.env);
  if (!config.discord.token)
    throw new ConfigError("DISCORD_TOKEN is required to register slash commands.");
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
      `Add the bot to a server with ${inviteUrl(result.applicationId)}\n`,
  );
  const hint = interactionsEndpointHint(config.http.publicUrl, config.discord.mode === "http");
  process.stdout.write(`${hint.join("\n")}\n`);
}

main().catch((error: unknown) => {
  process.stderr.write(`${error instanceof Error ? error.message : String(error)}\n`);
  process.exit(1);
});
