import { autoRetry } from "@grammyjs/auto-retry";
import { type RunnerHandle, run, sequentialize } from "@grammyjs/runner";
import { Api, Bot, type BotError, type Context, GrammyError, HttpError, InputFile } from "grammy";
import type { Message } from "grammy/types";
import { afterEach, beforeEach, describe, expect, it } from "vitest";
import { escapeHtml, renderTelegram, type TelegramMessage } from "../src/render/telegram.ts";
import {
  type FakeTelegram,
  groupChat,
  privateChat,
  type RecordedCall,
  startFakeTelegram,
  supergroupChat,
  telegramErrors,
  user,
} from "./fakes/telegram/index.ts";

const PNG_1X1 = Buffer.from(
  "iVBORw0KGgoAAAANSUhEUgAAAAEAAAABCAYAAAAfFcSJAAAADUlEQVR42mNkYPhfDwAChwGA60e6kgAAAABJRU5ErkJggg==",
  "base64",
);

const alice = user(1001, "Alice", "alice");
const dm = privateChat(alice);
const group = supergroupChat(-1001234567890, "NFT chat");

let fake: FakeTelegram;
let runner: RunnerHandle | undefined;

beforeEach(async () => {
  fake = await startFakeTelegram();
});

afterEach(async () => {
  await runner?.stop();
  runner = undefined;
  await fake.close();
});

/** A real grammY bot as the adapter will build it: runner, per-chat order, auto-retry. */
function startBot(setup: (bot: Bot) => void): Bot {
  const bot = new Bot(fake.token, { client: { apiRoot: fake.apiRoot }, botInfo: fake.botInfo });
  bot.api.config.use(autoRetry({ maxDelaySeconds: 5, maxRetryAttempts: 3 }));
  bot.use(sequentialize((ctx: Context) => ctx.chat?.id.toString()));
  setup(bot);
  runner = run(bot);
  return bot;
}

const okCall = (method: string) => (call: RecordedCall) => call.method === method && call.ok;
const calls = (method: string) => fake.sent.filter((call) => call.method === method);
const botMessages = (chatId: number) => fake.messages(chatId).filter((m) => m.from?.is_bot);

/** What the Telegram adapter will do with rendered messages, reduced to the calls. */
async function sendRendered(ctx: Context, messages: TelegramMessage[]): Promise<void> {
  for (const message of messages) {
    const markup = message.replyMarkup ? { reply_markup: message.replyMarkup } : {};
    if (message.kind === "text") {
      await ctx.reply(message.text, { parse_mode: "HTML", ...markup });
    } else if (message.kind === "photo") {
      const photo =
        "url" in message.photo
          ? message.photo.url
          : new InputFile(message.photo.data, message.photo.name);
      const caption = message.caption === undefined ? {} : { caption: message.caption };
      await ctx.replyWithPhoto(photo, { parse_mode: "HTML", ...caption, ...markup });
    } else {
      const caption = message.caption === undefined ? {} : { caption: message.caption };
      await ctx.replyWithDocument(new InputFile(message.document.data, message.document.name), {
        parse_mode: "HTML",
        ...caption,
        ...markup,
      });
    }
  }
}

