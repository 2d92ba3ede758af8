import type { RawFile, REST } from "@discordjs/rest";
import {
  type APIAllowedMentions,
  type APIChannel,
  type APIEmbed,
  MessageFlags,
  Routes,
} from "discord-api-types/v10";
import type { RenderableReply } from "../../core/reply.ts";
import type { Logger } from "../../log.ts";
import type { PrivateTarget, SendFailure } from "../../outbound/types.ts";
import { type DiscordActionRow, type DiscordMessage, renderDiscord } from "../../render/discord.ts";
import { cutText } from "../../strings.ts";
import { type SharedPace, SteadyPace } from "../pace.ts";

/**
 * Messages as Discord's REST API takes them, for the two Discord adapters: the gateway one (on
 * discord.js) posts alerts with it, and the HTTP-interactions one posts, edits and follows up
 * with it. Only @discordjs/rest and discord-api-types: HTTP mode never loads discord.js.
 */

/** The JSON part of a message create or edit. */
export interface ApiMessageBody {
  embeds: APIEmbed[];
  components: DiscordActionRow[];
  allowed_mentions: APIAllowedMentions;
  /** The uploads by index (`files[n]`), with their alt text; on an edit, also what is kept. */
  attachments: { id: number; filename: string; description?: string }[];
  flags?: MessageFlags;
}

/**
 * A rendered message as a REST body and its uploads. `attachments` always lists exactly the new
 * files: on an edit that drops every attachment the message had (an old page's chart), on a create
 * it only carries the alt text. `ephemeral` sets flag 64 (creates only: an edit cannot change it).
 */
export function apiMessage(
  message: DiscordMessage,
  ephemeral = false,
): { body: ApiMessageBody; files: RawFile[] } {
  return {
    body: {
      embeds: message.embeds,
      components: message.components,
      allowed_mentions: { parse: [] },
      attachments: message.files.map((file, id) => ({
        id,
        filename: file.name,
        ...(file.description === undefined ? {} : { description: file.description }),
      })),
      ...(ephemeral ? { flags: MessageFlags.Ephemeral } : {}),
    },
    files: message.files.map((file, index) => ({
      name: file.name,
      data: file.attachment,
      key: `files[${index}]`,
    })),
  };
}

/**
 * An alert as a channel message through REST (no channel fetch, no gateway cache needed). Discord
 * drops a second create with the same enforced nonce: a re-send after a crash returns the message
 * already posted instead of posting it again.
 */
export async function postAlert(
  rest: REST,
  channelId: string,
  reply: RenderableReply,
  idempotencyKey?: string,
): Promise<void> {
  const { body, files } = apiMessage(renderDiscord(reply));
  await rest.post(Routes.channelMessages(channelId), {
    body: {
      ...body,
      ...(idempotencyKey ? { nonce: idempotencyKey.slice(0, 25), enforce_nonce: true } : {}),
    },
    files,
  });
}

/** Unknown Channel, Unknown Guild, Missing Access, Missing Permissions: retrying cannot help. */
const PERMANENT_CODES = new Set([10003, 10004, 50001, 50013]);

/**
 * @discordjs/rest's error classes. Passed in because discord.js loads that package's CommonJS
 * build and an ESM import gets its own copy of each class: `instanceof` must use the copy that
 * threw.
 */
export interface RestErrorClasses {
  DiscordAPIError: abstract new (
    ...args: never[]
  ) => Error & { code: number | string; status: number };
  HTTPError: abstract new (...args: never[]) => Error & { status: number };
  RateLimitError: abstract new (...args: never[]) => Error & { retryAfter: number };
}

/** What a failed alert send means for its subscription (see ChatSender, src/outbound). */
export function classifyDiscordSendError(error: unknown, classes: RestErrorClasses): SendFailure {
  if (error instanceof classes.DiscordAPIError) {
    if (PERMANENT_CODES.has(Number(error.code)) || error.status === 403 || error.status === 404) {
      return { kind: "permanent", reason: `Discord: ${error.message}` };
    }
    return { kind: "transient", reason: `Discord ${error.status}: ${error.message}` };
  }
  if (error instanceof classes.RateLimitError)
    return { kind: "rate_limited", retryAfterMs: error.retryAfter };
  if (error instanceof classes.HTTPError)
    return { kind: "transient", reason: `Discord ${error.status}` };
  return { kind: "transient", reason: error instanceof Error ? error.message : String(error) };
}

