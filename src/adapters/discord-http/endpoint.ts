/** Where the bot's HTTP host takes Discord's interactions. */
export const INTERACTIONS_PATH = "/discord/interactions";

/**
 * What `npm run register` prints for the developer portal's "Interactions Endpoint URL"
 * (General Information). In HTTP interactions mode (DISCORD_PUBLIC_KEY set) it is to be set: the
 * URL itself when PUBLIC_URL says where the HTTP host is reached from outside, else how to form
 * it. In gateway mode it is to be left empty, and no URL is printed: while the field holds one,
 * Discord sends interactions there instead of over the gateway.
 */
export function interactionsEndpointHint(
  publicUrl: string | undefined,
  httpMode: boolean,
): string[] {
  if (!httpMode)
    return [
      "Interactions Endpoint URL (developer portal, General Information): leave it empty. This bot uses the gateway (DISCORD_PUBLIC_KEY is not set), and while that field holds a URL Discord sends commands there instead.",
      "(Only for HTTP interactions mode: set DISCORD_PUBLIC_KEY, and PUBLIC_URL, then register again to have the URL to set printed.)",
    ];
  return [
    publicUrl
      ? `Interactions Endpoint URL: ${publicUrl}${INTERACTIONS_PATH}`
      : `Interactions Endpoint URL: https://<where your HTTP host is reached>${INTERACTIONS_PATH} (set PUBLIC_URL to have it printed)`,
    "Set it in the developer portal (General Information → Interactions Endpoint URL), since this bot takes interactions over HTTP (DISCORD_PUBLIC_KEY is set). Save it while the bot runs: Discord checks it with a PING and a forged request first.",
  ];
}
