import { timingSafeEqual } from "node:crypto";
import { createServer, type IncomingMessage, type Server, type ServerResponse } from "node:http";
import { autoRetry } from "@grammyjs/auto-retry";
import { type RunnerHandle, run, sequentialize } from "@grammyjs/runner";
import { type APIThrottlerOptions, apiThrottler } from "@grammyjs/transformer-throttler";
import { Bot, BotError, type Context, GrammyError, HttpError, InputFile } from "grammy";
import type { Chat, Update, UserFromGetMe } from "grammy/types";
import pRetry from "p-retry";
import type { AlertSender, SendFailure } from "../../alerts/delivery.ts";
import type { Invocation } from "../../core/command.ts";
import type { RenderableReply } from "../../core/reply.ts";
import { newInvocationId, type Runtime } from "../../core/runtime.ts";
import type { Logger } from "../../log.ts";
import {
  escapeHtml,
  renderTelegram,
  type TelegramInlineKeyboard,
  type TelegramMessage,
} from "../../render/telegram.ts";
import type { UpdateDedup } from "../../store/types.ts";
import { within } from "../within.ts";

export interface TelegramAdapterOptions {
  token: string;
  runtime: Runtime;
  logger: Logger;
  /** Bot API root without a trailing slash (a local Bot API server, or a fake in tests). */
  apiRoot?: string | undefined;
  /** Skips getMe at start (tests). */
  botInfo?: UserFromGetMe;
  /** Update ids already taken: a re-delivered update is dropped (absent: none are). */
  updates?: UpdateDedup | undefined;
  /** Webhook mode instead of long polling. */
  webhook?: { url: string; secret: string; port: number; host?: string } | undefined;
  /** Outgoing message shaping; the defaults follow Telegram's limits. false disables it (tests). */
  throttle?: APIThrottlerOptions | false;
  /** A button action still running after this is answered empty at once (default 1.5 s). */
  answerCallbackAfterMs?: number;
  /** auto-retry bounds: longest Retry-After waited, and attempts for 429/5xx. */
  retry?: { maxDelaySeconds: number; maxRetryAttempts: number };
  /** Told when a group announces its upgrade to a supergroup (its new chat id). */
  onChatMigrated?: (fromChatId: string, toChatId: string) => Promise<void>;
}

/** Telegram chat ids the bot may no longer write to (blocked, kicked), with why. */
export type PermanentFailureListener = (chatId: string, reason: string) => void;

/**
 * Outgoing pacing. The throttler's default refills 30 sends at each second's start, which lets
 * about 60 through in a rolling second and earns 429s; a steady 35 ms spacing stays under 30/s.
 * Per-chat (1/s) and per-group (20/min) shaping keep the plugin's defaults.
 */
const TELEGRAM_THROTTLE: APIThrottlerOptions = { global: { maxConcurrent: 30, minTime: 35 } };

/** What every message of a reply is sent with. */
interface SendOptions {
  parse_mode: "HTML";
  reply_parameters?: { message_id: number; allow_sending_without_reply: boolean };
  reply_markup?: TelegramInlineKeyboard;
}

/** GroupAnonymousBot, Channel_Bot, and the service account that forwards linked-channel posts. */
const PLACEHOLDER_SENDERS = new Set([1087968824, 136817688, 777000]);

/** Updates are a few kilobytes; anything far larger is not from Telegram. */
const MAX_WEBHOOK_BODY_BYTES = 1024 * 1024;

/** Quick extra tries for a request that failed on the network (500 ms, then 1 s). */
const NETWORK_RETRIES = 2;

const COMMAND_LINE = /^\/([A-Za-z0-9_]{1,32})(?:@([A-Za-z0-9_]{3,64}))?(?:\s+([\s\S]*))?$/;

/**
 * Telegram's words for "the bot may not post here": a group that took its right to send, a
 * channel where it is not an admin. (A group that only forbids media says "to send photos":
 * that one is not meant, the text still gets through.)
 */
const NO_RIGHT_TO_POST =
  /not enough rights to send text messages|have no rights to send a message|CHAT_WRITE_FORBIDDEN|need administrator rights in the channel/i;

function sameSecret(given: string, expected: string): boolean {
  const a = Buffer.from(given);
  const b = Buffer.from(expected);
  return a.length === b.length && timingSafeEqual(a, b);
}

