import { mkdirSync, openSync } from "node:fs";
import { dirname } from "node:path";
import { type DestinationStream, type Logger, pino } from "pino";
import { ApiError } from "./api/errors.ts";
import { LogDestination } from "./log-destination.ts";
import { mapStack } from "./stacks.ts";

export type { Logger };

const REDACTED = "[redacted]";

/** Replaces every occurrence of a secret in a string. */
export function scrubSecrets(text: string, secrets: readonly string[]): string {
  let out = text;
  for (const secret of secrets) {
    if (secret.length > 0 && out.includes(secret)) out = out.split(secret).join(REDACTED);
  }
  return out;
}

/**
 * Copies a log object with every error in it serialized (pino's shape: type, message and stack
 * with their causes, enumerable properties; an error's message and stack are not enumerable, so a
 * plain copy loses them; a data-service error without its stack; the stack's compiled frames
 * pointed at the sources) and every secret scrubbed from its strings.
 */
function scrubValue(value: unknown, secrets: readonly string[], depth: number): unknown {
  if (typeof value === "string") return scrubSecrets(value, secrets);
  if (depth > 6 || value === null || typeof value !== "object") return value;
  if (value instanceof Error) {
    const serialized: Record<string, unknown> = { ...pino.stdSerializers.err(value) };
    // A data-service failure is an outcome, not a bug: its kind, status and path say it all.
    if (value instanceof ApiError) delete serialized.stack;
    else if (typeof serialized.stack === "string") serialized.stack = mapStack(serialized.stack);
    return scrubValue(serialized, secrets, depth + 1);
  }
  if (Array.isArray(value)) return value.map((item) => scrubValue(item, secrets, depth + 1));
  const out: Record<string, unknown> = {};
  for (const [key, item] of Object.entries(value)) out[key] = scrubValue(item, secrets, depth + 1);
  return out;
}

export interface LoggerOptions {
  level: string;
  /** Values that must never appear in a log line (API key, bot tokens). */
  secrets?: readonly string[];
  destination?: DestinationStream;
}

/**
 * Structured JSON logs. Known secret-bearing keys are redacted by path, errors anywhere in a log
 * object keep their message and stack, and every secret value is scrubbed from whatever else is
 * logged (messages, error stacks, nested objects).
 */
export function createLogger(options: LoggerOptions): Logger {
  const secrets = options.secrets ?? [];
  return pino(
    {
      level: options.level,
      base: null,
      redact: {
        paths: [
          "apiKey",
          "token",
          "headers['x-api-key']",
          "*.apiKey",
          "*.token",
          "config.api.apiKey",
        ],
        censor: REDACTED,
      },
      // Errors are serialized by the formatter, wherever they are in the object; pino's own `err`
      // serializer would serialize them again (and call every object with a message "Object").
      serializers: { err: (value: unknown) => value },
      formatters: { log: (object) => scrubValue(object, secrets, 0) as Record<string, unknown> },
      hooks:
        secrets.length > 0
          ? {
              logMethod(args, method) {
                method.apply(
                  this,
                  args.map((arg) =>
                    typeof arg === "string" ? scrubSecrets(arg, secrets) : arg,
                  ) as Parameters<typeof method>,
                );
              },
            }
          : {},
    },
    options.destination ?? stderrDestination(),
  );
}

/** How long a log line may wait in the buffer before it is written. */
const LOG_FLUSH_MS = 200;
/** How often a destination that failed (a full disk) is tried again. */
const LOG_RETRY_MS = 5_000;

/**
 * Lines gathered up to 4 KiB (or LOG_FLUSH_MS) per write: a write per line cost a command as much
 * as its own rendering. A destination whose write fails drops its lines (counted) and is tried
 * again every LOG_RETRY_MS; nothing it does throws or blocks (src/log-destination.ts).
 */
function bufferedDestination(
  fd: number,
  name: string,
  notice?: (line: string) => void,
): LogDestination {
  return new LogDestination(fd, {
    name,
    minLength: 4096,
    flushMs: LOG_FLUSH_MS,
    retryMs: LOG_RETRY_MS,
    ...(notice ? { notice } : {}),
  });
}

/** JSON lines on stderr, buffered (the logs' destination unless they go to a file). */
export function stderrDestination(): LogDestination {
  return bufferedDestination(2, "stderr");
}

/**
 * A log file, appended to (its folder made if need be). Opened here, synchronously, so a path that
 * cannot be opened throws now. A write that fails later (a full disk) is told through `notice`,
 * once, and again when the file is written again.
 */
export function logFileDestination(path: string, notice?: (line: string) => void): LogDestination {
  mkdirSync(dirname(path), { recursive: true });
  return bufferedDestination(openSync(path, "a"), `log file ${path}`, notice);
}

/** A logger that writes nothing, for tests and tools that do not care. */
export function silentLogger(): Logger {
  return pino({ level: "silent" });
}
