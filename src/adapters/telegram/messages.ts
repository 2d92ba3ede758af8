import { type Api, type GrammyError, InputFile } from "grammy";
import type { Logger } from "../../log.ts";
import {
  escapeHtml,
  type TelegramInlineKeyboard,
  type TelegramMessage,
} from "../../render/telegram.ts";
import { isAttachmentRefused } from "./errors.ts";

/** What every message of a reply is sent with. */
interface SendOptions {
  parse_mode: "HTML";
  reply_parameters?: { message_id: number; allow_sending_without_reply: boolean };
  reply_markup?: TelegramInlineKeyboard;
}

/** Sends one rendered message to a chat. */
export async function sendTelegramMessage(
  api: Api,
  logger: Logger,
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
    await api.sendMessage(chatId, message.text, {
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
      await api.sendPhoto(chatId, photo, { ...common, ...caption });
    } catch (error) {
      // Telegram fetches image URLs itself and refuses those it cannot read; a chart comes back
      // from a group that lets members send no media or a Bot API without sendPhoto. The answer
      // must still arrive: as text, with the link or a word on the missing chart.
      if (!isAttachmentRefused(error)) throw error;
      const note =
        "url" in message.photo
          ? `<a href="${escapeHtml(message.photo.url)}">image</a>`
          : "<i>(The chart could not be attached in this chat.)</i>";
      await sendText(api, logger, chatId, message.caption, note, common, error);
    }
  } else {
    try {
      await api.sendDocument(chatId, new InputFile(message.document.data, message.document.name), {
        ...common,
        ...(message.caption ? { caption: message.caption } : {}),
      });
    } catch (error) {
      if (!isAttachmentRefused(error)) throw error;
      const note = `<i>(The file ${escapeHtml(message.document.name)} could not be attached in this chat.)</i>`;
      await sendText(api, logger, chatId, message.caption, note, common, error);
    }
  }
}

/** An attachment's caption (and buttons) as a text message, with a note on what is missing. */
async function sendText(
  api: Api,
  logger: Logger,
  chatId: number | string,
  caption: string | undefined,
  note: string,
  common: SendOptions,
  refusal: unknown,
): Promise<void> {
  logger.warn(
    { chat: chatId, reason: (refusal as GrammyError).description },
    "telegram refused an attachment; sending text instead",
  );
  await api.sendMessage(chatId, caption ? `${caption}\n\n${note}` : note, {
    ...common,
    link_preview_options: { is_disabled: true },
  });
}