async function readBody(req: IncomingMessage, maxBytes: number): Promise<string> {
  const chunks: Buffer[] = [];
  let size = 0;
  for await (const chunk of req) {
    const buffer = chunk as Buffer;
    size += buffer.length;
    if (size > maxBytes) throw new Error(`body over ${maxBytes} bytes`);
    chunks.push(buffer);
  }
  return Buffer.concat(chunks).toString("utf8");
}

/** Permanent send failures: retrying them only burns the bot's budget. */
export function isPermanentTelegramError(error: unknown): boolean {
  if (!(error instanceof GrammyError)) return false;
  return (
    error.error_code === 403 ||
    (error.error_code === 400 && /chat not found/i.test(error.description)) ||
    NO_RIGHT_TO_POST.test(error.description)
  );
}

/**
 * A photo or document refused for what it is rather than where it goes: a 4xx other than the
 * chat being gone (or moved, or a 429 that auto-retry already waited out). "not enough rights to
 * send photos", a URL Telegram cannot fetch, a file too large, a Bot API without the method.
 */
function isAttachmentRefused(error: unknown): boolean {
  return (
    error instanceof GrammyError &&
    error.error_code >= 400 &&
    error.error_code < 500 &&
    error.error_code !== 429 &&
    error.parameters.migrate_to_chat_id === undefined &&
    !isPermanentTelegramError(error)
  );
}

/**
 * Who sent an update, as the bot keys people: a person by their user id. Anonymous group admins
 * (all of them GroupAnonymousBot) and posts sent as a channel (Channel_Bot, or Telegram's service
 * account for a linked channel's forwards) share one placeholder user across all of Telegram,
 * so they are keyed by the chat they speak for (`sender_chat`).
 */
function senderOf(ctx: Context): {
  key: string;
  name: string;
  anonymous: boolean;
  speaksFor?: Chat;
} {
  const speaksFor = ctx.message?.sender_chat;
  const from = ctx.from;
  if (speaksFor) {
    const name = ("title" in speaksFor ? speaksFor.title : speaksFor.username) ?? "anonymous";
    return { key: `chat:${speaksFor.id}`, name, anonymous: true, speaksFor };
  }
  // A placeholder without sender_chat (never seen: button presses come from the person) speaks
  // for nobody in particular: keyed by the chat, with no rights.
  if (from && PLACEHOLDER_SENDERS.has(from.id))
    return { key: `chat:${ctx.chat?.id ?? "unknown"}`, name: "anonymous", anonymous: true };
  return {
    key: String(from?.id ?? "unknown"),
    name: from?.username ?? from?.first_name ?? "someone",
    anonymous: false,
  };
}

/**
 * Telegram on grammY: commands from message text (`/top volume 1d`, `/whois@Bot name` in groups,
 * arguments on new lines), buttons as callback queries, replies as HTML. Long polling through
 * @grammyjs/runner (concurrent, sequential per sender in each chat), or a webhook with its secret
 * checked and each update acknowledged before it is handled; either way an update id is taken once.
 */
export class TelegramAdapter implements AlertSender {
  readonly bot: Bot;
  /** Telegram has no idempotent send: one alert in flight, so a crash duplicates at most one. */
  readonly maxInFlight = 1;
  onPermanentFailure: PermanentFailureListener | undefined;
  private runner: RunnerHandle | undefined;
  private stopping = false;
  private readonly inFlight = new Set<Promise<void>>();
  private restartDelayMs = 1_000;
  private restartTimer: NodeJS.Timeout | undefined;
  private server: Server | undefined;

