import { type Chain, ChainsError, parseChains, SIMULATOR_CHAIN_IDS } from "./chains.ts";

/**
 * What follows from several settings together (src/config.ts completes the settings with it):
 * the chains served, and the one HTTP server's port and address. A ConfigError says which
 * setting is wrong and why, never its value.
 */

/** A setting that cannot hold: its message names the variable, never the value. */
export class ConfigError extends Error {
  override name = "ConfigError";
}

/** What the chains are completed from (the settings of those names). */
export interface ChainSettings {
  chains?: string | undefined;
  explorerUrl: string;
  api: { baseUrl?: string | undefined; apiKey?: string | undefined };
}

/**
 * CHAINS, completed: the first chain takes API_BASE_URL when it has no URL of its own, API_KEY is
 * every chain's key unless it has one, EXPLORER_URL is the explorer of a lone ethereum. Either no
 * chain has a URL (the embedded simulator serves them all) or every chain has one.
 */
export function resolveChains(settings: ChainSettings): Chain[] {
  const { api } = settings;
  let chains: Chain[];
  try {
    chains =
      settings.chains === undefined && api.baseUrl === undefined
        ? parseChains(SIMULATOR_CHAIN_IDS.join(","), undefined)
        : parseChains(settings.chains, api.baseUrl);
  } catch (error) {
    if (error instanceof ChainsError)
      throw new ConfigError(`Invalid setting CHAINS: ${error.message}`);
    throw error;
  }
  const [first] = chains;
  if (first && first.baseUrl === undefined) first.baseUrl = api.baseUrl;
  if (settings.chains === undefined && first) first.explorer = settings.explorerUrl;
  const missing = chains.filter((chain) => chain.baseUrl === undefined);
  if (missing.length > 0 && missing.length < chains.length) {
    throw new ConfigError(
      `Invalid setting CHAINS: chain "${missing[0]?.id}" has no data-service URL (give each chain one, e.g. ${missing[0]?.id}=https://…, or none to use the embedded simulator)`,
    );
  }
  for (const chain of chains) chain.apiKey ??= api.apiKey;
  return chains;
}

/**
 * The port when something from outside calls the bot (the Telegram webhook, Discord HTTP
 * interactions) and no port variable is set (Telegram's own choice).
 */
const DEFAULT_WEBHOOK_PORT = 8443;

/** The HTTP server's port settings (HTTP_PORT and its older names) and addresses. */
export interface HttpSettings {
  port?: number | undefined;
  metricsPort?: number | undefined;
  webhookPort?: number | undefined;
  host?: string | undefined;
  metricsHost?: string | undefined;
}

/**
 * HTTP_PORT, or its aliases METRICS_PORT and TELEGRAM_WEBHOOK_PORT (from when each had its own
 * server): two set to different ports cannot both hold, and the bot refuses to start. None set:
 * a free loopback port (the verification page needs a server). 0 is "no server", as
 * METRICS_PORT=0 always was: it gives way to a port set under another name, and to
 * the webhook's 8443 (an .env copied from an older example has METRICS_PORT=0 beside a webhook).
 * The address is HTTP_HOST; METRICS_HOST, the metrics server's own, counts only without the
 * webhook, which has always listened on every interface. `called`: the Telegram webhook or Discord
 * HTTP interactions are served, so the server is needed and must be reachable from outside.
 */
export function resolveHttp(http: HttpSettings, called: boolean) {
  const given: [string, number][] = [];
  for (const [name, value] of [
    ["HTTP_PORT", http.port],
    ["METRICS_PORT", http.metricsPort],
    ["TELEGRAM_WEBHOOK_PORT", http.webhookPort],
  ] as const)
    if (value !== undefined && value !== 0) given.push([name, value]);
  if (new Set(given.map(([, port]) => port)).size > 1) {
    throw new ConfigError(
      `Invalid settings ${given.map(([name, port]) => `${name}=${port}`).join(", ")}: one HTTP server serves health, metrics and the Telegram webhook; set HTTP_PORT only (the others are its older names)`,
    );
  }
  const off = [http.port, http.metricsPort, http.webhookPort].includes(0);
  const [variable, port] = given[0] ?? [
    "HTTP_PORT",
    called ? DEFAULT_WEBHOOK_PORT : off ? undefined : 0,
  ];
  const host = http.host ?? (called ? "0.0.0.0" : (http.metricsHost ?? "127.0.0.1"));
  /**
   * undefined: no HTTP server (a port name set to 0). 0, when none is set: a free port the system
   * picks on loopback, so the verification page (/verify) works with no settings at all.
   * `variable` names the setting the port came from, for errors.
   */
  return { port, host, variable };
}
