import { join } from "node:path";
import type { Config } from "../config.ts";
import type { Runtime } from "../core/runtime.ts";
import type { Logger } from "../log.ts";
import type { ChatMover } from "../store/move-chat.ts";
import type { Store } from "../store/types.ts";
import { SourceUpdateDedup } from "../store/updates.ts";
import type { SharedPace } from "./pace.ts";
import type { ChatAdapter, PlatformJoinRequestListener } from "./types.ts";

export interface AdapterDeps {
  runtime: Runtime;
  logger: Logger;
  store: Pick<Store, "updates">;
  /** Moves everything of a chat that got a new id (the bot's, with its features' parts). */
  moveChat: ChatMover;
  /** Who decides join requests (a feature's, FeatureSetup.onJoinRequest); absent, the admins. */
  onJoinRequest?: PlatformJoinRequestListener | undefined;
  /** With several instances: the platforms' per-bot limits counted across all of them. */
  sharedPace?: SharedPace | undefined;
  /** For the console chat, used only when no platform is configured: its streams, and for its
   * first words, where the data comes from and where the logs go. */
  console: {
    dataUrl: string;
    simulated: boolean;
    /** The chains served, the default first. */
    chains?: readonly string[] | undefined;
    logFile?: string | undefined;
    /** Where the /verify page is served, once the HTTP host listens (undefined: it does not). */
    pageUrl?: (() => string | undefined) | undefined;
    input?: NodeJS.ReadableStream | undefined;
    output?: NodeJS.WritableStream | undefined;
  };
}

export interface ConfiguredAdapters {
  adapters: ChatAdapter[];
  /** Expired rows the adapters keep (update and interaction ids), for the bot's hourly clean-up. */
  prune: { what: string; run: () => Promise<unknown> }[];
}

/** No chat platform is configured: the bot serves the console chat (and logs to a file). */
export function consoleOnly(config: Config): boolean {
  return config.discord.token === undefined && config.telegram.token === undefined;
}

/**
 * Builds the chat adapters whose settings are present, the console when none is; nothing
 * connects yet (the bot's start() does). A platform's library (discord.js, grammY) loads only
 * when its token is set: it costs start time and memory for nothing otherwise.
 */
export async function configuredAdapters(
  config: Config,
  deps: AdapterDeps,
): Promise<ConfiguredAdapters> {
  const { runtime, logger } = deps;
  const adapters: ChatAdapter[] = [];
  const prune: { what: string; run: () => Promise<unknown> }[] = [];
  if (config.discord.token !== undefined && config.discord.publicKey !== undefined) {
    // HTTP interactions (see Config's discord.mode): no gateway, and discord.js is never loaded.
    const { DiscordHttpAdapter, INTERACTION_REPLAY_WINDOW_MS } = await import(
      "./discord-http/index.ts"
    );
    // Interaction ids are unique across Discord: one source for every application.
    const interactions = new SourceUpdateDedup(deps.store.updates, {
      source: "discord",
      windowMs: INTERACTION_REPLAY_WINDOW_MS,
    });
    prune.push({ what: "Discord interaction ids", run: () => interactions.prune() });
    adapters.push(
      new DiscordHttpAdapter({
        token: config.discord.token,
        publicKey: config.discord.publicKey,
        interactions,
        runtime,
        logger: logger.child({ part: "discord" }),
        apiUrl: config.discord.apiUrl,
        guildId: config.discord.guildId,
        registerOnStart: config.discord.registerOnStart,
        maxInFlight: config.alerts.deliveryConcurrency,
        globalPerSecond: config.discord.globalPerSecond,
        sharedPace: deps.sharedPace,
      }),
    );
  } else if (config.discord.token !== undefined) {
    const { DiscordAdapter } = await import("./discord/index.ts");
    adapters.push(
      new DiscordAdapter({
        token: config.discord.token,
        runtime,
        logger: logger.child({ part: "discord" }),
        apiUrl: config.discord.apiUrl,
        guildId: config.discord.guildId,
        registerOnStart: config.discord.registerOnStart,
        maxInFlight: config.alerts.deliveryConcurrency,
        globalPerSecond: config.discord.globalPerSecond,
        sharedPace: deps.sharedPace,
        fullCaches: config.discord.fullCaches,
      }),
    );
  }
  if (config.telegram.token !== undefined) {
    // Update ids are the bot's own: the bot id before the token's colon keeps two bots apart
    // (and nothing of the secret part is stored).
    const botId = /^(\d+):/.exec(config.telegram.token)?.[1] ?? "bot";
    const updates = new SourceUpdateDedup(deps.store.updates, { source: `telegram:${botId}` });
    prune.push({ what: "Telegram update ids", run: () => updates.prune() });
    const { TelegramAdapter } = await import("./telegram/index.ts");
    adapters.push(
      new TelegramAdapter({
        token: config.telegram.token,
        apiRoot: config.telegram.apiRoot,
        runtime,
        logger: logger.child({ part: "telegram" }),
        onChatMigrated: async (from, to) => {
          await deps.moveChat("telegram", from, to);
          logger.info(
            { part: "telegram", chat: from, newChat: to },
            "group upgraded to a supergroup; everything of it follows",
          );
        },
        updates,
        ...(deps.onJoinRequest
          ? { onJoinRequest: deps.onJoinRequest.bind(undefined, "telegram") }
          : {}),
        webhook: config.telegram.webhook,
        sharedPace: deps.sharedPace,
      }),
    );
  }
  if (consoleOnly(config)) {
    const { ConsoleAdapter, consoleGreeting } = await import("./console/index.ts");
    const { input, output, dataUrl, simulated, logFile, chains, pageUrl } = deps.console;
    adapters.push(
      new ConsoleAdapter({
        runtime,
        logger: logger.child({ part: "console" }),
        greeting: () => consoleGreeting(dataUrl, simulated, logFile, chains, pageUrl?.()),
        exportDir: join(config.dataDir, "exports"),
        ...(input ? { input } : {}),
        ...(output ? { output } : {}),
      }),
    );
  }
  return { adapters, prune };
}