  constructor(private readonly options: TelegramAdapterOptions) {
    const { token, apiRoot, botInfo } = options;
    this.bot = new Bot(token, {
      ...(botInfo ? { botInfo } : {}),
      ...(apiRoot ? { client: { apiRoot } } : {}),
    });
    if (options.throttle !== false)
      this.bot.api.config.use(apiThrottler(options.throttle ?? TELEGRAM_THROTTLE));
    // auto-retry would retry network errors (HttpError) for ever, whatever maxRetryAttempts says,
    // with waits growing to an hour: a reply or an alert would hang instead of failing. They get
    // a few quick tries here, then go to the caller (delivery retries alerts with its own backoff).
    this.bot.api.config.use(
      autoRetry({
        maxDelaySeconds: options.retry?.maxDelaySeconds ?? 60,
        maxRetryAttempts: options.retry?.maxRetryAttempts ?? 3,
        rethrowHttpErrors: true,
      }),
    );
    this.bot.api.config.use((prev, method, payload, signal) =>
      pRetry(() => prev(method, payload, signal), {
        retries: NETWORK_RETRIES,
        minTimeout: 500,
        factor: 2,
        shouldRetry: ({ error }) => error instanceof HttpError && !signal?.aborted,
      }),
    );
    const { updates, logger } = options;
    if (updates) {
      // First of all: a re-delivered update must not run its command a second time.
      this.bot.use(async (ctx, next) => {
        let first = true;
        try {
          first = await updates.firstSeen(ctx.update.update_id);
        } catch (error) {
          // Answering twice is better than not at all.
          logger.warn({ err: error, update: ctx.update.update_id }, "update id not recorded");
        }
        if (first) return next();
        logger.info({ update: ctx.update.update_id }, "telegram update delivered again; dropped");
      });
    }
    // One sender's updates in a chat run in order (a page, then the next); different senders run
    // side by side, so one member's queue of slow commands never holds up another's /help.
    this.bot.use(sequentialize((ctx: Context) => `${ctx.chat?.id}:${senderOf(ctx).key}`));
    this.bot.on("message:text", (ctx) => this.track(this.onMessage(ctx)));
    this.bot.on("callback_query:data", (ctx) => this.track(this.onCallback(ctx)));
    this.bot.on("message:migrate_to_chat_id", (ctx) =>
      options.onChatMigrated?.(String(ctx.chat.id), String(ctx.message.migrate_to_chat_id)),
    );
    this.bot.catch((error) => this.logUpdateError(error));
  }

  private logUpdateError(error: unknown): void {
    this.options.logger.error(
      error instanceof BotError
        ? { err: error.error, update: error.ctx.update.update_id }
        : { err: error },
      "telegram update failed",
    );
  }

  /** Connects: getMe, the command list, then polling or the webhook. */
  async start(): Promise<void> {
    const { logger } = this.options;
    await this.bot.init();
    // Outside bot.catch: a failure here must be handled, or it ends the process.
    try {
      await this.bot.api.setMyCommands(
        this.options.runtime.commands.map((command) => ({
          command: command.name,
          description: command.description.slice(0, 256),
        })),
      );
    } catch (error) {
      logger.warn(
        { err: error },
        "setMyCommands failed; commands still work, the menu may be stale",
      );
    }
    const { webhook } = this.options;
    if (webhook) {
      this.server = createServer((req, res) => {
        this.onWebhook(req, res, webhook.secret).catch((error: unknown) => {
          logger.warn({ err: error }, "webhook request failed");
          if (!res.headersSent) res.writeHead(500).end();
        });
      });
      await new Promise<void>((resolve) =>
        this.server?.listen(webhook.port, webhook.host ?? "0.0.0.0", resolve),
      );
      await this.bot.api.setWebhook(webhook.url, {
        secret_token: webhook.secret,
        allowed_updates: ["message", "callback_query"],
      });
      logger.info({ port: webhook.port }, "telegram webhook listening");
      return;
    }
    this.startPolling();
    logger.info({ username: this.bot.botInfo.username }, "telegram polling");
  }

  /**
   * Long polling through the runner. If polling dies (a second process polling the same token
   * gets 409 Conflict, a long outage), it is logged and restarted with backoff: a bot that has
   * silently stopped reading updates is the worst failure a chat bot can have.
   */
  private startPolling(): void {
    // silent: the runner's own console.error would bypass the logger and its redaction.
    const runner = run(this.bot, {
      runner: { silent: true, fetch: { allowed_updates: ["message", "callback_query"] } },
    });
    this.runner = runner;
    const started = performance.now();
    runner.task()?.catch((error: unknown) => {
      if (this.stopping) return;
      // A run that lasted a while was healthy: start the backoff over.
      if (performance.now() - started > 60_000) this.restartDelayMs = 1_000;
      const delay = this.restartDelayMs;
      this.restartDelayMs = Math.min(this.restartDelayMs * 2, 300_000);
      this.options.logger.error(
        { err: error, restartInMs: delay },
        "telegram polling stopped; restarting",
      );
      this.restartTimer = setTimeout(() => this.startPolling(), delay);
    });
  }

