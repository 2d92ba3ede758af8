/** Where the bot's HTTP host takes Discord's interactions. */
export const INTERACTIONS_PATH = "/discord/interactions";

/**
 * What `npm run register` prints for the developer portal's "Interactions Endpoint URL": the URL
 * itself when PUBLIC_URL says where the HTTP host is reached from outside, else how to form it.
 */
export function interactionsEndpointHint(
  publicUrl: string | undefined,
  httpMode: boolean,
): string[] {
  const lines = publicUrl
    ? [`Interactions Endpoint URL: ${publicUrl}${INTERACTIONS_PATH}`]
    : [
        `Interactions Endpoint URL: https://<where your HTTP host is reached>${INTERACTIONS_PATH} (set PUBLIC_URL to have it printed)`,
      ];
  lines.push(
    httpMode
      ? "Paste it in the developer portal (General Information) while the bot runs: Discord checks it with a PING and a forged request when it is saved."
      : "Only for HTTP interactions mode (DISCORD_PUBLIC_KEY); the bot now uses the gateway, so leave the portal's field empty.",
  );
  return lines;
}
