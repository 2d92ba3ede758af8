import { z } from "zod";
import { emptyToUndefined } from "./env.ts";

/**
 * What the values of the settings with a shape of their own must be (src/config.ts reads each
 * from its variable): a refusal names the variable and says what it must be, and never repeats
 * the value.
 */

/** A parsable URL with one of `protocols` ("redis:") that names a host. */
function isUrlOf(value: string, protocols: readonly string[]): boolean {
  try {
    const url = new URL(value);
    return protocols.includes(url.protocol) && url.hostname !== "";
  } catch {
    return false;
  }
}

/** `simulator` or unset (see the setting). */
export const dataServiceChoice = z.preprocess(
  emptyToUndefined,
  z
    .string()
    .refine((value) => value === "simulator", {
      message: "must be simulator (or unset: the data service at API_BASE_URL)",
    })
    .transform(() => "simulator" as const)
    .optional(),
);

/** The data service's path for a not-spam report: it names the wallet and the contract. */
export const reportNotSpamPath = z.preprocess(
  emptyToUndefined,
  z
    .string()
    .refine(
      (path) => path.startsWith("/") && path.includes("{wallet}") && path.includes("{contract}"),
      { message: "must start with / and contain {wallet} and {contract}" },
    )
    .default("/wallets/v1beta2/{wallet}/report_not_spam/{contract}"),
);

/** A byte count, unset when not given (parseConfig then takes a sixteenth of the cache). */
export const cacheEntryBytes = z.preprocess(
  emptyToUndefined,
  z.coerce
    .number()
    .int()
    .min(1)
    .max(2 * 1024 * 1024 * 1024)
    .optional(),
);

/** A redis:// or rediss:// URL with a host. */
export const redisUrl = z.preprocess(
  emptyToUndefined,
  z
    .string()
    .refine((v) => isUrlOf(v, ["redis:", "rediss:"]), {
      message: "must be a redis:// or rediss:// URL with a host",
    })
    .optional(),
);

/** What every key the bot writes in Redis starts with (nftbot: when unset). */
export const redisKeyPrefix = z.preprocess(
  emptyToUndefined,
  z
    .string()
    .regex(
      /^[A-Za-z0-9:_.-]{1,64}$/,
      "must be 1 to 64 characters of A-Z, a-z, 0-9, colon, underscore, dot and hyphen",
    )
    .default("nftbot:"),
);

/** A PostgreSQL URL; the refusal does not repeat the value (it carries a password). */
export const databaseUrl = z.preprocess(
  emptyToUndefined,
  z
    .string()
    .refine((v) => isUrlOf(v, ["postgres:", "postgresql:"]), {
      message:
        "must be a PostgreSQL URL starting with postgres:// or postgresql:// (postgres://user:password@host:5432/database)",
    })
    .optional(),
);

/** A PostgreSQL schema's name: a plain identifier. */
export const databaseSchemaName = z.preprocess(
  emptyToUndefined,
  z
    .string()
    .regex(/^[A-Za-z_][A-Za-z0-9_]{0,62}$/, {
      message: "must be a plain identifier (letters, digits and _, not starting with a digit)",
    })
    .default("public"),
);

/** A log level, or silent (info when unset). */
export const logLevel = z.preprocess(
  emptyToUndefined,
  z.enum(["fatal", "error", "warn", "info", "debug", "trace", "silent"]).default("info"),
);

/** An http(s) IPFS gateway's URL, ending in / (ipfs.io's when unset). */
export const ipfsGateway = z.preprocess(
  emptyToUndefined,
  z
    .url({ protocol: /^https?$/ })
    .transform((url) => (url.endsWith("/") ? url : `${url}/`))
    .default("https://ipfs.io/ipfs/"),
);

/** An http(s) block explorer's URL, without a trailing / (etherscan.io when unset). */
export const explorerUrl = z.preprocess(
  emptyToUndefined,
  z
    .url({ protocol: /^https?$/ })
    .transform((url) => url.replace(/\/+$/, ""))
    .default("https://etherscan.io"),
);

/** A Discord server id. */
export const discordGuildId = z.preprocess(
  emptyToUndefined,
  z
    .string()
    .regex(/^\d{15,25}$/, "must be a Discord server id (15 to 25 digits)")
    .optional(),
);

/**
 * A Discord bot token: three base64url parts separated by dots (the bot's id, a timestamp, an
 * HMAC). Checked for its shape only, at start, so a token pasted wrong (a word, "Bot …", a cut
 * copy) is named before any connection; whether Discord takes it is its own answer.
 */
export const discordToken = z.preprocess(
  emptyToUndefined,
  z
    .string()
    .regex(
      /^[A-Za-z0-9_-]+\.[A-Za-z0-9_-]+\.[A-Za-z0-9_-]+$/,
      "must be a Discord bot token: three parts of A-Z, a-z, 0-9, _ and -, separated by dots (Discord Developer Portal → your application → Bot → Reset Token)",
    )
    .optional(),
);

/** A Telegram bot token as BotFather gives it: the bot's id, a colon, 35 characters. */
export const telegramToken = z.preprocess(
  emptyToUndefined,
  z
    .string()
    .regex(
      /^\d+:[A-Za-z0-9_-]{35}$/,
      "must be a Telegram bot token: <digits>:<35 characters of A-Z, a-z, 0-9, _ and -> (BotFather gives it with /newbot, or /token)",
    )
    .optional(),
);

/** The Discord application's public key, in hex. */
export const discordPublicKey = z.preprocess(
  emptyToUndefined,
  z
    .string()
    .regex(
      /^[0-9a-fA-F]{64}$/,
      "must be the application's public key: 64 hexadecimal characters (developer portal, General Information)",
    )
    .optional(),
);

/** The secret Telegram sends with each webhook update. */
export const telegramWebhookSecret = z.preprocess(
  emptyToUndefined,
  z
    .string()
    // Telegram takes 1 to 256 characters; whoever knows it can post updates as Telegram,
    // so a short one is refused as guessable.
    .regex(/^[A-Za-z0-9_-]{16,256}$/, "must be 16 to 256 characters of A-Z, a-z, 0-9, _ and -")
    .optional(),
);
