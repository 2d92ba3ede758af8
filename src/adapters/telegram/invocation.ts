import { type Context, GrammyError } from "grammy";
import type { Chat } from "grammy/types";
import type { Invocation } from "../../core/command.ts";
import { newInvocationId } from "../../core/runtime.ts";

/** GroupAnonymousBot, Channel_Bot, and the service account that forwards linked-channel posts. */
const PLACEHOLDER_SENDERS = new Set([1087968824, 136817688, 777000]);

/**
 * Who sent an update, as the bot keys people: a person by their user id. Anonymous group admins
 * (all of them GroupAnonymousBot) and posts sent as a channel (Channel_Bot, or Telegram's service
 * account for a linked channel's forwards) share one placeholder user across all of Telegram,
 * so they are keyed by the chat they speak for (`sender_chat`).
 */
export function senderOf(ctx: Context): {
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

/** Telegram's deep-link payloads: 1 to 64 of A-Z, a-z, 0-9, _ and -. */
const START_PAYLOAD = /^[A-Za-z0-9_-]{1,64}$/;

/** The address that opens the private chat with the bot and sends it `/start <payload>`. */
export function startLink(botUsername: string, payload: string): string {
  if (!START_PAYLOAD.test(payload)) throw new Error(`not a Telegram start payload: ${payload}`);
  return `https://t.me/${botUsername}?start=${payload}`;
}

/**
 * A `/start` payload as the command it stands for: `verify_<chain>` (from /verify's group
 * button) is `/verify <chain>`, and `verify_<chain>_<group id>` says which group's button it was
 * (`from`: the person proves to that group; whether they are in it is checked, since anyone can
 * type a payload). None (a person opening the chat and pressing Start) is /help. Anything else is
 * no command.
 */
export function startCommand(
  payload: string,
): { name: string; args: string; from?: string } | undefined {
  if (payload.trim() === "") return { name: "help", args: "" };
  const verify = /^verify(?:_([a-z0-9-]{1,32}))?(?:_(-?\d{1,20}))?$/.exec(payload.trim());
  // By name: a bot of one chain takes its chain option only so.
  if (!verify) return undefined;
  return {
    name: "verify",
    args: verify[1] ? `chain:${verify[1]}` : "",
    ...(verify[2] ? { from: verify[2] } : {}),
  };
}

/** An update as the runtime takes it: who, where, and whether they may manage the chat. */
export function telegramInvocation(ctx: Context): Invocation {
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
    names: async () => ({
      ...(chat && "title" in chat && chat.title && kind === "group"
        ? { placeName: chat.title }
        : {}),
      ...(ctx.me?.first_name ? { botName: ctx.me.first_name } : {}),
    }),
    // A group is no place for a private answer, and the bot may not write to a person first: a
    // button takes them to their private chat with the bot, which runs `/start <payload>` there.
    ...(kind !== "private" && !sender.anonymous
      ? { privateStart: (payload: string) => startLink(ctx.me.username, payload) }
      : {}),
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