describe("grammY against the fake Bot API", () => {
  it("round-trips a command: the handler's HTML reply is recorded and parsed like Telegram", async () => {
    startBot((bot) =>
      bot.command("top", (ctx) =>
        ctx.reply(`<b>Top</b> by ${escapeHtml(ctx.match)}`, { parse_mode: "HTML" }),
      ),
    );
    fake.pushUpdate(fake.message(dm, alice, "/top volume <1d>"));

    const call = await fake.waitFor(okCall("sendMessage"));

    expect(call.params).toMatchObject({
      chat_id: alice.id,
      text: "<b>Top</b> by volume &lt;1d&gt;",
      parse_mode: "HTML",
    });
    expect(call.result).toMatchObject({
      chat: { id: alice.id },
      text: "Top by volume <1d>",
      entities: [{ type: "bold", offset: 0, length: 3 }],
    });
  });

  it("delivers a button click and records its answerCallbackQuery and edit", async () => {
    startBot((bot) => {
      bot.command("start", (ctx) =>
        ctx.reply("Report?", {
          reply_markup: { inline_keyboard: [[{ text: "Spam", callback_data: "a1" }]] },
        }),
      );
      bot.callbackQuery("a1", async (ctx) => {
        await ctx.answerCallbackQuery({ text: "Reported" });
        await ctx.editMessageText("Reported as spam");
      });
    });
    fake.pushUpdate(fake.message(dm, alice, "/start"));
    const sent = await fake.waitFor(okCall("sendMessage"));

    const click = fake.pushUpdate(fake.callbackQuery(dm, alice, "a1", sent.result as Message));
    const answer = await fake.waitFor(okCall("answerCallbackQuery"));
    await fake.waitFor(okCall("editMessageText"));

    expect(answer.params).toMatchObject({
      callback_query_id: click.callback_query?.id,
      text: "Reported",
    });
    expect(fake.unansweredCallbackQueries()).toEqual([]);
    expect(botMessages(alice.id).map((m) => m.text)).toEqual(["Reported as spam"]);
  });

  it("answers /cmd@BotName in a group and ignores a command addressed to another bot", async () => {
    startBot((bot) => bot.command("whois", (ctx) => ctx.reply(`whois ${ctx.match}`)));
    fake.pushUpdate(fake.message(group, alice, "/whois@other_bot nobody.eth"));
    fake.pushUpdate(fake.message(group, alice, `/whois@${fake.botInfo.username}\nvitalik.eth`));

    const call = await fake.waitFor(okCall("sendMessage"));

    expect(call.params).toMatchObject({ chat_id: group.id, text: "whois vitalik.eth" });
    expect(calls("sendMessage")).toHaveLength(1);
  });

  it("retries a 429 after retry_after and delivers the message exactly once", async () => {
    fake.failNext("sendMessage", telegramErrors.tooManyRequests(1));
    startBot((bot) => bot.command("ping", (ctx) => ctx.reply("pong")));
    fake.pushUpdate(fake.message(dm, alice, "/ping"));

    const delivered = await fake.waitFor(okCall("sendMessage"));

    const [refused, accepted] = calls("sendMessage");
    expect(refused?.error).toMatchObject({ error_code: 429, parameters: { retry_after: 1 } });
    expect(accepted).toBe(delivered);
    expect(delivered.at - (refused?.at ?? 0)).toBeGreaterThanOrEqual(950);
    expect(botMessages(alice.id).map((m) => m.text)).toEqual(["pong"]);
  });

  it("does not retry a 403, reports it to bot.catch, and keeps polling", async () => {
    fake.failNext("sendMessage", telegramErrors.blocked(), { chatId: alice.id });
    let caught!: (error: BotError) => void;
    const failure = new Promise<BotError>((resolve) => {
      caught = resolve;
    });
    startBot((bot) => {
      bot.command("ping", (ctx) => ctx.reply("pong"));
      bot.catch(caught);
    });
    fake.pushUpdate(fake.message(dm, alice, "/ping"));

    const error = (await failure).error;
    expect(error).toBeInstanceOf(GrammyError);
    expect((error as GrammyError).error_code).toBe(403);
    expect(calls("sendMessage")).toHaveLength(1);

    fake.pushUpdate(fake.message(dm, alice, "/ping"));
    await fake.waitFor(okCall("sendMessage"));
    expect(calls("sendMessage")).toHaveLength(2);
  });

  it("uploads a PNG with sendPhoto as multipart and a CSV with sendDocument", async () => {
    const csv = Buffer.from("wallet,balance\n0xabc,1\n");
    startBot((bot) =>
      bot.command("chart", async (ctx) => {
        await ctx.replyWithPhoto(new InputFile(PNG_1X1, "chart.png"), {
          caption: "<b>Holders</b> & more",
          parse_mode: "HTML",
        });
        await ctx.replyWithDocument(new InputFile(csv, "holders.csv"));
      }),
    );
    fake.pushUpdate(fake.message(dm, alice, "/chart"));

    const photo = await fake.waitFor(okCall("sendPhoto"));
    const document = await fake.waitFor(okCall("sendDocument"));

    expect(photo.files.photo?.filename).toBe("chart.png");
    expect(photo.files.photo?.data.equals(PNG_1X1)).toBe(true);
    expect(photo.params).toMatchObject({ chat_id: alice.id, parse_mode: "HTML" });
    expect(photo.result).toMatchObject({
      caption: "Holders & more",
      caption_entities: [{ type: "bold", offset: 0, length: 7 }],
    });
    expect(document.files.document?.data.equals(csv)).toBe(true);
    expect(document.result).toMatchObject({
      document: { file_name: "holders.csv", file_size: csv.length },
    });
  });

  it("accepts the renderer's split of a 5000+ character reply, escaped, with buttons last", async () => {
    const name = "<b>x</b> & @everyone";
    const rows = Array.from({ length: 120 }, (_, i) => `${i + 1}. ${name} holds ${"9".repeat(30)}`);
    const messages = renderTelegram({
      title: name,
      text: rows.join("\n"),
      buttons: [{ label: "Not spam", id: "b-1" }],
    });
    expect(messages.length).toBeGreaterThan(1);
    startBot((bot) => bot.command("holders", (ctx) => sendRendered(ctx, messages)));
    fake.pushUpdate(fake.message(dm, alice, "/holders"));

    await fake.waitFor(
      (call) => okCall("sendMessage")(call) && call.params.reply_markup !== undefined,
    );

    const sent = calls("sendMessage");
    expect(sent.every((call) => call.ok)).toBe(true);
    const shown = botMessages(alice.id);
    expect(shown).toHaveLength(messages.length);
    for (const message of shown) expect(message.text?.length).toBeLessThanOrEqual(4096);
    expect(shown.map((m) => m.text).join("\n")).toBe([name, ...rows].join("\n"));
    expect(shown.map((m) => m.reply_markup?.inline_keyboard[0]?.[0]?.text)).toEqual([
      ...Array(messages.length - 1).fill(undefined),
      "Not spam",
    ]);
  });

  it("sets commands at start and answers getChatMember with the configured status", async () => {
    fake.setMemberStatus(group.id, alice.id, "administrator");
    const bot = startBot((b) =>
      b.command("whoami", async (ctx) => {
        const member = await ctx.getChatMember(ctx.from?.id ?? 0);
        await ctx.reply(member.status);
      }),
    );
    await bot.api.setMyCommands([{ command: "whoami", description: "Your role here" }]);
    await expect(
      bot.api.setMyCommands([{ command: "Who-Am-I", description: "x" }]),
    ).rejects.toThrow(/BOT_COMMAND_INVALID/);
    fake.pushUpdate(fake.message(group, alice, "/whoami"));

    const call = await fake.waitFor(okCall("sendMessage"));

    expect(fake.commands()).toEqual([{ command: "whoami", description: "Your role here" }]);
    expect(call.params).toMatchObject({ chat_id: group.id, text: "administrator" });
  });
});

