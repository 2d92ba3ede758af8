import { allCommands } from "../commands/index.ts";
import { registerSlashCommands } from "./adapters/discord/commands.ts";
import { inviteUrl } from "./adapters/discord/invite.ts";
import { interactionsEndpointHint } from "./adapters/discord-http/endpoint.ts";
import { ConfigError, loadDotEnv, parseConfig } from "./config.ts";
import { servedCommands } from "./core/chain-option.ts";
import { buildRegistry } from "./core/registry.ts";

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
  const commands = [...buildRegistry(servedCommands(allCommands(), config.chains)).values()];
  const result = await registerSlashCommands({
    token: config.discord.token,
    commands,
    guildId: config.discord.guildId,
    apiUrl: config.discord.apiUrl,
  });
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