  /**
   * One webhook request: the secret first, then the update is acknowledged at once and handled
   * after. grammY's webhookCallback answers only when the handlers finish and gives up after 10 s;
   * Telegram re-delivers what it did not see answered, so a slow command ran twice.
   */
  private async onWebhook(
    req: IncomingMessage,
    res: ServerResponse,
    secret: string,
  ): Promise<void> {
    const given = req.headers["x-telegram-bot-api-secret-token"];
    if (typeof given !== "string" || !sameSecret(given, secret)) {
      req.resume();
      res.writeHead(401).end();
      return;
    }
    if (req.method !== "POST") {
      req.resume();
      res.writeHead(405).end();
      return;
    }
    if (this.stopping) {
      // Not taken: Telegram delivers it again, to this process after a restart or to another.
      req.resume();
      res.writeHead(503).end();
      return;
    }
    let update: Update;
    try {
      update = JSON.parse(await readBody(req, MAX_WEBHOOK_BODY_BYTES)) as Update;
      if (typeof update?.update_id !== "number") throw new Error("no update_id");
    } catch (error) {
      this.options.logger.warn({ err: error }, "webhook request without a readable update");
      res.writeHead(400).end();
      return;
    }
    res.writeHead(200).end();
    this.track(this.bot.handleUpdate(update).catch((error: unknown) => this.logUpdateError(error)));
  }

  /** Keeps a handler's promise until it settles, so stop() can let replies in flight finish. */
  private track(handling: Promise<void>): Promise<void> {
    this.inFlight.add(handling);
    void handling.finally(() => this.inFlight.delete(handling)).catch(() => {});
    return handling;
  }

  /** Polling or listening for the webhook (health). */
  get connected(): boolean {
    return this.server?.listening ?? this.runner?.isRunning() ?? false;
  }

  async stop(): Promise<void> {
    this.stopping = true;
    clearTimeout(this.restartTimer);
    if (this.runner?.isRunning()) await this.runner.stop();
    const closed = new Promise<void>((resolve) =>
      this.server ? this.server.close(() => resolve()) : resolve(),
    );
    // The updates already taken are answered before the bot lets go.
    await Promise.allSettled([...this.inFlight]);
    await closed;
  }

  private invocation(ctx: Context): Invocation {
    const chat = ctx.chat;
    const from = ctx.from;
    const sender = senderOf(ctx);
    const kind =
      chat?.type === "private" ? "private" : chat?.type === "channel" ? "channel" : "group";
    return {
      id: newInvocationId(),
      platform: "telegram",
      user: {
        id: sender.key,
        name: sender.name,
        ...(sender.anonymous ? { anonymous: true } : {}),
        // A person's private chat with a bot has the person's id.
        ...(from && !sender.anonymous ? { privateChatId: String(from.id) } : {}),
      },
      chat: {
        id: String(chat?.id ?? "unknown"),
        kind,
        ...(chat && "title" in chat && chat.title ? { title: chat.title } : {}),
      },
      canManageChannel: async (chatId) => {
        if (!chat || !from) return false;
        if (chatId !== undefined && chatId !== String(chat.id)) {
          // Another chat (a button under a confidential reply, pressed in private): ask Telegram.
          if (sender.anonymous) return false;
          try {
            const member = await ctx.api.getChatMember(chatId, from.id);
            return member.status === "creator" || member.status === "administrator";
          } catch (error) {
            if (error instanceof GrammyError) return false;
            throw error;
          }
        }
        // Only a group's own admins can speak as the group; a channel's poster manages nothing here.
        if (sender.anonymous) return sender.speaksFor?.id === chat.id;
        // The person in a private chat with the bot owns that chat.
        if (chat.type === "private") return true;
        const member = await ctx.api.getChatMember(chat.id, from.id);
        return member.status === "creator" || member.status === "administrator";
      },
    };
  }

  private async onMessage(ctx: Context): Promise<void> {
    const text = ctx.message?.text ?? "";
    const match = COMMAND_LINE.exec(text.trim());
    if (!match?.[1]) return;
    const [, name, target, args] = match;
    // In groups several bots share commands: only those without a target or aimed at us.
    if (target && target.toLowerCase() !== ctx.me.username.toLowerCase()) return;
    const invocation = this.invocation(ctx);
    const reply = await this.options.runtime.runText(invocation, name.toLowerCase(), args ?? "");
    // A refusal already given in this window: answering every command of a flood is the flood.
    if (reply.quiet) return;
    const replyTo = ctx.message?.message_id;
    if (reply.confidential && ctx.chat?.type !== "private") {
      await this.sendPrivately(ctx, reply.confidential.what, reply, replyTo, `run /${name} again`);
      return;
    }
    await this.send(ctx, renderTelegram(reply), replyTo);
  }

