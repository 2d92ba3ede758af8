import { type DestinationStream, type Logger, pino } from "pino";

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

function scrubValue(value: unknown, secrets: readonly string[], depth: number): unknown {
  if (typeof value === "string") return scrubSecrets(value, secrets);
  if (depth > 6 || value === null || typeof value !== "object") return value;
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
 * Structured JSON logs. Known secret-bearing keys are redacted by path, and every secret value is
 * scrubbed from whatever else is logged (messages, error stacks, nested objects).
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
      serializers: { err: pino.stdSerializers.err },
      formatters:
        secrets.length > 0
          ? { log: (object) => scrubValue(object, secrets, 0) as Record<string, unknown> }
          : {},
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
    options.destination ?? pino.destination({ dest: 2, sync: false }),
  );
}

/** A logger that writes nothing, for tests and tools that do not care. */
export function silentLogger(): Logger {
  return pino({ level: "silent" });
}
