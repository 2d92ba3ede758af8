import { createServer, type IncomingMessage, type ServerResponse } from "node:http";
import type { AddressInfo } from "node:net";
import type {
  BotCommand,
  CallbackQuery,
  Chat,
  ChatInviteLink,
  ChatJoinRequest,
  ChatMember,
  InlineKeyboardMarkup,
  Message,
  MessageEntity,
  ResponseParameters,
  Update,
  User,
  UserFromGetMe,
} from "grammy/types";
import { BodyError, readRequestBody, type UploadedFile } from "./body.ts";
import { EntityParseError, parseTelegramHtml } from "./html.ts";
import { type RateLimits, SendRateLimiter, TELEGRAM_RATE_LIMITS } from "./rate-limit.ts";

export interface FakeTelegramOptions {
  /**
   * Default "123456789:TEST-token-…", of a real token's shape (the bot refuses any other at start);
   * the bot's id is the part before the colon.
   */
  token?: string;
  /** Default "fake_test_bot". */
  botUsername?: string;
  botFirstName?: string;
  /** Default 0: a free port on 127.0.0.1. */
  port?: number;
  /** Enforce Telegram's sending limits with 429 + retry_after; `true` uses TELEGRAM_RATE_LIMITS. */
  rateLimits?: boolean | Partial<RateLimits>;
  /** Answer "chat not found" for chats that no update or addChat introduced. Default false. */
  knownChatsOnly?: boolean;
  /** Methods this Bot API does not have (answered 404 "Not Found: method not found"). */
  unsupportedMethods?: string[];
  /** Clock in ms for message dates and rate limits. Default Date.now. */
  now?: () => number;
}

/** The error half of a Bot API response. */
export interface TelegramErrorBody {
  error_code: number;
  description: string;
  parameters?: ResponseParameters;
}

/** An injected failure: an error response, or the connection dropped without an answer. */
export type FakeFailure = TelegramErrorBody | "disconnect";

export interface FailOptions {
  /** Only calls for this chat fail. */
  chatId?: number | string;
  /** How many matching calls fail. Default 1. */
  times?: number;
}

/** Ready-made failures in Telegram's own words. */
export const telegramErrors = {
  tooManyRequests: (retryAfter: number): TelegramErrorBody => ({
    error_code: 429,
    description: `Too Many Requests: retry after ${retryAfter}`,
    parameters: { retry_after: retryAfter },
  }),
  /** Sending to a person who never pressed Start in a private chat with the bot. */
  cantInitiate: (): TelegramErrorBody => ({
    error_code: 403,
    description: "Forbidden: bot can't initiate conversation with a user",
  }),
  blocked: (): TelegramErrorBody => ({
    error_code: 403,
    description: "Forbidden: bot was blocked by the user",
  }),
  kicked: (): TelegramErrorBody => ({
    error_code: 403,
    description: "Forbidden: bot was kicked from the supergroup chat",
  }),
  chatNotFound: (): TelegramErrorBody => ({
    error_code: 400,
    description: "Bad Request: chat not found",
  }),
  badGateway: (): TelegramErrorBody => ({ error_code: 502, description: "Bad Gateway" }),
  /** answerCallbackQuery after Telegram stopped waiting for it. */
  queryTooOld: (): TelegramErrorBody => ({
    error_code: 400,
    description:
      "Bad Request: query is too old and response timeout expired or query ID is invalid",
  }),
};

/** One Bot API call the bot made (every method but getUpdates), failed ones included. */
export interface RecordedCall {
  /** Order of arrival, from 1. */
  seq: number;
  method: string;
  /** Parameters, normalised: form fields holding JSON, numbers or booleans are parsed. */
  params: Record<string, unknown>;
  /** Uploaded files by parameter name (`photo`, `document`), resolved from `attach://`. */
  files: Record<string, UploadedFile>;
  ok: boolean;
  result?: unknown;
  error?: TelegramErrorBody;
  at: number;
}

export interface MediaPermissions {
  can_send_messages?: boolean;
  can_send_photos?: boolean;
  can_send_documents?: boolean;
}

export type MemberStatus = "creator" | "administrator" | "member" | "left" | "kicked";

/** An administrator's rights that gates need (the rest stay as the fake's defaults). */
export interface AdminRights {
  can_invite_users: boolean;
  can_restrict_members: boolean;
}

/** A request to join a group, waiting for the bot (or an admin) to approve or decline it. */
export interface PendingJoinRequest {
  userId: number;
  userChatId: number;
  /** ms, the fake's clock: the bot may write to userChatId for 5 minutes from it. */
  at: number;
  inviteLink?: string;
}

/** An update before the fake numbers it. */
export type NewUpdate = Omit<Update, "update_id">;