describe("the fake's own Bot API rules", () => {
  let api: Api;
  beforeEach(() => {
    api = new Api(fake.token, { apiRoot: fake.apiRoot });
  });

  it("confirms updates below the offset and honours limit", async () => {
    const first = fake.pushUpdate(fake.message(dm, alice, "one"));
    fake.pushUpdate(fake.message(dm, alice, "two"));
    fake.pushUpdate(fake.message(dm, alice, "three"));

    expect((await api.getUpdates({ offset: 0, limit: 2 })).map((u) => u.message?.text)).toEqual([
      "one",
      "two",
    ]);
    const rest = await api.getUpdates({ offset: first.update_id + 1 });
    expect(rest.map((u) => u.message?.text)).toEqual(["two", "three"]);
    expect(fake.pendingUpdates().map((u) => u.message?.text)).toEqual(["two", "three"]);
    await api.getUpdates({ offset: (rest.at(-1)?.update_id ?? 0) + 1 });
    expect(fake.pendingUpdates()).toEqual([]);
  });

  it("holds a long poll until an update arrives, and times out empty", async () => {
    const poll = api.getUpdates({ timeout: 10 });
    await fake.waitForPoll();
    const started = Date.now();
    fake.pushUpdate(fake.message(dm, alice, "wake"));
    expect((await poll).map((u) => u.message?.text)).toEqual(["wake"]);
    expect(Date.now() - started).toBeLessThan(1000);

    const emptyStarted = Date.now();
    const empty = await api.getUpdates({ offset: (await poll)[0]!.update_id + 1, timeout: 1 });
    expect(empty).toEqual([]);
    expect(Date.now() - emptyStarted).toBeGreaterThanOrEqual(950);
  });

  it("ends an older long poll with 409 when another getUpdates comes", async () => {
    const older = api.getUpdates({ timeout: 10 });
    await fake.waitForPoll();
    const newer = api.getUpdates({ timeout: 10 });
    await expect(older).rejects.toMatchObject({ error_code: 409 });
    await fake.waitForPoll();
    fake.pushUpdate(fake.message(dm, alice, "hi"));
    expect(await newer).toHaveLength(1);
  });

  it("counts the 4096 limit on the visible text, not the HTML source", async () => {
    const fits = "&amp;".repeat(4096);
    await expect(api.sendMessage(alice.id, fits, { parse_mode: "HTML" })).resolves.toMatchObject({
      text: "&".repeat(4096),
    });
    await expect(api.sendMessage(alice.id, "x".repeat(4097))).rejects.toThrow(
      /message is too long/,
    );
    await expect(api.sendMessage(alice.id, "   ")).rejects.toThrow(/message text is empty/);
  });

  it("refuses malformed HTML and over-long callback_data like Telegram", async () => {
    const html = (text: string) => api.sendMessage(alice.id, text, { parse_mode: "HTML" });
    await expect(html("<b>open")).rejects.toThrow(/can't parse entities: Can't find end tag/);
    await expect(html("<b><i>x</b></i>")).rejects.toThrow(
      /can't parse entities: Unmatched end tag/,
    );
    await expect(html("<div>x</div>")).rejects.toThrow(/Unsupported start tag "div"/);
    await expect(html("1 < 2")).rejects.toThrow(/can't parse entities/);
    await expect(
      html('<a href="https://x.test">x</a> <tg-spoiler>s</tg-spoiler> <pre>p</pre>'),
    ).resolves.toBeTruthy();
    await expect(
      api.sendMessage(alice.id, "x", {
        reply_markup: { inline_keyboard: [[{ text: "b", callback_data: "x".repeat(65) }]] },
      }),
    ).rejects.toThrow(/BUTTON_DATA_INVALID/);
  });

  it("fails only the chat named in failNext, once", async () => {
    const other = user(2002);
    fake.failNext("sendMessage", telegramErrors.chatNotFound(), { chatId: other.id });
    await expect(api.sendMessage(alice.id, "a")).resolves.toBeTruthy();
    await expect(api.sendMessage(other.id, "b")).rejects.toThrow("Bad Request: chat not found");
    await expect(api.sendMessage(other.id, "c")).resolves.toBeTruthy();
  });

  it("answers for an upgraded group with its new id, and refuses sends where the bot lost its rights", async () => {
    const old = groupChat(-4001, "Old group");
    fake.addChat(old);
    const service = fake.upgradeToSupergroup(old.id, -1004001);
    expect(service.message).toMatchObject({ chat: { id: old.id }, migrate_to_chat_id: -1004001 });
    const moved = await api.sendMessage(old.id, "x").catch((error: unknown) => error);
    expect(moved).toBeInstanceOf(GrammyError);
    expect(moved).toMatchObject({
      error_code: 400,
      description: "Bad Request: group chat was upgraded to a supergroup chat",
      parameters: { migrate_to_chat_id: -1004001 },
    });
    await expect(api.sendMessage(-1004001, "y")).resolves.toMatchObject({
      chat: { type: "supergroup", title: "Old group" },
    });
    fake.revokeSendRights(-1004001);
    await expect(api.sendMessage(-1004001, "z")).rejects.toThrow(
      "Bad Request: not enough rights to send text messages to the chat",
    );
    await expect(api.sendPhoto(-1004001, new InputFile(PNG_1X1, "chart.png"))).rejects.toThrow(
      "not enough rights to send photos to the chat",
    );
  });

  it("drops the connection on an injected disconnect, which grammY reports as an HttpError", async () => {
    fake.failNext("sendMessage", "disconnect");
    await expect(api.sendMessage(alice.id, "lost")).rejects.toBeInstanceOf(HttpError);
    await expect(api.sendMessage(alice.id, "again")).resolves.toMatchObject({ text: "again" });
    expect(calls("sendMessage").map((call) => call.ok)).toEqual([false, true]);
  });

  it("refuses an edit that changes nothing and one of an unknown message", async () => {
    const sent = await api.sendMessage(alice.id, "<b>same</b>", { parse_mode: "HTML" });
    await expect(
      api.editMessageText(alice.id, sent.message_id, "<b>same</b>", { parse_mode: "HTML" }),
    ).rejects.toThrow(/message is not modified/);
    await expect(api.editMessageText(alice.id, sent.message_id, "new")).resolves.toMatchObject({
      text: "new",
    });
    await expect(api.editMessageText(alice.id, 999, "x")).rejects.toThrow(
      /message to edit not found/,
    );
  });

  it("answers wrong tokens with 401 and unknown methods with 404", async () => {
    const wrong = await fetch(`${fake.apiRoot}/bot1:wrong/getMe`);
    expect(wrong.status).toBe(401);
    const unknown = await fetch(`${fake.apiRoot}/bot${fake.token}/sendTelepathy`, {
      method: "POST",
    });
    expect(unknown.status).toBe(404);
    const me = await fetch(`${fake.apiRoot}/bot${fake.token}/getMe`);
    expect(await me.json()).toMatchObject({
      ok: true,
      result: { username: fake.botInfo.username },
    });
  });
});

describe("the fake's refusals of media", () => {
  it("refuses what a group's permissions forbid, in Telegram's words, and never in private", async () => {
    const api = new Api(fake.token, { apiRoot: fake.apiRoot });
    fake.setChatPermissions(group.id, { can_send_photos: false, can_send_documents: false });
    await expect(api.sendPhoto(group.id, new InputFile(PNG_1X1, "a.png"))).rejects.toMatchObject({
      error_code: 400,
      description: "Bad Request: not enough rights to send photos to the chat",
    });
    await expect(
      api.sendDocument(group.id, new InputFile(Buffer.from("a,b"), "a.csv")),
    ).rejects.toMatchObject({
      description: "Bad Request: not enough rights to send documents to the chat",
    });
    await expect(api.sendMessage(group.id, "text is fine")).resolves.toBeTruthy();
    await expect(api.sendPhoto(alice.id, new InputFile(PNG_1X1, "a.png"))).resolves.toBeTruthy();
  });

  it("answers a method this Bot API lacks with 404, recorded", async () => {
    const old = await startFakeTelegram({ unsupportedMethods: ["sendPhoto"] });
    try {
      const api = new Api(old.token, { apiRoot: old.apiRoot });
      await expect(api.sendPhoto(alice.id, new InputFile(PNG_1X1, "a.png"))).rejects.toMatchObject({
        error_code: 404,
        description: "Not Found: method not found",
      });
      expect(old.sent.map((c) => [c.method, c.error?.error_code])).toEqual([["sendPhoto", 404]]);
    } finally {
      await old.close();
    }
  });
});

describe("the fake's rate limits", () => {
  it("enforces 1/s per chat, 20/min per group and 30/s overall with retry_after", async () => {
    let now = 1_700_000_000_000;
    const limited = await startFakeTelegram({ rateLimits: true, now: () => now });
    try {
      const api = new Api(limited.token, { apiRoot: limited.apiRoot });
      await api.sendMessage(alice.id, "1");
      await expect(api.sendMessage(alice.id, "2")).rejects.toMatchObject({
        error_code: 429,
        parameters: { retry_after: 1 },
      });
      now += 1000;
      await expect(api.sendMessage(alice.id, "2")).resolves.toBeTruthy();

      for (let i = 0; i < 20; i += 1) {
        await api.sendMessage(group.id, `g${i}`);
        now += 1000;
      }
      await expect(api.sendMessage(group.id, "g20")).rejects.toMatchObject({
        error_code: 429,
        parameters: { retry_after: 40 },
      });

      now += 60_000;
      for (let chat = 1; chat <= 30; chat += 1) await api.sendMessage(chat, "burst");
      await expect(api.sendMessage(31, "burst")).rejects.toMatchObject({ error_code: 429 });
    } finally {
      await limited.close();
    }
  });
});