  /**
   * A button press. The spinner on the button turns until the query is answered, and Telegram
   * stops taking the answer after some seconds: a quick action is answered after it (a refusal
   * then shows as an alert on the button), a slow one is answered empty at once. An answer that
   * comes too late is no reason to lose the reply, and a refusal that can no longer be an alert
   * is said in the chat.
   */
  private async onCallback(ctx: Context): Promise<void> {
    const data = ctx.callbackQuery?.data ?? "";
    const work = this.options.runtime.click(this.invocation(ctx), data);
    const early = await within(work, this.options.answerCallbackAfterMs ?? 1_500);
    const answered = !early.done && (await this.answerCallback(ctx));
    const reply = early.done ? early.value : await early.pending;
    // A refusal (expired, foreign, forged, not allowed) is an alert on the button, not a message.
    if (
      reply.private &&
      reply.tone !== undefined &&
      reply.tone !== "info" &&
      reply.tone !== "success"
    ) {
      const alert = { text: (reply.text ?? "Not possible.").slice(0, 200), show_alert: true };
      if (!answered && (await this.answerCallback(ctx, alert))) return;
      if (!reply.quiet) await this.send(ctx, renderTelegram(reply), undefined);
      return;
    }
    if (!answered) await this.answerCallback(ctx);
    if (reply.confidential && ctx.chat?.type !== "private") {
      await this.sendPrivately(ctx, reply.confidential.what, reply, undefined, "press it again");
      return;
    }
    const messages = renderTelegram(reply);
    const first = messages[0];
    const original = ctx.callbackQuery?.message;
    // Only a text message can be edited into text: a photo (a chart) gets its new page as a new
    // message rather than an edit Telegram would refuse.
    const originalIsText =
      original !== undefined && "text" in original && typeof original.text === "string";
    if (
      reply.replaceOriginal &&
      originalIsText &&
      first?.kind === "text" &&
      messages.length === 1
    ) {
      try {
        await ctx.editMessageText(first.text, {
          parse_mode: "HTML",
          link_preview_options: { is_disabled: true },
          ...(first.replyMarkup ? { reply_markup: first.replyMarkup } : {}),
        });
        return;
      } catch (error) {
        if (!(error instanceof GrammyError && /not modified/i.test(error.description))) throw error;
        return;
      }
    }
    await this.send(ctx, messages, undefined);
  }

  /**
   * A confidential reply asked for in a group: it goes to the person's private chat, and the group
   * gets a note, or, when the bot may not write to the person (they never pressed Start, or
   * blocked it), how to open that chat. Nothing of the reply itself is ever posted in the group.
   */
  private async sendPrivately(
    ctx: Context,
    what: string,
    reply: RenderableReply,
    replyTo: number | undefined,
    again: string,
  ): Promise<void> {
    const note = (html: string) => this.send(ctx, [{ kind: "text", text: html }], replyTo);
    const subject = escapeHtml(what);
    const from = ctx.from;
    if (!from || senderOf(ctx).anonymous) {
      await note(
        `Only you may see ${subject}, and I cannot write to an anonymous admin or a channel: ${again} from your own account.`,
      );
      return;
    }
    try {
      for (const message of renderTelegram(reply)) await this.sendOne(from.id, message);
    } catch (error) {
      if (!isPermanentTelegramError(error)) throw error;
      const link = `https://t.me/${this.bot.botInfo.username}`;
      await note(
        `Only you may see ${subject}, and I cannot message you yet: open <a href="${link}">${link}</a>, press Start, then ${again}.`,
      );
      return;
    }
    await note(`I sent ${subject} to you privately.`);
  }

  /** Answers a callback query; false when Telegram no longer takes the answer. */
  private async answerCallback(
    ctx: Context,
    alert?: { text: string; show_alert: boolean },
  ): Promise<boolean> {
    try {
      await ctx.answerCallbackQuery(alert);
      return true;
    } catch (error) {
      const expired =
        error instanceof GrammyError &&
        /query is too old|query ID is invalid/i.test(error.description);
      this.options.logger[expired ? "debug" : "warn"](
        { err: error, chat: ctx.chat?.id },
        "callback query not answered",
      );
      return false;
    }
  }

