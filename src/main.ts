import { join } from "node:path";
import { getHeapStatistics } from "node:v8";
import { consoleOnly } from "./adapters/index.ts";
import { type Bot, createBot } from "./bot.ts";
import {
  ConfigError,
  dataServiceRefusal,
  heapRoomProblem,
  loadDotEnv,
  parseConfig,
  secretsOf,
} from "./config.ts";
import { StartupError } from "./errors.ts";
import { createLogger, logFileDestination, scrubSecrets, stderrDestination } from "./log.ts";
import type { LogDestination } from "./log-destination.ts";
import { ConnectError, checkDataServices } from "./startup.ts";

/**
 * A log file, or undefined when it cannot be opened: the logs then stay on stderr, and the
 * database, in the same folder, fails to open with a clear line. A file that cannot be written
 * later (a full disk) says so on stderr, once, and again when it is written again.
 */
function openLogFile(path: string): { path: string; destination: LogDestination } | undefined {
  try {
    return {
      path,
      destination: logFileDestination(path, (line) => process.stderr.write(`${line}\n`)),
    };
  } catch {
    return undefined;
  }
}

/** The process's hard deadline once it stops: whatever still runs then is cut short. */
const EXIT_WITHIN_MS = 10_000;

/**
 * The process entry: settings, logger, the bot, and a clean shutdown on signals or end of input.
 *
 * Logs are JSON lines on stderr, except in the console chat (no chat token set), where they go to
 * DATA_DIR/bot.log so that only the conversation shows. Every failure to start exits with code 1
 * after one plain line on stderr saying what failed and where, once, so a supervisor (systemd,
 * Docker) restarts the bot and the operator sees why: when the logs go to a file, the failure is
 * also logged there at fatal (with the stack when its cause is not known); when they share stderr
 * with the line, nothing repeats it (its details are logged at debug only). After start, an unhandled rejection or uncaught exception is a bug whose effects are
 * unknown (a part may have stopped for good while the process looks alive): it is logged at fatal
 * (with one plain line on stderr too when the logs go to a file) and the process stops with code 1
 * (the ordered shutdown first, bounded by its 10 s timer), to be restarted clean rather than kept
 * half-broken (queued alerts survive a crash). No step of a stop may block the main thread: the
 * logs' destination never retries a failed write synchronously (a full disk hung the bot), and the
 * 10 s timer is set before anything else is done.
 */
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
  const heapProblem = heapRoomProblem(config.cache.maxBytes, getHeapStatistics().heap_size_limit);
  if (heapProblem) {
    process.stderr.write(`${heapProblem}\n`);
    process.exit(1);
  }
  // Before anything connects: made-up data never reaches a real chat unless that is meant.
  const refusal = dataServiceRefusal(config);
  if (refusal) {
    process.stderr.write(`${refusal}\n`);
    process.exit(1);
  }
  const consoleMode = consoleOnly(config);
  const secrets = secretsOf(config);
  // The console chat shows the conversation only: its logs go to a file under DATA_DIR.
  const logFile = consoleMode ? openLogFile(join(config.dataDir, "bot.log")) : undefined;
  const destination = logFile?.destination ?? stderrDestination();
  const logger = createLogger({ level: config.logLevel, secrets, destination });
  // What is still gathered goes out at exit, in one attempt (none if the destination failed).
  process.on("exit", () => destination.flushSync());

  let bot: Bot | undefined;
  let exiting = false;
  const exitAfterFlush = (code: number) => {
    // Should the flush never call back, the process still ends with this code once idle.
    process.exitCode = code;
    logger.flush(() => process.exit(code));
  };
  const shutdown = async (why: string, code = 0) => {
    if (exiting) return;
    exiting = true;
    const force = setTimeout(() => process.exit(code || 1), EXIT_WITHIN_MS);
    force.unref();
    logger.info({ why }, "shutting down");
    try {
      await bot?.stop();
    } catch (error) {
      logger.error({ err: error }, "error while shutting down");
    }
    exitAfterFlush(code);
  };
  const crash = (what: string) => (error: unknown) => {
    if (!exiting) {
      // The deadline first: nothing below may keep the process from ending.
      setTimeout(() => process.exit(1), EXIT_WITHIN_MS).unref();
    }
    try {
      logger.fatal(
        { err: error },
        `${what}: stopping (a bug; the supervisor should restart the bot)`,
      );
      if (logFile) process.stderr.write(`The bot stops on a bug (${what}): see ${logFile.path}\n`);
    } catch {
      // A log that cannot be written must not stop the stop.
    }
    void shutdown(what, 1);
  };
  process.on("unhandledRejection", crash("unhandled rejection"));
  process.on("uncaughtException", crash("uncaught exception"));

  /** What goes to stderr and the fatal log: one line, secrets scrubbed. */
  const oneLine = (text: string) => scrubSecrets(text, secrets).replace(/\s*\n\s*/g, " ");
  const say = (line: string) => process.stderr.write(`${oneLine(line)}\n`);
  try {
    bot = await createBot(config, {
      logger,
      logState: () => destination.state(),
      notice: say,
      ...(logFile ? { logFile: logFile.path } : {}),
    });
    // The data service, once, before the platforms: a refused key stops here with its cause.
    if (!config.simulated) {
      const services = bot.chains.map(({ name, baseUrl, apiKey }) => ({
        name,
        baseUrl: baseUrl ?? "",
        apiKey,
      }));
      await checkDataServices(services, config.api.timeoutMs, logger, say).catch(
        async (error: unknown) => {
          await bot?.stop();
          throw error;
        },
      );
    }
    await bot.start();
  } catch (error) {
    const line = oneLine(
      error instanceof StartupError
        ? error.message
        : `Cannot start the bot: ${error instanceof Error ? error.message : String(error)}`,
    );
    exiting = true;
    const cause = error instanceof ConnectError ? { cause: error.failure.kind } : {};
    if (logFile) {
      // The logs are in a file: the line for the operator, the failure in the log too. A known
      // cause (DNS, refused, TLS, a refused token) is all in its line: the details, stack
      // included, only at debug level.
      process.stderr.write(`${line}\n`);
      if (error instanceof ConnectError) {
        logger.debug({ err: error }, line);
        logger.fatal(cause, line);
      } else logger.fatal({ err: error }, line);
    } else {
      // The logs share stderr with the line: said once, the details only at debug level.
      logger.debug({ err: error, ...cause }, line);
      process.stderr.write(`${line}\n`);
    }
    exitAfterFlush(1);
    return;
  }
  process.on("SIGINT", () => void shutdown("SIGINT"));
  process.on("SIGTERM", () => void shutdown("SIGTERM"));
  if (consoleMode) void bot.finished.then(() => shutdown("end of input"));
}

void main();