export interface FakeTelegram {
  /** For `new Bot(token, { client: { apiRoot } })`: `http://127.0.0.1:PORT`, no trailing slash. */
  readonly apiRoot: string;
  readonly token: string;
  /** What getMe answers; pass it as `botInfo` to skip the call. */
  readonly botInfo: UserFromGetMe;
  /** Every call but getUpdates, in order of arrival. */
  readonly sent: readonly RecordedCall[];
  /** Numbers the update and queues it for getUpdates (waking a pending long poll). */
  pushUpdate(update: NewUpdate): Update;
  /**
   * Queues an update again with its own id, as Telegram does when the offset past it was never
   * confirmed (the bot stopped or crashed after taking it).
   */
  redeliver(update: Update): void;
  /**
   * A user's text message; a leading `/cmd` or `/cmd@Bot` gets its bot_command entity. With
   * `senderChat`, the message is sent on behalf of a chat: pass `anonymousAdmin` and the group
   * (an anonymous admin), or `channelBot` and a channel (a post sent as a channel).
   */
  message(chat: Chat, from: User, text: string, options?: { senderChat?: Chat }): NewUpdate;
  /** A button click on `message` (default: a new bot message in `chat`). */
  callbackQuery(chat: Chat, from: User, data: string, message?: Message): NewUpdate;
  /** Makes a chat known (needed with `knownChatsOnly`); updates introduce their chats themselves. */
  addChat(chat: Chat): void;
  /**
   * Upgrades a group to a supergroup: from now on every call naming the old id answers 400
   * "group chat was upgraded to a supergroup chat" with `parameters.migrate_to_chat_id`.
   * Returns the service message Telegram posts in the old group (push it, or not).
   */
  upgradeToSupergroup(groupId: number, supergroupId: number, by?: User): NewUpdate;
  /** Takes the bot's right to write in a chat: sends answer 400 "not enough rights to send …". */
  revokeSendRights(chatId: number): void;
  /** What getChatMember answers for this user in this chat (default "member"). */
  setMemberStatus(chatId: number, userId: number, status: MemberStatus): void;
  /** This user's status in the chat now (approvals, bans and unbans change it). */
  memberStatus(chatId: number, userId: number): MemberStatus;
  /**
   * Makes the user (the bot: `botInfo.id`) an administrator of the chat, with every right but
   * those given false here; calling it again changes the rights (an owner who takes one back).
   */
  setAdminRights(chatId: number, userId: number, rights?: Partial<AdminRights>): void;
  /**
   * A person asks to join through a join-request link: a chat_join_request update (push it) and
   * a pending request that approveChatJoinRequest / declineChatJoinRequest handle. For 5 minutes
   * the bot may write to the person through user_chat_id, even if they never pressed Start.
   */
  joinRequest(chat: Chat, from: User, inviteLink?: string): NewUpdate;
  /** The chat's join requests nobody handled yet. */
  pendingJoinRequests(chatId: number): PendingJoinRequest[];
  /** Invite links the bot made with createChatInviteLink, in order. */
  inviteLinks(chatId: number): ChatInviteLink[];
  /**
   * What members (and a bot that is not an admin) may send in a group, as setChatPermissions
   * sets it: a refused kind fails with "not enough rights to send … to the chat".
   */
  setChatPermissions(chatId: number, permissions: MediaPermissions): void;
  /**
   * Every send to this person's private chat fails with `refusal` (they never started the bot,
   * or blocked it); `undefined` lifts it (they pressed Start).
   */
  refusePrivateChat(userId: number, refusal: TelegramErrorBody | undefined): void;
  /** The next matching call(s) of `method` ("*" for any) fail with `failure`. */
  failNext(method: string, failure: FakeFailure, options?: FailOptions): void;
  /** The messages a chat holds now (users' and the bot's, edits applied), oldest first. */
  messages(chatId: number | string): Message[];
  /** Ids of callback queries the bot has not answered yet. */
  unansweredCallbackQueries(): string[];
  /** Commands stored by setMyCommands for a scope (default scope, no language by default). */
  commands(scope?: { type: string }, languageCode?: string): BotCommand[];
  /** Updates not yet confirmed by a getUpdates offset. */
  pendingUpdates(): Update[];
  /** Resolves once a getUpdates long poll is waiting (the bot is up); rejects after `timeoutMs`. */
  waitForPoll(timeoutMs?: number): Promise<void>;
  /** The first recorded call, past or future, that matches; rejects after `timeoutMs` (default 5000). */
  waitFor(predicate: (call: RecordedCall) => boolean, timeoutMs?: number): Promise<RecordedCall>;
  /** Answers pending long polls with no updates, then stops the server and drops its connections. */
  close(): Promise<void>;
}

export function user(id: number, firstName = `User${id}`, username?: string): User {
  const created: User = { id, is_bot: false, first_name: firstName };
  if (username !== undefined) created.username = username;
  return created;
}

/** Every anonymous group admin arrives as this one user, with `sender_chat` set to the group. */
export const anonymousAdmin: User = {
  id: 1087968824,
  is_bot: true,
  first_name: "Group",
  username: "GroupAnonymousBot",
};

/** Every post sent "as a channel" arrives from this user, with `sender_chat` set to the channel. */
export const channelBot: User = {
  id: 136817688,
  is_bot: true,
  first_name: "Channel",
  username: "Channel_Bot",
};

export function channelChat(id: number, title: string): Chat.ChannelChat {
  return { id, type: "channel", title };
}

export function privateChat(of: User): Chat.PrivateChat {
  const chat: Chat.PrivateChat = { id: of.id, type: "private", first_name: of.first_name };
  if (of.username !== undefined) chat.username = of.username;
  return chat;
}

/** Group ids are negative; supergroups look like -100xxxxxxxxxx. */
export function groupChat(id: number, title: string): Chat.GroupChat {
  return { id, type: "group", title };
}

export function supergroupChat(id: number, title: string): Chat.SupergroupChat {
  return { id, type: "supergroup", title };
}

class ApiFailure extends Error {
  constructor(readonly body: TelegramErrorBody) {
    super(body.description);
  }
}

function badRequest(description: string): ApiFailure {
  return new ApiFailure({ error_code: 400, description: `Bad Request: ${description}` });
}

const TEXT_MAX = 4096;
const CAPTION_MAX = 1024;
const CALLBACK_DATA_MAX_BYTES = 64;
const CALLBACK_ANSWER_MAX = 200;
const INVITE_LINK_NAME_MAX = 32;
/** How long a join request's user_chat_id lets the bot write to the person. */
const JOIN_REQUEST_CHAT_MS = 5 * 60_000;
/** Without allowed_updates, Telegram sends every kind but these. */
const NOT_SENT_BY_DEFAULT = new Set(["chat_member", "message_reaction", "message_reaction_count"]);

const JSON_PARAMS = new Set([
  "reply_markup",
  "allowed_updates",
  "commands",
  "scope",
  "entities",
  "caption_entities",
  "link_preview_options",
  "reply_parameters",
]);
const INT_PARAMS = new Set([
  "chat_id",
  "message_id",
  "user_id",
  "offset",
  "limit",
  "timeout",
  "cache_time",
  "message_thread_id",
  "max_connections",
  "until_date",
  "expire_date",
  "member_limit",
]);
const BOOL_PARAMS = new Set([
  "disable_notification",
  "protect_content",
  "show_alert",
  "drop_pending_updates",
  "has_spoiler",
  "disable_content_type_detection",
  "allow_sending_without_reply",
  "creates_join_request",
  "only_if_banned",
  "revoke_messages",
]);

