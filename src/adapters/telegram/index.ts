import { type RunnerHandle, run, sequentialize } from "@grammyjs/runner";
import type { APIThrottlerOptions } from "@grammyjs/transformer-throttler";
import { Bot, BotError, type Context, GrammyError, HttpError } from "grammy";
import type { UserFromGetMe } from "grammy/types";
import type { RenderableReply } from "../../core/reply.ts";
import type { Runtime } from "../../core/runtime.ts";
import type { HttpRoute } from "../../http/host.ts";
import type { Logger } from "../../log.ts";
import type { SendFailure } from "../../outbound/types.ts";
import {
  escapeHtml,
  renderTelegram,
  TELEGRAM_TEXT_MAX,
  type TelegramMessage,
} from "../../render/telegram.ts";
import type { UpdateDedup } from "../../store/types.ts";
import { cutText } from "../../strings.ts";
import { bounded, SEEN_CHECK_MS, within } from "../../within.ts";
import type { SharedPace } from "../pace.ts";
import type { PrivateTarget } from "../types.ts";
import { type ChatAdapter, isRefusal, type JoinRequestListener } from "../types.ts";
import { classifyTelegramError, isPermanentTelegramError } from "./errors.ts";
import { apiSignal, TelegramGateMembership } from "./gates.ts";
import { senderOf, startCommand, telegramInvocation } from "./invocation.ts";
import { sendTelegramMessage } from "./messages.ts";
import { shapeRequests } from "./requests.ts";
import { GroupTitles } from "./titles.ts";
import { telegramWebhookRoute } from "./webhook.ts";

export { isPermanentTelegramError } from "./errors.ts";

const TELEGRAM_API_ROOT = "https://api.telegram.org";

/**
 * The updates the bot takes, polling and webhook alike. Telegram sends a chat_join_request only
 * when it is asked for; a list that omits a kind silently stops it.
 */
const ALLOWED_UPDATES = ["message", "callback_query", "chat_join_request"] as const;

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
  /**
   * Webhook mode instead of long polling: the adapter's `routes` take the updates at `path`,
   * mounted on the bot's HTTP host.
   */
  webhook?: { url: string; secret: string; path: string } | undefined;
  /** Outgoing message shaping; the defaults follow Telegram's limits. false disables it (tests). */
  throttle?: APIThrottlerOptions | false;
  /** With several instances: Telegram's per-bot limits counted across all of them (over Redis). */
  sharedPace?: SharedPace | undefined;
  /** A button action still running after this is answered empty at once (default 1.5 s). */
  answerCallbackAfterMs?: number;
  /** auto-retry bounds: longest Retry-After waited, and attempts for 429/5xx. */
  retry?: { maxDelaySeconds: number; maxRetryAttempts: number };
  /** Told when a group announces its upgrade to a supergroup (its new chat id). */
  onChatMigrated?: (fromChatId: string, toChatId: string) => Promise<void>;
  /**
   * Told of each request to join a group through a join-request link (issue 29), with the private
   * chat the bot may write to for 5 minutes: the gates decide. Absent, requests wait for the
   * group's admins.
   */
  onJoinRequest?: JoinRequestListener | undefined;
}

const COMMAND_LINE = /^\/([A-Za-z0-9_]{1,32})(?:@([A-Za-z0-9_]{3,64}))?(?:\s+([\s\S]*))?$/;

/**
 * Telegram on grammY: commands from message text (`/top volume 1d`, `/whois@Bot name` in groups,
 * arguments on new lines), buttons as callback queries, replies as HTML. Long polling through
 * @grammyjs/runner (concurrent, sequential per sender in each chat), or a webhook with its secret
 * checked and each update acknowledged before it is handled; either way an update id is taken once.
 */