  /** Sends a reply's messages in order; a permanent failure is recorded, not retried. */
  private async send(
    ctx: Context,
    messages: readonly TelegramMessage[],
    replyTo: number | undefined,
  ): Promise<void> {
    const chatId = ctx.chat?.id;
    if (chatId === undefined) return;
    try {
      for (const message of messages) {
        await this.sendOne(chatId, message, replyTo);
      }
    } catch (error) {
      if (isPermanentTelegramError(error)) {
        const reason = (error as GrammyError).description;
        this.options.logger.warn({ chat: chatId, reason }, "telegram chat refuses messages");
        this.onPermanentFailure?.(String(chatId), reason);
        return;
      }
      if (error instanceof HttpError) {
        this.options.logger.warn({ chat: chatId, err: error }, "network error sending to telegram");
        return;
      }
      throw error;
    }
  }

  /** Alert delivery: a whole reply to a chat, errors left to classifySendError. */
  async sendToChat(chatId: string, reply: RenderableReply): Promise<void> {
    for (const message of renderTelegram(reply)) await this.sendOne(chatId, message);
  }

  classifySendError(error: unknown): SendFailure {
    if (error instanceof GrammyError) {
      if (error.error_code === 429) {
        return { kind: "rate_limited", retryAfterMs: (error.parameters.retry_after ?? 5) * 1000 };
      }
      // A group upgraded to a supergroup: the same chat under a new id.
      const movedTo = error.parameters.migrate_to_chat_id;
      if (movedTo !== undefined) return { kind: "moved", newChatId: String(movedTo) };
      if (isPermanentTelegramError(error))
        return { kind: "permanent", reason: `Telegram: ${error.description}` };
      return { kind: "transient", reason: `Telegram ${error.error_code}: ${error.description}` };
    }
    if (error instanceof HttpError)
      return { kind: "transient", reason: "network error reaching Telegram" };
    return { kind: "transient", reason: error instanceof Error ? error.message : String(error) };
  }

  /** Sends one rendered message to a chat. */
  async sendOne(
    chatId: number | string,
    message: TelegramMessage,
    replyTo?: number,
  ): Promise<void> {
    const common: SendOptions = {
      parse_mode: "HTML",
      ...(replyTo !== undefined
        ? { reply_parameters: { message_id: replyTo, allow_sending_without_reply: true } }
        : {}),
      ...(message.replyMarkup ? { reply_markup: message.replyMarkup } : {}),
    };
    if (message.kind === "text") {
      await this.bot.api.sendMessage(chatId, message.text, {
        ...common,
        link_preview_options: { is_disabled: true },
      });
    } else if (message.kind === "photo") {
      const caption = message.caption ? { caption: message.caption } : {};
      const photo =
        "url" in message.photo
          ? message.photo.url
          : new InputFile(message.photo.data, message.photo.name);
      try {
        await this.bot.api.sendPhoto(chatId, photo, { ...common, ...caption });
      } catch (error) {
        // Telegram fetches image URLs itself and refuses those it cannot read; a chart comes back
        // from a group that lets members send no media or a Bot API without sendPhoto. The answer
        // must still arrive: as text, with the link or a word on the missing chart.
        if (!isAttachmentRefused(error)) throw error;
        const note =
          "url" in message.photo
            ? `<a href="${escapeHtml(message.photo.url)}">image</a>`
            : "<i>(The chart could not be attached in this chat.)</i>";
        await this.sendText(chatId, message.caption, note, common, error);
      }
    } else {
      try {
        await this.bot.api.sendDocument(
          chatId,
          new InputFile(message.document.data, message.document.name),
          { ...common, ...(message.caption ? { caption: message.caption } : {}) },
        );
      } catch (error) {
        if (!isAttachmentRefused(error)) throw error;
        const note = `<i>(The file ${escapeHtml(message.document.name)} could not be attached in this chat.)</i>`;
        await this.sendText(chatId, message.caption, note, common, error);
      }
    }
  }

  /** An attachment's caption (and buttons) as a text message, with a note on what is missing. */
  private async sendText(
    chatId: number | string,
    caption: string | undefined,
    note: string,
    common: SendOptions,
    refusal: unknown,
  ): Promise<void> {
    this.options.logger.warn(
      { chat: chatId, reason: (refusal as GrammyError).description },
      "telegram refused an attachment; sending text instead",
    );
    await this.bot.api.sendMessage(chatId, caption ? `${caption}\n\n${note}` : note, {
      ...common,
      link_preview_options: { is_disabled: true },
    });
  }
}