/** Form fields arrive as strings; Telegram reads them by the parameter's type, and so do we. */
function normalizeParams(fields: Record<string, unknown>): Record<string, unknown> {
  const out: Record<string, unknown> = {};
  for (const [key, value] of Object.entries(fields)) {
    if (typeof value !== "string") {
      out[key] = value;
    } else if (JSON_PARAMS.has(key)) {
      try {
        out[key] = JSON.parse(value);
      } catch {
        throw badRequest(`can't parse ${key} JSON object`);
      }
    } else if (INT_PARAMS.has(key) && /^-?\d+$/.test(value)) {
      out[key] = Number(value);
    } else if (BOOL_PARAMS.has(key) && (value === "true" || value === "false")) {
      out[key] = value === "true";
    } else {
      out[key] = value;
    }
  }
  return out;
}

function updateType(update: Update): string {
  return Object.keys(update).find((key) => key !== "update_id") ?? "";
}

function commandEntity(text: string): MessageEntity[] {
  const match = /^\/[a-zA-Z0-9_]{1,32}(@[a-zA-Z0-9_]{1,64})?/.exec(text);
  return match ? [{ type: "bot_command", offset: 0, length: match[0].length }] : [];
}

function isImage(data: Buffer): boolean {
  const png = data
    .subarray(0, 8)
    .equals(Buffer.from([0x89, 0x50, 0x4e, 0x47, 0x0d, 0x0a, 0x1a, 0x0a]));
  const jpeg = data[0] === 0xff && data[1] === 0xd8;
  const gif = data.subarray(0, 4).toString("latin1") === "GIF8";
  const webp = data.subarray(8, 12).toString("latin1") === "WEBP";
  return png || jpeg || gif || webp;
}

function isHttpUrl(value: string): boolean {
  return /^https?:\/\/[^\s]+$/i.test(value);
}

function validateReplyMarkup(markup: unknown): void {
  if (markup === undefined) return;
  if (typeof markup !== "object" || markup === null)
    throw badRequest("can't parse reply keyboard markup JSON object");
  if (!("inline_keyboard" in markup)) return;
  const rows = (markup as { inline_keyboard: unknown }).inline_keyboard;
  if (!Array.isArray(rows) || rows.some((row) => !Array.isArray(row))) {
    throw badRequest(
      'field "inline_keyboard" of the InlineKeyboardMarkup must be an Array of Arrays',
    );
  }
  for (const button of rows.flat() as Record<string, unknown>[]) {
    if (typeof button?.text !== "string" || button.text.trim() === "") {
      throw badRequest("text buttons are unallowed in the inline keyboard");
    }
    if ("callback_data" in button) {
      const data = button.callback_data;
      const bytes = typeof data === "string" ? Buffer.byteLength(data, "utf8") : 0;
      if (bytes < 1 || bytes > CALLBACK_DATA_MAX_BYTES) throw badRequest("BUTTON_DATA_INVALID");
    } else if ("url" in button) {
      if (typeof button.url !== "string" || !/^(https?|tg):\/\//i.test(button.url)) {
        throw badRequest("BUTTON_URL_INVALID");
      }
    } else {
      throw badRequest("text buttons are unallowed in the inline keyboard");
    }
  }
}

interface ChatState {
  chat: Chat;
  nextMessageId: number;
  messages: Map<number, Message>;
}

interface PendingPoll {
  limit: number;
  res: ServerResponse;
  timer: NodeJS.Timeout;
}

interface Waiter {
  predicate: (call: RecordedCall) => boolean;
  resolve: (call: RecordedCall) => void;
}

interface Failure {
  method: string;
  failure: FakeFailure;
  chatId: string | undefined;
  times: number;
}

interface CallContext {
  params: Record<string, unknown>;
  files: Record<string, UploadedFile>;
}

