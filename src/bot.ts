import { allCommands } from "../commands/index.ts";
import { ConsoleAdapter } from "./adapters/console/index.ts";
import { DiscordAdapter } from "./adapters/discord/index.ts";
import { TelegramAdapter } from "./adapters/telegram/index.ts";
import { type ApiClient, createApiClient } from "./api/client.ts";
import type { Config } from "./config.ts";
import { MemoryActionStore } from "./core/actions.ts";
import { Runtime } from "./core/runtime.ts";
import type { Logger } from "./log.ts";
import { type Simulator, startSimulator } from "./simulator/index.ts";

export interface BotDeps {
  logger: Logger;
  /** Console chat streams (default stdin/stdout). */
  input?: NodeJS.ReadableStream;
  output?: NodeJS.WritableStream;
}

export interface Bot {
  runtime: Runtime;
  api: ApiClient;
  simulator: Simulator | undefined;
  console: ConsoleAdapter | undefined;
  telegram: TelegramAdapter | undefined;
  discord: DiscordAdapter | undefined;
  /** Resolves when the console's input has ended and every reply is out (console mode only). */
  finished: Promise<void>;
  stop(): Promise<void>;
}

/**
 * Wires the parts from the settings and starts them: the embedded simulator when no data-service
 * URL is set, the client, the runtime, and the chat adapters whose tokens are set (the console
 * when there are none).
 */
export async function createBot(config: Config, deps: BotDeps): Promise<Bot> {
  const { logger } = deps;
  let simulator: Simulator | undefined;
  let baseUrl = config.api.baseUrl;
  let apiKey = config.api.apiKey;
  if (baseUrl === undefined) {
    simulator = await startSimulator({
      port: config.simulator.port,
      apiKey: config.simulator.apiKey,
      seed: config.simulator.seed,
      mintIntervalMs: config.simulator.mintIntervalMs,
    });
    baseUrl = simulator.url;
    apiKey = simulator.apiKey;
    logger.info({ url: simulator.url }, "no API_BASE_URL: using the embedded simulator");
  }
  const api = createApiClient(config, baseUrl, apiKey, logger.child({ part: "api" }));
  const runtime = new Runtime({
    commands: allCommands(),
    api,
    actions: new MemoryActionStore(),
    logger: logger.child({ part: "runtime" }),
    settings: { explorerUrl: config.explorerUrl },
    deadlineMs: config.commandDeadlineMs,
    rateLimit: config.rateLimit,
    buttonTtlSeconds: config.buttonTtlSeconds,
  });

  let discord: DiscordAdapter | undefined;
  if (config.discord.token !== undefined) {
    discord = new DiscordAdapter({
      token: config.discord.token,
      runtime,
      logger: logger.child({ part: "discord" }),
      apiUrl: config.discord.apiUrl,
      guildId: config.discord.guildId,
      registerOnStart: config.discord.registerOnStart,
    });
    await discord.start();
  }

  let telegram: TelegramAdapter | undefined;
  if (config.telegram.token !== undefined) {
    telegram = new TelegramAdapter({
      token: config.telegram.token,
      apiRoot: config.telegram.apiRoot,
      runtime,
      logger: logger.child({ part: "telegram" }),
      webhook:
        config.telegram.webhookUrl && config.telegram.webhookSecret
          ? {
              url: config.telegram.webhookUrl,
              secret: config.telegram.webhookSecret,
              port: config.telegram.webhookPort,
            }
          : undefined,
    });
    await telegram.start();
  }

  let consoleAdapter: ConsoleAdapter | undefined;
  const chatTokens = config.discord.token !== undefined || config.telegram.token !== undefined;
  if (!chatTokens) {
    consoleAdapter = new ConsoleAdapter({
      runtime,
      logger: logger.child({ part: "console" }),
      ...(deps.input ? { input: deps.input } : {}),
      ...(deps.output ? { output: deps.output } : {}),
    });
    consoleAdapter.start();
  }

  let stopped = false;
  return {
    runtime,
    api,
    simulator,
    console: consoleAdapter,
    telegram,
    discord,
    finished: consoleAdapter ? consoleAdapter.done : new Promise<void>(() => {}),
    async stop() {
      if (stopped) return;
      stopped = true;
      consoleAdapter?.stop();
      await telegram?.stop();
      await discord?.stop();
      await runtime.drain();
      await api.close();
      await simulator?.close();
    },
  };
}
