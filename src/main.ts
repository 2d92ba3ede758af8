import { createBot } from "./bot.ts";
import { ConfigError, loadDotEnv, parseConfig, secretsOf } from "./config.ts";
import { createLogger } from "./log.ts";

/** The process entry: settings, logger, the bot, and a clean shutdown on signals or end of input. */
async function main(): Promise<void> {
  loadDotEnv();
  let config: ReturnType<typeof parseConfig>;
  try {
    config = parseConfig(process.env);
  } catch (error) {
    if (error instanceof ConfigError) {
      process.stderr.write(`${error.message}\n`);
      process.exit(1);
    }
    throw error;
  }
  const consoleMode = config.discord.token === undefined && config.telegram.token === undefined;
  // In the console chat, info lines on stderr would interleave with the conversation.
  const level = consoleMode && process.env.LOG_LEVEL === undefined ? "warn" : config.logLevel;
  const logger = createLogger({ level, secrets: secretsOf(config) });

  process.on("unhandledRejection", (reason) =>
    logger.error({ err: reason }, "unhandled rejection"),
  );
  process.on("uncaughtException", (error) => logger.error({ err: error }, "uncaught exception"));

  const bot = await createBot(config, { logger });
  let exiting = false;
  const shutdown = async (why: string, code = 0) => {
    if (exiting) return;
    exiting = true;
    logger.info({ why }, "shutting down");
    const force = setTimeout(() => process.exit(code || 1), 10_000);
    force.unref();
    try {
      await bot.stop();
    } catch (error) {
      logger.error({ err: error }, "error while shutting down");
    }
    logger.flush();
    process.exit(code);
  };
  process.on("SIGINT", () => void shutdown("SIGINT"));
  process.on("SIGTERM", () => void shutdown("SIGTERM"));
  if (bot.console) void bot.finished.then(() => shutdown("end of input"));
}

void main();