export async function startFakeTelegram(options: FakeTelegramOptions = {}): Promise<FakeTelegram> {
  const token = options.token ?? "123456789:TEST-token-0123456789abcdefghijklmn";
  const now = options.now ?? Date.now;
  const botId = Number(token.split(":")[0]) || 123456789;
  const botInfo: UserFromGetMe = {
    id: botId,
    is_bot: true,
    first_name: options.botFirstName ?? "Fake Test Bot",
    username: options.botUsername ?? "fake_test_bot",
    can_join_groups: true,
    can_read_all_group_messages: false,
    supports_inline_queries: false,
    can_connect_to_business: false,
    has_main_web_app: false,
    has_topics_enabled: false,
    allows_users_to_create_topics: false,
    can_manage_bots: false,
    supports_join_request_queries: false,
  };
  const botUser: User = {
    id: botId,
    is_bot: true,
    first_name: botInfo.first_name,
    username: botInfo.username,
  };
  const rateLimiter =
    options.rateLimits === undefined || options.rateLimits === false
      ? undefined
      : new SendRateLimiter(
          { ...TELEGRAM_RATE_LIMITS, ...(options.rateLimits === true ? {} : options.rateLimits) },
          now,
        );

  const chats = new Map<string, ChatState>();
  const users = new Map<number, User>();
  const members = new Map<string, MemberStatus>();
  /** Rights an administrator lacks, by `chat:user` (every other right is granted). */
  const adminRights = new Map<string, Partial<AdminRights>>();
  /** Pending join requests by chat id, then user id. */
  const joinRequests = new Map<string, Map<number, PendingJoinRequest>>();
  const invites = new Map<string, ChatInviteLink[]>();
  let nextInvite = 1;
  const permissions = new Map<string, MediaPermissions>();
  const privateRefusals = new Map<string, TelegramErrorBody>();
  const unsupported = new Set((options.unsupportedMethods ?? []).map((m) => m.toLowerCase()));
  const callbackQueries = new Map<string, { answered: boolean }>();
  const commandSets = new Map<string, BotCommand[]>();
  const failures: Failure[] = [];
  /** Old group id to its supergroup's id. */
  const upgraded = new Map<string, number>();
  const cannotSend = new Set<string>();
  const sent: RecordedCall[] = [];
  const waiters = new Set<Waiter>();
  const pollWaiters = new Set<() => void>();
  let updates: Update[] = [];
  let nextUpdateId = 10_000;
  let allowedUpdates: string[] = [];
  let webhookUrl = "";
  let pendingPoll: PendingPoll | undefined;
  let nextFileId = 1;
  let nextCallbackId = 1;
  let closed = false;

  const seconds = () => Math.floor(now() / 1000);

  function stateOf(chat: Chat): ChatState {
    const key = String(chat.id);
    let state = chats.get(key);
    if (!state) {
      state = { chat, nextMessageId: 1, messages: new Map() };
      chats.set(key, state);
    }
    return state;
  }

  function findChat(chatId: unknown): ChatState {
    if (chatId === undefined || chatId === "") throw badRequest("chat_id is empty");
    const key = String(chatId);
    const supergroup = upgraded.get(key);
    if (supergroup !== undefined) {
      throw new ApiFailure({
        error_code: 400,
        description: "Bad Request: group chat was upgraded to a supergroup chat",
        parameters: { migrate_to_chat_id: supergroup },
      });
    }
    const known =
      chats.get(key) ??
      (key.startsWith("@")
        ? [...chats.values()].find((s) => "username" in s.chat && `@${s.chat.username}` === key)
        : undefined);
    if (known) return known;
    if (options.knownChatsOnly || !/^-?\d+$/.test(key)) throw badRequest("chat not found");
    const id = Number(key);
    const chat: Chat =
      id > 0
        ? { id, type: "private", first_name: `User${id}` }
        : key.startsWith("-100")
          ? { id, type: "supergroup", title: `Chat ${id}` }
          : { id, type: "group", title: `Chat ${id}` };
    return stateOf(chat);
  }

  function remember(from: User | undefined, chat: Chat | undefined): void {
    if (from) users.set(from.id, from);
    if (chat) stateOf(chat);
  }

  function botMessage(state: ChatState, content: Partial<Message>): Message {
    const message = {
      message_id: state.nextMessageId++,
      date: seconds(),
      chat: state.chat,
      from: botUser,
      ...content,
    } as Message;
    state.messages.set(message.message_id, message);
    return message;
  }

  function parseText(
    text: unknown,
    parseMode: unknown,
    entities: unknown,
  ): { text: string; entities: MessageEntity[] } {
    const raw = typeof text === "string" ? text : "";
    if (parseMode === "HTML") {
      try {
        return parseTelegramHtml(raw);
      } catch (error) {
        if (error instanceof EntityParseError)
          throw badRequest(`can't parse entities: ${error.message}`);
        throw error;
      }
    }
    if (parseMode !== undefined && parseMode !== "MarkdownV2" && parseMode !== "Markdown") {
      throw badRequest("unsupported parse_mode");
    }
    return { text: raw, entities: Array.isArray(entities) ? (entities as MessageEntity[]) : [] };
  }

  function withFormatting(
    key: "text" | "caption",
    parsed: { text: string; entities: MessageEntity[] },
  ) {
    const entitiesKey = key === "text" ? "entities" : "caption_entities";
    return parsed.entities.length > 0
      ? { [key]: parsed.text, [entitiesKey]: parsed.entities }
      : { [key]: parsed.text };
  }

  /** A join request made in the last 5 minutes and not handled: its user_chat_id is open. */
  function openedByJoinRequest(chatId: number): boolean {
    for (const pending of joinRequests.values())
      for (const request of pending.values())
        if (request.userChatId === chatId && now() - request.at < JOIN_REQUEST_CHAT_MS) return true;
    return false;
  }

  function checkRights(state: ChatState, kind: keyof MediaPermissions): void {
    const refusal = privateRefusals.get(String(state.chat.id));
    if (refusal && !openedByJoinRequest(state.chat.id)) throw new ApiFailure(refusal);
    const what = {
      can_send_messages: "text messages",
      can_send_photos: "photos",
      can_send_documents: "documents",
    }[kind];
    // Where the bot has lost the right to write, Telegram names what it may not send.
    if (cannotSend.has(String(state.chat.id)))
      throw badRequest(`not enough rights to send ${what} to the chat`);
    if (state.chat.type === "private") return;
    if (permissions.get(String(state.chat.id))?.[kind] !== false) return;
    throw badRequest(`not enough rights to send ${what} to the chat`);
  }

  function checkRateLimit(state: ChatState): void {
    if (!rateLimiter) return;
    const isGroup = state.chat.type !== "private";
    const retryAfter = rateLimiter.retryAfter(String(state.chat.id), isGroup);
    if (retryAfter > 0) throw new ApiFailure(telegramErrors.tooManyRequests(retryAfter));
    rateLimiter.record(String(state.chat.id), isGroup);
  }

  function inputFile(ctx: CallContext, name: "photo" | "document"): UploadedFile | string {
    const value = ctx.params[name];
    if (typeof value !== "string" || value === "")
      throw badRequest(`there is no ${name} in the request`);
    if (value.startsWith("attach://")) {
      const file = ctx.files[name];
      if (!file) throw badRequest(`wrong ${name} file: ${value} is not in the request`);
      if (file.data.length === 0) throw badRequest("file must be non-empty");
      return file;
    }
    return value;
  }

  function fileId(): { file_id: string; file_unique_id: string } {
    const n = nextFileId++;
    return { file_id: `fake-file-${n}`, file_unique_id: `fake-unique-${n}` };
  }

  function editableMessage(params: Record<string, unknown>): {
    state: ChatState;
    message: Message;
  } {
    if (params.inline_message_id !== undefined)
      throw badRequest("inline messages are not supported by the fake");
    const state = findChat(params.chat_id);
    const message = state.messages.get(Number(params.message_id));
    if (!message) throw badRequest("message to edit not found");
    if (message.from?.id !== botId) throw badRequest("message can't be edited");
    return { state, message };
  }

  function memberOf(chatId: unknown, userId: unknown): ChatMember {
    const state = findChat(chatId);
    if (typeof userId !== "number") throw badRequest("user_id is empty");
    const member = userId === botId ? botUser : (users.get(userId) ?? user(userId));
    const status = members.get(`${state.chat.id}:${userId}`) ?? "member";
    switch (status) {
      case "creator":
        return { status, user: member, is_anonymous: false };
      case "administrator":
        return {
          status,
          user: member,
          can_be_edited: false,
          is_anonymous: false,
          can_manage_chat: true,
          can_delete_messages: true,
          can_manage_video_chats: true,
          can_restrict_members: true,
          can_promote_members: false,
          can_change_info: true,
          can_invite_users: true,
          can_post_stories: false,
          can_edit_stories: false,
          can_delete_stories: false,
          can_send_welcome_messages: false,
          ...adminRights.get(`${state.chat.id}:${userId}`),
        };
      case "kicked":
        return { status, user: member, until_date: 0 };
      default:
        return { status, user: member };
    }
  }

  /** The bot's standing in a group: an admin with `right`, or the refusal Telegram gives. */
  function requireBotRight(state: ChatState, right: keyof AdminRights, refusal: string): void {
    const key = `${state.chat.id}:${botId}`;
    const status = members.get(key) ?? "member";
    if (status === "creator") return;
    if (status !== "administrator" || adminRights.get(key)?.[right] === false)
      throw badRequest(refusal);
  }

  function targetUser(params: Record<string, unknown>): number {
    if (typeof params.user_id !== "number") throw badRequest("user_id is empty");
    return params.user_id;
  }

  /** Takes the user's pending join request, or answers as Telegram does when there is none. */
  function takeJoinRequest(state: ChatState, userId: number): PendingJoinRequest {
    const pending = joinRequests.get(String(state.chat.id));
    const request = pending?.get(userId);
    if (!request) {
      const status = members.get(`${state.chat.id}:${userId}`);
      if (status === "member" || status === "administrator" || status === "creator")
        throw badRequest("USER_ALREADY_PARTICIPANT");
      throw badRequest("HIDE_REQUESTER_MISSING");
    }
    pending?.delete(userId);
    return request;
  }

  function commandKey(scope: unknown, languageCode: unknown): string {
    return `${JSON.stringify(scope ?? { type: "default" })}|${typeof languageCode === "string" ? languageCode : ""}`;
  }

  const methods: Record<string, (ctx: CallContext) => unknown> = {
    getme: () => botInfo,
    logout: () => true,
    close: () => true,
    deletewebhook: ({ params }) => {
      webhookUrl = "";
      if (params.drop_pending_updates === true) updates = [];
      return true;
    },
    setwebhook: ({ params }) => {
      if (typeof params.url !== "string") throw badRequest("url is empty");
      if (params.url !== "" && !/^https:\/\//.test(params.url)) {
        throw badRequest("bad webhook: An HTTPS URL must be provided for webhook");
      }
      webhookUrl = params.url;
      if (params.drop_pending_updates === true) updates = [];
      return true;
    },
    getwebhookinfo: () => ({
      url: webhookUrl,
      has_custom_certificate: false,
      pending_update_count: updates.length,
    }),
    getchat: ({ params }) => findChat(params.chat_id).chat,
    sendchataction: ({ params }) => {
      findChat(params.chat_id);
      return true;
    },
    sendmessage: ({ params }) => {
      const state = findChat(params.chat_id);
      checkRights(state, "can_send_messages");
      const parsed = parseText(params.text, params.parse_mode, params.entities);
      if (parsed.text.trim() === "") throw badRequest("message text is empty");
      if (parsed.text.length > TEXT_MAX) throw badRequest("message is too long");
      validateReplyMarkup(params.reply_markup);
      checkRateLimit(state);
      return botMessage(state, {
        ...withFormatting("text", parsed),
        ...(params.reply_markup
          ? { reply_markup: params.reply_markup as InlineKeyboardMarkup }
          : {}),
      });
    },
    sendphoto: (ctx) => {
      const { params } = ctx;
      const state = findChat(params.chat_id);
      checkRights(state, "can_send_photos");
      const photo = inputFile(ctx, "photo");
      if (typeof photo === "string" && /^[a-z]+:/i.test(photo) && !isHttpUrl(photo)) {
        throw badRequest("wrong HTTP URL specified");
      }
      if (typeof photo !== "string" && !isImage(photo.data))
        throw badRequest("IMAGE_PROCESS_FAILED");
      const caption = parseText(params.caption, params.parse_mode, params.caption_entities);
      if (caption.text.length > CAPTION_MAX) throw badRequest("message caption is too long");
      validateReplyMarkup(params.reply_markup);
      checkRateLimit(state);
      const size = typeof photo === "string" ? 0 : photo.data.length;
      return botMessage(state, {
        photo: [{ ...fileId(), width: 1, height: 1, file_size: size }],
        ...(caption.text !== "" ? withFormatting("caption", caption) : {}),
        ...(params.reply_markup
          ? { reply_markup: params.reply_markup as InlineKeyboardMarkup }
          : {}),
      });
    },
    senddocument: (ctx) => {
      const { params } = ctx;
      const state = findChat(params.chat_id);
      checkRights(state, "can_send_documents");
      const document = inputFile(ctx, "document");
      const caption = parseText(params.caption, params.parse_mode, params.caption_entities);
      if (caption.text.length > CAPTION_MAX) throw badRequest("message caption is too long");
      validateReplyMarkup(params.reply_markup);
      checkRateLimit(state);
      return botMessage(state, {
        document: {
          ...fileId(),
          ...(typeof document === "string"
            ? {}
            : { file_name: document.filename, file_size: document.data.length }),
        },
        ...(caption.text !== "" ? withFormatting("caption", caption) : {}),
        ...(params.reply_markup
          ? { reply_markup: params.reply_markup as InlineKeyboardMarkup }
          : {}),
      });
    },
    editmessagetext: ({ params }) => {
      const { state, message } = editableMessage(params);
      if (!("text" in message)) throw badRequest("there is no text in the message to edit");
      const parsed = parseText(params.text, params.parse_mode, params.entities);
      if (parsed.text.trim() === "") throw badRequest("message text is empty");
      if (parsed.text.length > TEXT_MAX) throw badRequest("message is too long");
      validateReplyMarkup(params.reply_markup);
      const edited = { ...message, text: parsed.text, edit_date: seconds() } as Message;
      if (parsed.entities.length > 0) edited.entities = parsed.entities;
      else delete edited.entities;
      if (params.reply_markup) edited.reply_markup = params.reply_markup as InlineKeyboardMarkup;
      else delete edited.reply_markup;
      const same =
        message.text === edited.text &&
        JSON.stringify(message.entities ?? []) === JSON.stringify(edited.entities ?? []) &&
        JSON.stringify(message.reply_markup ?? null) ===
          JSON.stringify(edited.reply_markup ?? null);
      if (same) {
        throw badRequest(
          "message is not modified: specified new message content and reply markup are exactly the same as a current content and reply markup of the message",
        );
      }
      state.messages.set(message.message_id, edited);
      return edited;
    },
    editmessagereplymarkup: ({ params }) => {
      const { state, message } = editableMessage(params);
      validateReplyMarkup(params.reply_markup);
      const edited = { ...message, edit_date: seconds() } as Message;
      if (params.reply_markup) edited.reply_markup = params.reply_markup as InlineKeyboardMarkup;
      else delete edited.reply_markup;
      if (
        JSON.stringify(message.reply_markup ?? null) === JSON.stringify(edited.reply_markup ?? null)
      ) {
        throw badRequest(
          "message is not modified: specified new message content and reply markup are exactly the same as a current content and reply markup of the message",
        );
      }
      state.messages.set(message.message_id, edited);
      return edited;
    },
    deletemessage: ({ params }) => {
      const state = findChat(params.chat_id);
      if (!state.messages.delete(Number(params.message_id))) {
        throw badRequest("message to delete not found");
      }
      return true;
    },
    answercallbackquery: ({ params }) => {
      const query = callbackQueries.get(String(params.callback_query_id));
      if (!query || query.answered) {
        throw badRequest("query is too old and response timeout expired or query ID is invalid");
      }
      if (typeof params.text === "string" && params.text.length > CALLBACK_ANSWER_MAX) {
        throw badRequest("MESSAGE_TOO_LONG");
      }
      query.answered = true;
      return true;
    },
    setmycommands: ({ params }) => {
      const commands = params.commands;
      if (!Array.isArray(commands)) throw badRequest("can't parse commands JSON object");
      if (commands.length > 100) throw badRequest("too many commands");
      for (const entry of commands as Record<string, unknown>[]) {
        if (typeof entry?.command !== "string" || !/^[a-z0-9_]{1,32}$/.test(entry.command)) {
          throw badRequest("BOT_COMMAND_INVALID");
        }
        const description = entry.description;
        if (typeof description !== "string" || description.length < 1 || description.length > 256) {
          throw badRequest("BOT_COMMAND_DESCRIPTION_INVALID");
        }
      }
      commandSets.set(commandKey(params.scope, params.language_code), commands as BotCommand[]);
      return true;
    },
    getmycommands: ({ params }) =>
      commandSets.get(commandKey(params.scope, params.language_code)) ?? [],
    deletemycommands: ({ params }) => {
      commandSets.delete(commandKey(params.scope, params.language_code));
      return true;
    },
    getchatmember: ({ params }) => memberOf(params.chat_id, params.user_id),
    createchatinvitelink: ({ params }) => {
      const state = findChat(params.chat_id);
      if (state.chat.type === "private") throw badRequest("chat not found");
      requireBotRight(state, "can_invite_users", "not enough rights to manage chat invite link");
      const name = typeof params.name === "string" ? params.name : undefined;
      if (name !== undefined && name.length > INVITE_LINK_NAME_MAX)
        throw badRequest("INVITE_LINK_NAME_INVALID");
      const joinRequest = params.creates_join_request === true;
      if (joinRequest && params.member_limit !== undefined)
        throw badRequest(
          "member limit can't be specified for links requiring administrator approval",
        );
      const link: ChatInviteLink = {
        invite_link: `https://t.me/+fake${String(nextInvite++).padStart(6, "0")}`,
        creator: botUser,
        creates_join_request: joinRequest,
        is_primary: false,
        is_revoked: false,
        ...(name !== undefined ? { name } : {}),
      };
      const key = String(state.chat.id);
      invites.set(key, [...(invites.get(key) ?? []), link]);
      return link;
    },
    approvechatjoinrequest: ({ params }) => {
      const state = findChat(params.chat_id);
      const userId = targetUser(params);
      requireBotRight(state, "can_invite_users", "CHAT_ADMIN_REQUIRED");
      takeJoinRequest(state, userId);
      members.set(`${state.chat.id}:${userId}`, "member");
      return true;
    },
    declinechatjoinrequest: ({ params }) => {
      const state = findChat(params.chat_id);
      const userId = targetUser(params);
      requireBotRight(state, "can_invite_users", "CHAT_ADMIN_REQUIRED");
      takeJoinRequest(state, userId);
      return true;
    },
    banchatmember: ({ params }) => {
      const state = findChat(params.chat_id);
      const userId = targetUser(params);
      if (state.chat.type === "private")
        throw badRequest("chat member status can't be changed in private chats");
      requireBotRight(
        state,
        "can_restrict_members",
        "not enough rights to restrict/unrestrict chat member",
      );
      const key = `${state.chat.id}:${userId}`;
      const status = members.get(key);
      if (status === "creator") throw badRequest("can't remove chat owner");
      if (status === "administrator") throw badRequest("user is an administrator of the chat");
      // A basic group keeps no ban list: the member is only removed.
      members.set(key, state.chat.type === "group" ? "left" : "kicked");
      return true;
    },
    unbanchatmember: ({ params }) => {
      const state = findChat(params.chat_id);
      const userId = targetUser(params);
      if (state.chat.type !== "supergroup" && state.chat.type !== "channel")
        throw badRequest("method is available for supergroup and channel chats only");
      requireBotRight(
        state,
        "can_restrict_members",
        "not enough rights to restrict/unrestrict chat member",
      );
      const key = `${state.chat.id}:${userId}`;
      const status = members.get(key) ?? "member";
      if (status === "kicked") members.set(key, "left");
      // Without only_if_banned, an unban guarantees the person is out of the chat.
      else if (params.only_if_banned !== true && status === "member") members.set(key, "left");
      return true;
    },
  };

  function record(call: RecordedCall): void {
    call.seq = sent.length + 1;
    sent.push(call);
    for (const waiter of waiters) {
      if (waiter.predicate(call)) {
        waiters.delete(waiter);
        waiter.resolve(call);
      }
    }
  }

  function takeFailure(method: string, params: Record<string, unknown>): FakeFailure | undefined {
    const index = failures.findIndex(
      (f) =>
        (f.method === "*" || f.method.toLowerCase() === method.toLowerCase()) &&
        (f.chatId === undefined || f.chatId === String(params.chat_id)),
    );
    if (index === -1) return undefined;
    const failure = failures[index]!;
    failure.times -= 1;
    if (failure.times <= 0) failures.splice(index, 1);
    return failure.failure;
  }

  function reply(res: ServerResponse, status: number, body: unknown): void {
    if (res.writableEnded || res.destroyed) return;
    const json = JSON.stringify(body);
    res.writeHead(status, {
      "content-type": "application/json",
      "content-length": Buffer.byteLength(json),
    });
    res.end(json);
  }

  function replyError(res: ServerResponse, error: TelegramErrorBody): void {
    reply(res, error.error_code, { ok: false, ...error });
  }

  // --- getUpdates and long polling

  function confirm(offset: number): void {
    if (offset > 0) updates = updates.filter((u) => u.update_id >= offset);
    else if (offset < 0) updates = updates.slice(offset);
  }

  function deliverable(limit: number): Update[] {
    const allowed = (u: Update) =>
      allowedUpdates.length === 0
        ? !NOT_SENT_BY_DEFAULT.has(updateType(u))
        : allowedUpdates.includes(updateType(u));
    return updates.filter(allowed).slice(0, limit);
  }

  function answerPoll(poll: PendingPoll, result: Update[]): void {
    clearTimeout(poll.timer);
    if (pendingPoll === poll) pendingPoll = undefined;
    reply(poll.res, 200, { ok: true, result });
  }

  function getUpdates(params: Record<string, unknown>, res: ServerResponse): void {
    if (webhookUrl !== "") {
      replyError(res, {
        error_code: 409,
        description:
          "Conflict: can't use getUpdates method while webhook is active; use deleteWebhook to delete the webhook first",
      });
      return;
    }
    if (pendingPoll) {
      const older = pendingPoll;
      clearTimeout(older.timer);
      pendingPoll = undefined;
      replyError(older.res, {
        error_code: 409,
        description:
          "Conflict: terminated by other getUpdates request; make sure that only one bot instance is running",
      });
    }
    const offset = typeof params.offset === "number" ? params.offset : 0;
    const limit = Math.min(100, Math.max(1, typeof params.limit === "number" ? params.limit : 100));
    const timeout = Math.max(0, typeof params.timeout === "number" ? params.timeout : 0);
    if (Array.isArray(params.allowed_updates)) allowedUpdates = params.allowed_updates as string[];
    confirm(offset);
    const ready = deliverable(limit);
    if (ready.length > 0 || timeout === 0 || closed) {
      reply(res, 200, { ok: true, result: ready });
      return;
    }
    const poll: PendingPoll = {
      limit,
      res,
      timer: setTimeout(() => answerPoll(poll, []), timeout * 1000),
    };
    pendingPoll = poll;
    for (const wake of pollWaiters) wake();
    pollWaiters.clear();
    res.on("close", () => {
      // The client gave up (grammY aborts the poll on stop): forget it, the updates stay queued.
      clearTimeout(poll.timer);
      if (pendingPoll === poll) pendingPoll = undefined;
    });
  }

  // --- HTTP

  async function handle(req: IncomingMessage, res: ServerResponse): Promise<void> {
    const url = new URL(req.url ?? "/", "http://127.0.0.1");
    const match = /^\/bot([^/]+)\/([A-Za-z]+)$/.exec(url.pathname);
    if (!match) {
      replyError(res, { error_code: 404, description: "Not Found" });
      return;
    }
    if (decodeURIComponent(match[1]!) !== token) {
      replyError(res, { error_code: 401, description: "Unauthorized" });
      return;
    }
    const methodName = match[2]!;
    const method = methodName.toLowerCase();
    let params: Record<string, unknown>;
    const files: Record<string, UploadedFile> = {};
    try {
      const body = await readRequestBody(req, url);
      params = normalizeParams(body.fields);
      const byField = new Map(body.files.map((file) => [file.field, file]));
      for (const [key, value] of Object.entries(params)) {
        if (typeof value === "string" && value.startsWith("attach://")) {
          const file = byField.get(value.slice("attach://".length));
          if (file) files[key] = file;
        }
      }
    } catch (error) {
      const description =
        error instanceof ApiFailure
          ? error.body.description
          : `Bad Request: ${error instanceof BodyError ? error.message : "can't read the request"}`;
      replyError(res, { error_code: 400, description });
      return;
    }

    if (method === "getupdates") {
      getUpdates(params, res);
      return;
    }

    const call: RecordedCall = { seq: 0, method: methodName, params, files, ok: false, at: now() };
    const handler = unsupported.has(method) ? undefined : methods[method];
    if (!handler) {
      call.error = { error_code: 404, description: "Not Found: method not found" };
      record(call);
      replyError(res, call.error);
      return;
    }
    const failure = takeFailure(methodName, params);
    if (failure === "disconnect") {
      call.error = { error_code: 0, description: "connection dropped by the fake" };
      record(call);
      req.socket.destroy();
      return;
    }
    if (failure) {
      call.error = failure;
      record(call);
      replyError(res, failure);
      return;
    }
    try {
      const result = handler({ params, files });
      call.ok = true;
      call.result = result;
      record(call);
      reply(res, 200, { ok: true, result });
    } catch (error) {
      if (!(error instanceof ApiFailure)) throw error;
      call.error = error.body;
      record(call);
      replyError(res, error.body);
    }
  }

  const server = createServer((req, res) => {
    handle(req, res).catch((error: unknown) => {
      replyError(res, {
        error_code: 500,
        description: `Internal Server Error: ${error instanceof Error ? error.message : String(error)}`,
      });
    });
  });
  await new Promise<void>((resolve, reject) => {
    server.once("error", reject);
    server.listen(options.port ?? 0, "127.0.0.1", () => {
      server.off("error", reject);
      resolve();
    });
  });
  // grammY keeps connections alive; a server closing them first would make its next call fail.
  server.keepAliveTimeout = 60_000;
  const { port } = server.address() as AddressInfo;

  const fake: FakeTelegram = {
    apiRoot: `http://127.0.0.1:${port}`,
    token,
    botInfo,
    sent,
    pushUpdate(update) {
      const numbered = { update_id: nextUpdateId++, ...update } as Update;
      const message =
        numbered.message ??
        numbered.edited_message ??
        numbered.channel_post ??
        numbered.callback_query?.message;
      remember(numbered.message?.from ?? numbered.callback_query?.from, message?.chat);
      updates.push(numbered);
      if (pendingPoll) {
        const ready = deliverable(pendingPoll.limit);
        if (ready.length > 0) answerPoll(pendingPoll, ready);
      }
      return numbered;
    },
    redeliver(update) {
      updates.push(update);
      if (pendingPoll) {
        const ready = deliverable(pendingPoll.limit);
        if (ready.length > 0) answerPoll(pendingPoll, ready);
      }
    },
    message(chat, from, text, messageOptions = {}) {
      remember(from, chat);
      const state = stateOf(chat);
      const entities = commandEntity(text);
      const message = {
        message_id: state.nextMessageId++,
        date: seconds(),
        chat,
        from,
        ...(messageOptions.senderChat ? { sender_chat: messageOptions.senderChat } : {}),
        text,
        ...(entities.length > 0 ? { entities } : {}),
      } as Message;
      state.messages.set(message.message_id, message);
      return { message } as NewUpdate;
    },
    callbackQuery(chat, from, data, message) {
      remember(from, chat);
      const on = message ?? botMessage(stateOf(chat), { text: "…" });
      const id = `${botId}${String(nextCallbackId++).padStart(6, "0")}`;
      callbackQueries.set(id, { answered: false });
      const query: CallbackQuery = {
        id,
        from,
        chat_instance: `${chat.id}-instance`,
        data,
        message: on as CallbackQuery["message"] & object,
      };
      return { callback_query: query } as NewUpdate;
    },
    addChat(chat) {
      stateOf(chat);
    },
    upgradeToSupergroup(groupId, supergroupId, by = user(1, "Owner")) {
      const old = stateOf({ id: groupId, type: "group", title: `Chat ${groupId}` });
      const title = ("title" in old.chat && old.chat.title) || `Chat ${groupId}`;
      stateOf({ id: supergroupId, type: "supergroup", title });
      upgraded.set(String(groupId), supergroupId);
      const message = {
        message_id: old.nextMessageId++,
        date: seconds(),
        chat: old.chat,
        from: by,
        migrate_to_chat_id: supergroupId,
      } as Message;
      old.messages.set(message.message_id, message);
      return { message } as NewUpdate;
    },
    revokeSendRights(chatId) {
      cannotSend.add(String(chatId));
    },
    setMemberStatus(chatId, userId, status) {
      members.set(`${chatId}:${userId}`, status);
    },
    memberStatus(chatId, userId) {
      return members.get(`${chatId}:${userId}`) ?? "member";
    },
    setAdminRights(chatId, userId, rights = {}) {
      members.set(`${chatId}:${userId}`, "administrator");
      adminRights.set(`${chatId}:${userId}`, rights);
    },
    joinRequest(chat, from, inviteLink) {
      remember(from, chat);
      const key = String(chat.id);
      const pending = joinRequests.get(key) ?? new Map<number, PendingJoinRequest>();
      joinRequests.set(key, pending);
      // A private chat's id is the person's id: user_chat_id names it.
      pending.set(from.id, {
        userId: from.id,
        userChatId: from.id,
        at: now(),
        ...(inviteLink !== undefined ? { inviteLink } : {}),
      });
      const link = invites.get(key)?.find((l) => l.invite_link === inviteLink);
      const request: ChatJoinRequest = {
        chat: chat as ChatJoinRequest["chat"],
        from,
        user_chat_id: from.id,
        date: seconds(),
        ...(link ? { invite_link: link } : {}),
      };
      return { chat_join_request: request } as NewUpdate;
    },
    pendingJoinRequests(chatId) {
      return [...(joinRequests.get(String(chatId))?.values() ?? [])];
    },
    inviteLinks(chatId) {
      return [...(invites.get(String(chatId)) ?? [])];
    },
    refusePrivateChat(userId, refusal) {
      if (refusal) privateRefusals.set(String(userId), refusal);
      else privateRefusals.delete(String(userId));
    },
    setChatPermissions(chatId, granted) {
      permissions.set(String(chatId), { ...permissions.get(String(chatId)), ...granted });
    },
    failNext(method, failure, failOptions = {}) {
      failures.push({
        method,
        failure,
        chatId: failOptions.chatId === undefined ? undefined : String(failOptions.chatId),
        times: failOptions.times ?? 1,
      });
    },
    messages(chatId) {
      const state = chats.get(String(chatId));
      return state ? [...state.messages.values()].sort((a, b) => a.message_id - b.message_id) : [];
    },
    unansweredCallbackQueries() {
      return [...callbackQueries.entries()].filter(([, q]) => !q.answered).map(([id]) => id);
    },
    commands(scope, languageCode) {
      return commandSets.get(commandKey(scope, languageCode)) ?? [];
    },
    pendingUpdates() {
      return [...updates];
    },
    waitForPoll(timeoutMs = 5000) {
      if (pendingPoll) return Promise.resolve();
      return new Promise((resolve, reject) => {
        const wake = () => {
          clearTimeout(timer);
          resolve();
        };
        const timer = setTimeout(() => {
          pollWaiters.delete(wake);
          reject(new Error(`No getUpdates long poll within ${timeoutMs} ms`));
        }, timeoutMs);
        pollWaiters.add(wake);
      });
    },
    waitFor(predicate, timeoutMs = 5000) {
      const found = sent.find(predicate);
      if (found) return Promise.resolve(found);
      return new Promise((resolve, reject) => {
        const waiter: Waiter = {
          predicate,
          resolve: (call) => {
            clearTimeout(timer);
            resolve(call);
          },
        };
        const timer = setTimeout(() => {
          waiters.delete(waiter);
          const seen = sent.map((c) => `${c.method}${c.ok ? "" : ` (${c.error?.error_code})`}`);
          reject(
            new Error(
              `No matching Bot API call within ${timeoutMs} ms; calls: ${seen.join(", ") || "none"}`,
            ),
          );
        }, timeoutMs);
        waiters.add(waiter);
      });
    },
    async close() {
      if (closed) return;
      closed = true;
      if (pendingPoll) answerPoll(pendingPoll, []);
      await new Promise<void>((resolve) => {
        server.close(() => resolve());
        server.closeIdleConnections();
        // Let the answered long poll flush before the keep-alive sockets are cut.
        setImmediate(() => server.closeAllConnections());
      });
    },
  };
  return fake;
}