export class TelegramAdapter implements ChatAdapter {
  readonly platform = "telegram";
  readonly label = "Telegram";
  readonly connectsTo: string;
  readonly tokenSetting = "TELEGRAM_BOT_TOKEN";
  readonly routes: readonly HttpRoute[];
  readonly bot: Bot;
  /** Telegram has no idempotent send: one alert in flight, so a crash duplicates at most one. */
  readonly maxInFlight = 1;
  /** Gates (issue 29): the group's join-request link, approvals, removals. */
  readonly gateMembership: TelegramGateMembership;
  /** Groups' titles for /verify's page, for their members only. */
  private readonly titles: GroupTitles;
  private runner: RunnerHandle | undefined;
  private stopping = false;
  private readonly inFlight = new Set<Promise<void>>();
  private restartDelayMs = 1_000;
  private restartTimer: NodeJS.Timeout | undefined;
  private webhookSet = false;

  constructor(private readonly options: TelegramAdapterOptions) {
    const { token, apiRoot, botInfo, webhook } = options;
    this.connectsTo = apiRoot ?? TELEGRAM_API_ROOT;
    this.routes = webhook
      ? [
          telegramWebhookRoute({
            path: webhook.path,
            secret: webhook.secret,
            logger: options.logger,
            stopping: () => this.stopping,
            take: (update) =>
              void this.track(
                this.bot.handleUpdate(update).catch((error: unknown) => this.logUpdateError(error)),
              ),
          }),
        ]
      : [];
    this.bot = new Bot(token, {
      ...(botInfo ? { botInfo } : {}),
      ...(apiRoot ? { client: { apiRoot } } : {}),
    });
    shapeRequests(this.bot, options);
    this.gateMembership = new TelegramGateMembership(this.bot.api, {
      botId: () => this.bot.botInfo.id,
      botUsername: () => this.bot.botInfo.username,
      logger: options.logger,
      onChatMigrated: options.onChatMigrated,
    });
    this.titles = new GroupTitles(this.gateMembership);
    const { updates, logger } = options;
    if (updates) {
      // First of all: a re-delivered update must not run its command a second time.
      this.bot.use(async (ctx, next) => {
        let first = true;
        try {
          first = await bounded(
            updates.firstSeen(ctx.update.update_id),
            SEEN_CHECK_MS,
            "the update id store",
          );
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
    this.bot.on("chat_join_request", (ctx) => this.track(this.onChatJoinRequest(ctx)));
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
    // Not bot.init(): it retries a network failure for ever, silently. One getMe (after the quick
    // network tries of shapeRequests) lets the start say why it cannot connect; src/startup.ts
    // tries again what may pass by itself.
    if (!this.bot.isInited()) this.bot.botInfo = await this.bot.api.getMe();
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
      // The route is on the bot's HTTP host, listening already: Telegram may post at once.
      await this.bot.api.setWebhook(webhook.url, {
        secret_token: webhook.secret,
        allowed_updates: ALLOWED_UPDATES,
      });
      this.webhookSet = true;
      logger.info({ path: webhook.path }, "telegram webhook set");
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
      runner: { silent: true, fetch: { allowed_updates: ALLOWED_UPDATES } },
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

  /** Keeps a handler's promise until it settles, so stop() can let replies in flight finish. */
  private track(handling: Promise<void>): Promise<void> {
    this.inFlight.add(handling);
    void handling.finally(() => this.inFlight.delete(handling)).catch(() => {});
    return handling;
  }

  /** Polling, or the webhook set (health). */
  get connected(): boolean {
    return this.webhookSet ? !this.stopping : (this.runner?.isRunning() ?? false);
  }

  healthy(): boolean {
    return this.connected;
  }

  async stop(): Promise<void> {
    this.stopping = true;
    clearTimeout(this.restartTimer);
    if (this.runner?.isRunning()) await this.runner.stop();
    // The updates already taken are answered before the bot lets go.
    await Promise.allSettled([...this.inFlight]);
  }

  private async onMessage(ctx: Context): Promise<void> {
    const text = ctx.message?.text ?? "";
    const match = COMMAND_LINE.exec(text.trim());
    if (!match?.[1]) return;
    const [, typed, target, typedArgs] = match;
    // In groups several bots share commands: only those without a target or aimed at us.
    if (target && target.toLowerCase() !== ctx.me.username.toLowerCase()) return;
    // A button that opened this private chat sends `/start <payload>`: the command it stands for.
    const started =
      typed.toLowerCase() === "start" && ctx.chat?.type === "private"
        ? startCommand(typedArgs ?? "")
        : undefined;
    const invocation = telegramInvocation(ctx);
    if (started?.from) {
      const from = started.from;
      invocation.startedFrom = from;
      // The group a private chat was started from, named as Telegram names it (/verify's page).
      invocation.names = async () => {
        const placeName = await this.titles.of(ctx, from);
        return {
          ...(placeName ? { placeName } : {}),
          ...(ctx.me?.first_name ? { botName: ctx.me.first_name } : {}),
        };
      };
    }
    const name = started?.name ?? typed.toLowerCase();
    const { reply } = await this.options.runtime.answerText(
      invocation,
      name,
      started?.args ?? typedArgs ?? "",
    );
    // A refusal already given in this window: answering every command of a flood is the flood.
    if (reply.quiet) return;
    const replyTo = ctx.message?.message_id;
    if (reply.confidential && ctx.chat?.type !== "private") {
      await this.answerPrivately(
        ctx,
        reply.confidential.what,
        reply,
        replyTo,
        `run /${name} again`,
      );
      return;
    }
    await this.send(ctx, renderTelegram(reply), replyTo);
  }

  /**
   * A request to join a group through a join-request link: the gates decide. Without a listener
   * (no gates wired) the request is left to the group's admins.
   */
  private async onChatJoinRequest(ctx: Context): Promise<void> {
    const request = ctx.chatJoinRequest;
    if (!request || !this.options.onJoinRequest) return;
    await this.options.onJoinRequest(
      String(request.chat.id),
      String(request.from.id),
      String(request.user_chat_id),
      request.invite_link?.invite_link,
    );
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
    const work = this.options.runtime.answerButton(telegramInvocation(ctx), data);
    const early = await within(work, this.options.answerCallbackAfterMs ?? 1_500);
    const answered = !early.done && (await this.answerCallback(ctx));
    const { reply, outcome } = early.done ? early.value : await early.pending;
    // A refusal (expired, foreign, forged, not allowed) is an alert on the button, not a message.
    if (isRefusal(outcome)) {
      const alert = { text: (reply.text ?? "Not possible.").slice(0, 200), show_alert: true };
      if (!answered && (await this.answerCallback(ctx, alert))) return;
      if (!reply.quiet) await this.send(ctx, renderTelegram(reply), undefined);
      return;
    }
    if (!answered) await this.answerCallback(ctx);
    if (reply.confidential && ctx.chat?.type !== "private") {
      await this.answerPrivately(ctx, reply.confidential.what, reply, undefined, "press it again");
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
  private async answerPrivately(
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
    return classifyTelegramError(error);
  }

  /**
   * A message to one person (a gate's notice, a proof's confirmation; any instance may send it):
   * to the private chat they asked in, else the chat a join request opened, else their own (a
   * person who never started the bot, or blocked it: a 403, `permanent`). Plain text goes as it
   * is, without a link preview.
   */
  async sendPrivately(
    to: PrivateTarget,
    message: RenderableReply | string,
    signal?: AbortSignal,
  ): Promise<void> {
    const chatId = to.origin?.chatId ?? to.userChatId ?? to.userId;
    if (typeof message !== "string") return this.sendToChat(chatId, message);
    await this.bot.api.sendMessage(
      chatId,
      // Cut like Discord's rather than refused whole (a notice is far shorter).
      cutText(message, TELEGRAM_TEXT_MAX, { unit: "utf16" }),
      { link_preview_options: { is_disabled: true } },
      apiSignal(signal),
    );
  }

  /** Sends one rendered message to a chat. */
  sendOne(chatId: number | string, message: TelegramMessage, replyTo?: number): Promise<void> {
    return sendTelegramMessage(this.bot.api, this.options.logger, chatId, message, replyTo);
  }
}