/**
 * The pace of alert sends under Discord's global limit (47 a second by default), for both Discord
 * adapters; with Redis, the bot token's other instances count too.
 */
export function alertPace(options: {
  globalPerSecond?: number | undefined;
  sharedPace?: SharedPace | undefined;
}): SteadyPace {
  const { sharedPace } = options;
  return new SteadyPace(
    options.globalPerSecond ?? 47,
    undefined,
    sharedPace ? () => sharedPace.acquire("discord:global") : undefined,
  );
}

/**
 * What is logged of a REST call that failed after the answer: never the interaction's token,
 * which is in the URL (it lets anyone post as the bot in that channel for 15 minutes), nor the
 * request body @discordjs/rest keeps on its error (uploads included).
 */
export function restFailure(error: unknown, token: string): Record<string, unknown> {
  const scrub = (text: unknown) =>
    typeof text === "string"
      ? text
          .replaceAll(token, "<interaction token>")
          .replaceAll(encodeURIComponent(token), "<interaction token>")
      : undefined;
  if (!(error instanceof Error)) return { message: scrub(String(error)) };
  const { status, code, method, url } = error as {
    status?: unknown;
    code?: unknown;
    method?: unknown;
    url?: unknown;
  };
  return {
    type: error.name,
    message: scrub(error.message),
    stack: scrub(error.stack),
    ...(status === undefined ? {} : { status }),
    ...(code === undefined ? {} : { code }),
    ...(typeof method === "string" ? { method } : {}),
    ...(url === undefined ? {} : { url: scrub(url) }),
  };
}

/** What a Discord invocation keeps to answer its person privately later (VerifyOrigin.confirm). */
export function interactionConfirm(applicationId: string, token: string): string {
  return JSON.stringify({ application: applicationId, token });
}

/** Discord's longest message content. */
const MAX_CONTENT = 2000;

/**
 * A message to one person (ChatSender.sendPrivately), for both Discord adapters. Where they asked
 * (`to.origin.confirm`): a private (ephemeral) follow-up on that interaction through its webhook,
 * which takes no bot token, so any instance can send it while the interaction's token lasts (15
 * minutes; without one kept, nothing is sent); a failure there is logged here, where the token can
 * be scrubbed from it, and thrown without it. Else a direct message (a person who closed them:
 * 50007, a 403, `permanent`).
 */
export async function sendDiscordPrivately(
  rest: REST,
  to: PrivateTarget,
  message: RenderableReply | string,
  logger: Logger,
  signal?: AbortSignal,
): Promise<void> {
  const { body, files } =
    typeof message === "string"
      ? {
          body: {
            content: cutText(message, MAX_CONTENT),
            allowed_mentions: { parse: [] },
            // Where they asked: only they see it, like a reply's follow-up.
            ...(to.origin ? { flags: MessageFlags.Ephemeral } : {}),
          },
          files: [],
        }
      : apiMessage(renderDiscord(message), to.origin !== undefined);
  const bound = signal ? { signal } : {};
  if (to.origin) {
    // No interaction kept (asked elsewhere, or expired): nothing is sent, as before a token.
    const target = interactionOf(to.origin.confirm);
    if (!target) return;
    try {
      await rest.post(Routes.webhook(target.application, target.token), {
        body,
        files,
        auth: false,
        ...bound,
      });
      return;
    } catch (error) {
      logger.warn({ err: restFailure(error, target.token) }, "discord private follow-up not sent");
      const status = (error as { status?: unknown }).status;
      throw new Error(
        `the private follow-up was not sent${typeof status === "number" ? ` (HTTP ${status})` : ""}`,
      );
    }
  }
  const channel = (await rest.post(Routes.userChannels(), {
    body: { recipient_id: to.userId },
    ...bound,
  })) as APIChannel;
  await rest.post(Routes.channelMessages(channel.id), { body, files, ...bound });
}

/** The interaction a `confirm` names (interactionConfirm), or undefined. */
function interactionOf(
  confirm: string | undefined,
): { application: string; token: string } | undefined {
  let target: { application?: unknown; token?: unknown } = {};
  try {
    target = JSON.parse(confirm ?? "null") ?? {};
  } catch {}
  const { application, token } = target;
  return typeof application === "string" && typeof token === "string"
    ? { application, token }
    : undefined;
}
