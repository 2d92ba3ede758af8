import { setTimeout as sleep } from "node:timers/promises";
import { HttpError } from "grammy";
import { afterEach, beforeEach, describe, expect, it } from "vitest";
import { z } from "zod";
import type { TelegramAdapter, TelegramAdapterOptions } from "../src/adapters/telegram/index.ts";
import { defineAction } from "../src/core/button-actions.ts";
import { type AnyCommand, defineCommand } from "../src/core/command.ts";
import type { RuntimeOptions } from "../src/core/runtime.ts";
import { HttpHost, type HttpRoute } from "../src/http/host.ts";
import { silentLogger } from "../src/log.ts";
import { visibleLength } from "../src/render/telegram.ts";
import { SourceUpdateDedup } from "../src/store/updates.ts";
import {
  anonymousAdmin,
  channelBot,
  channelChat,
  type FakeTelegram,
  groupChat,
  privateChat,
  type RecordedCall,
  startFakeTelegram,
  type TelegramErrorBody,
  telegramErrors,
  user,
} from "./fakes/telegram/index.ts";
import { capturingLogger, freePort, type RuntimeSetup, startRuntime } from "./helpers.ts";
import { telegramAdapterFor } from "./telegram-helpers.ts";

const alice = user(1001, "Alice", "alice");
const bob = user(1002, "Bob", "bob");
const dm = privateChat(alice);
const group = groupChat(-4001, "NFT chat");

let t: RuntimeSetup;
let fake: FakeTelegram;
let adapter: TelegramAdapter;

/** A reply far over Telegram's 4096 characters, with markup in it, for the limits test. */
const longCommand = defineCommand({
  name: "long",
  description: "A very long reply",
  options: {},
  examples: [],
  run: async () => ({
    title: "Long <b>answer</b>",
    text: Array.from(
      { length: 160 },
      (_, i) => `line ${i}: @everyone <i>not italic</i> & more text here`,
    ).join("\n"),
  }),
});

/** A command that takes a while, as a busy data service makes every command. */
const slowCommand = defineCommand({
  name: "slow",
  description: "A slow answer",
  options: {},
  examples: [],
  run: async () => {
    await sleep(150);
    return { text: "slow answer" };
  },
});

function newAdapter(options: Partial<TelegramAdapterOptions> = {}): TelegramAdapter {
  return telegramAdapterFor(fake, t.runtime, {
    retry: { maxDelaySeconds: 5, maxRetryAttempts: 3 },
    ...options,
  });
}

/** Replaces the runtime and the adapter (the fake stays) for a test about their settings. */
async function restart(
  runtimeOverrides: Partial<RuntimeOptions>,
  options: Partial<TelegramAdapterOptions> = {},
  extraCommands: AnyCommand[] = [],
): Promise<void> {
  await adapter.stop();
  await t.close();
  t = await startRuntime({}, {}, [longCommand, slowCommand, ...extraCommands], runtimeOverrides);
  adapter = newAdapter(options);
  await adapter.start();
}

beforeEach(async () => {
  t = await startRuntime({}, {}, [longCommand, slowCommand]);
  fake = await startFakeTelegram();
  adapter = newAdapter();
  await adapter.start();
});

afterEach(async () => {
  await adapter.stop();
  await fake.close();
  await t.close();
});

const sentOk = (method: string) => (call: RecordedCall) => call.method === method && call.ok;
const textOf = (call: RecordedCall) => String(call.params.text ?? "");

async function ask(
  chat: Parameters<FakeTelegram["message"]>[0],
  from: typeof alice,
  text: string,
): Promise<RecordedCall> {
  const before = fake.sent.length;
  fake.pushUpdate(fake.message(chat, from, text));
  return fake.waitFor(
    (call) => call.seq > before && call.ok && call.method === "sendMessage",
    10_000,
  );
}

describe("Telegram adapter on grammY against a Bot API on loopback", () => {
  it("registers the command list from the registry at start", async () => {
    const call = fake.sent.find(sentOk("setMyCommands"));
    const names = ((call?.params.commands ?? []) as { command: string }[]).map((c) => c.command);
    expect(names).toEqual(t.runtime.commands.map((c) => c.name));
  });

  it("answers /top with its chart as a photo, the HTML caption holding the bold title and the table", async () => {
    const before = fake.sent.length;
    fake.pushUpdate(fake.message(dm, alice, "/top volume 1d 3"));
    const call = await fake.waitFor(
      (c) => c.seq > before && c.ok && c.method === "sendPhoto",
      10_000,
    );
    const caption = String(call.params.caption ?? "");
    expect(call.params.parse_mode).toBe("HTML");
    expect(caption).toMatch(/<b>.*Top collections by sales volume, last 1 day.*<\/b>/);
    expect(caption).toMatch(/<pre>[\s\S]*#[\s\S]*Collection[\s\S]*<\/pre>/);
  });

  it("a Next button under a chart sends the next page as a new photo (photos cannot be edited into text)", async () => {
    const before = fake.sent.length;
    fake.pushUpdate(fake.message(dm, alice, "/top volume 1d 3"));
    const photo = await fake.waitFor(
      (c) => c.seq > before && c.ok && c.method === "sendPhoto",
      10_000,
    );
    const keyboard = photo.params.reply_markup as {
      inline_keyboard: { text: string; callback_data: string }[][];
    };
    const next = keyboard.inline_keyboard.flat().find((b) => b.text.includes("Next"));
    const message = fake
      .messages(dm.id)
      .filter((m) => m.from?.is_bot)
      .at(-1);
    const mark = fake.sent.length;
    fake.pushUpdate(fake.callbackQuery(dm, alice, next?.callback_data ?? "", message));
    const page2 = await fake.waitFor(
      (c) => c.seq > mark && c.ok && c.method === "sendPhoto",
      10_000,
    );
    expect(String(page2.params.caption)).toMatch(/Page 2/);
    expect(fake.sent.filter((c) => c.seq > mark && c.method === "editMessageText")).toHaveLength(0);
  });

  it("a callback button pages the message in place and stops the spinner", async () => {
    const call = await ask(dm, alice, `/common ${t.sim.fixtures.collection}`);
    const keyboard = call.params.reply_markup as {
      inline_keyboard: { text: string; callback_data: string }[][];
    };
    const next = keyboard.inline_keyboard.flat().find((button) => button.text.includes("Next"));
    expect(next?.callback_data).toMatch(/^[A-Za-z0-9_-]{22}$/);
    const message = fake
      .messages(dm.id)
      .filter((m) => m.from?.is_bot)
      .at(-1);
    fake.pushUpdate(fake.callbackQuery(dm, alice, next?.callback_data ?? "", message));
    await fake.waitFor(sentOk("answerCallbackQuery"));
    const edit = await fake.waitFor(sentOk("editMessageText"));
    expect(String(edit.params.text)).toMatch(/Page 2/);
    expect(fake.unansweredCallbackQueries()).toEqual([]);
  });

  it("a forged or foreign button gets an alert and nothing else", async () => {
    fake.pushUpdate(fake.callbackQuery(dm, alice, "not-a-real-id"));
    const answer = await fake.waitFor(sentOk("answerCallbackQuery"));
    expect(answer.params.show_alert).toBe(true);
    expect(String(answer.params.text)).toMatch(/not one of mine/);

    const call = await ask(dm, alice, `/common ${t.sim.fixtures.collection}`);
    const keyboard = call.params.reply_markup as { inline_keyboard: { callback_data: string }[][] };
    const id = keyboard.inline_keyboard.flat()[0]?.callback_data ?? "";
    const before = fake.sent.length;
    fake.pushUpdate(fake.callbackQuery(group, bob, id));
    const foreign = await fake.waitFor((c) => c.seq > before && c.method === "answerCallbackQuery");
    expect(String(foreign.params.text)).toMatch(/another chat/);
    expect(fake.sent.filter((c) => c.seq > before && c.method === "sendMessage")).toHaveLength(0);
  });

  it("takes /cmd@BotName in a group and ignores commands aimed at another bot", async () => {
    fake.pushUpdate(fake.message(group, bob, "/help@some_other_bot"));
    const call = await ask(
      group,
      bob,
      `/whois@${fake.botInfo.username} ${t.sim.fixtures.walletEns}`,
    );
    expect(textOf(call)).toContain(t.sim.fixtures.walletEns);
    expect(fake.sent.filter(sentOk("sendMessage"))).toHaveLength(1);
  });

  it("reads arguments on new lines", async () => {
    const call = await ask(
      dm,
      alice,
      `/behaviors\n${t.sim.fixtures.wallet}\n${t.sim.fixtures.walletEns}`,
    );
    expect(textOf(call)).not.toMatch(/Missing|There is no/);
  });

  it("answers a command without its required arguments with its usage", async () => {
    const call = await ask(dm, alice, "/audience");
    expect(textOf(call)).toMatch(/Usage: \/audience &lt;collection&gt;/);
  });

  it("waits out a 429's retry_after and delivers once", async () => {
    fake.failNext("sendMessage", telegramErrors.tooManyRequests(1));
    const started = Date.now();
    await ask(dm, alice, "/help");
    expect(Date.now() - started).toBeGreaterThanOrEqual(900);
    expect(fake.sent.filter((c) => c.method === "sendMessage")).toHaveLength(2);
    expect(fake.sent.filter(sentOk("sendMessage"))).toHaveLength(1);
  });

  it("records a 403 (blocked) once, without retrying, and keeps polling", async () => {
    await adapter.stop();
    const { logger, lines } = capturingLogger();
    adapter = telegramAdapterFor(fake, t.runtime, { logger });
    await adapter.start();
    const refused = () => lines.filter((line) => line.includes("telegram chat refuses messages"));
    fake.failNext("sendMessage", telegramErrors.blocked());
    fake.pushUpdate(fake.message(dm, alice, "/help"));
    await fake.waitFor((c) => c.method === "sendMessage" && !c.ok);
    await expect.poll(() => refused().length).toBe(1);
    expect(refused()[0]).toMatch(/blocked/);
    const call = await ask(dm, alice, "/help");
    expect(textOf(call)).toContain("/whois");
    expect(fake.sent.filter((c) => c.method === "sendMessage")).toHaveLength(2);
  });

  it("tells alert delivery what a failed send means: moved, may not post, or try again", async () => {
    const classify = async (failure: TelegramErrorBody) => {
      fake.failNext("sendMessage", failure, { chatId: group.id });
      const error = await adapter.sendToChat(String(group.id), { text: "x" }).catch((e) => e);
      return adapter.classifySendError(error);
    };
    expect(
      await classify({
        error_code: 400,
        description: "Bad Request: group chat was upgraded to a supergroup chat",
        parameters: { migrate_to_chat_id: -1004001 },
      }),
    ).toEqual({ kind: "moved", newChatId: "-1004001" });
    for (const description of [
      "Bad Request: not enough rights to send text messages to the chat",
      "Bad Request: have no rights to send a message",
      "Bad Request: need administrator rights in the channel chat",
      "Forbidden: CHAT_WRITE_FORBIDDEN",
    ]) {
      const code = description.startsWith("Forbidden") ? 403 : 400;
      expect(await classify({ error_code: code, description })).toEqual({
        kind: "permanent",
        reason: `Telegram: ${description}`,
      });
    }
    // Media rights alone do not stop text: not a reason to pause alerts.
    expect(
      await classify({
        error_code: 400,
        description: "Bad Request: not enough rights to send photos to the chat",
      }),
    ).toMatchObject({ kind: "transient" });
  });

  it("a Telegram that cannot be reached fails the send after a few tries instead of retrying for ever", async () => {
    // A port that was just free: nothing listens there.
    const closed = await startFakeTelegram();
    const apiRoot = closed.apiRoot;
    await closed.close();
    const offline = newAdapter({ apiRoot });
    const error = await offline.sendToChat(String(group.id), { text: "x" }).catch((e) => e);
    expect(error).toBeInstanceOf(HttpError);
    expect(offline.classifySendError(error)).toMatchObject({ kind: "transient" });
  });

  it("escapes a collection named with markup", async () => {
    const before = fake.sent.length;
    fake.pushUpdate(fake.message(dm, alice, `/nft ${t.sim.fixtures.markupCollection} 1`));
    const call = await fake.waitFor(
      (c) => c.seq > before && c.ok && (c.method === "sendMessage" || c.method === "sendPhoto"),
    );
    const html = String(call.params.text ?? call.params.caption ?? "");
    expect(html).toContain("@everyone &lt;b&gt;x&lt;/b&gt;");
    expect(html).not.toContain("<b>x</b>");
  });

  it("splits a reply over 4096 characters at lines, each part within the limit and escaped", async () => {
    const before = fake.sent.length;
    fake.pushUpdate(fake.message(dm, alice, "/long"));
    await fake.waitFor(
      (c) => c.seq > before && c.ok && c.method === "sendMessage" && textOf(c).includes("line 159"),
    );
    const parts = fake.sent.filter((c) => c.seq > before && c.ok && c.method === "sendMessage");
    expect(parts.length).toBeGreaterThan(1);
    for (const part of parts) {
      expect(visibleLength(textOf(part))).toBeLessThanOrEqual(4096);
      expect(textOf(part)).not.toContain("<i>");
    }
    expect(parts.map(textOf).join("\n")).toContain(
      "line 0: @everyone &lt;i&gt;not italic&lt;/i&gt; &amp; more",
    );
  });

  it("restarts polling after a 409 Conflict (another process polled the same token)", async () => {
    await adapter.stop();
    const { logger, lines } = capturingLogger();
    adapter = telegramAdapterFor(fake, t.runtime, { logger });
    await adapter.start();
    await fake.waitForPoll();
    // A second poller on the token: Telegram ends the first long poll with 409.
    await fetch(`${fake.apiRoot}/bot${fake.token}/getUpdates?timeout=0`);
    await expect
      .poll(() => lines.some((line) => line.includes("telegram polling stopped; restarting")), {
        timeout: 5000,
      })
      .toBe(true);
    const call = await ask(dm, alice, "/help top");
    expect(textOf(call)).toContain("/top");
  });

  it("reports spam from a /wallet button: confirm, then the prompt reads 'Reported by'", async () => {
    // Alice's own wallet, proved: reports are made for no other.
    const { address } = await t.prove({
      user: { id: String(alice.id), name: "alice" },
      chat: { id: String(alice.id), kind: "private" },
    });
    t.sim.giveNft(address);
    const list = await ask(dm, alice, `/wallet ${address} exclude`);
    const keyboard = list.params.reply_markup as {
      inline_keyboard: { text: string; callback_data: string }[][];
    };
    const spam = keyboard.inline_keyboard.flat().find((b) => b.text === "Spam #1");
    const before = fake.sent.length;
    fake.pushUpdate(fake.callbackQuery(dm, alice, spam?.callback_data ?? ""));
    const prompt = await fake.waitFor((c) => c.seq > before && c.ok && c.method === "sendMessage");
    expect(textOf(prompt)).toMatch(/Report as spam\?/);
    const confirm = (
      prompt.params.reply_markup as { inline_keyboard: { text: string; callback_data: string }[][] }
    ).inline_keyboard
      .flat()
      .find((b) => b.text === "Confirm report");
    const message = fake
      .messages(dm.id)
      .filter((m) => m.from?.is_bot)
      .at(-1);
    fake.pushUpdate(fake.callbackQuery(dm, alice, confirm?.callback_data ?? "", message));
    const edit = await fake.waitFor(sentOk("editMessageText"));
    expect(String(edit.params.text)).toMatch(/Reported as spam by alice/);
    expect(t.sim.reports).toHaveLength(1);
    expect(fake.unansweredCallbackQueries()).toEqual([]);
  });

  it("sends the owner-count chart as a photo with its PNG bytes", async () => {
    const before = fake.sent.length;
    fake.pushUpdate(fake.message(dm, alice, `/owners ${t.sim.fixtures.collection}`));
    const photo = await fake.waitFor(
      (c) => c.seq > before && c.ok && c.method === "sendPhoto",
      10_000,
    );
    const file = Object.values(photo.files)[0];
    expect([...Buffer.from(file?.data ?? []).subarray(0, 4)]).toEqual([0x89, 0x50, 0x4e, 0x47]);
    expect(visibleLength(String(photo.params.caption ?? ""))).toBeLessThanOrEqual(1024);
  });

  it("sends a CSV export as a document", async () => {
    const call = await ask(dm, alice, `/segment ${t.sim.fixtures.collection}`);
    const keyboard = call.params.reply_markup as {
      inline_keyboard: { text: string; callback_data: string }[][];
    };
    const exportButton = keyboard.inline_keyboard
      .flat()
      .find((button) => button.text === "Export CSV");
    fake.pushUpdate(fake.callbackQuery(dm, alice, exportButton?.callback_data ?? ""));
    const document = await fake.waitFor(sentOk("sendDocument"), 10_000);
    const file = Object.values(document.files)[0];
    const csv = Buffer.from(file?.data ?? []).toString("utf8");
    expect(csv.split(/\r?\n/)[0]).toBe("walletAddress,totalSpend");
    expect(csv.split(/\r?\n/).length).toBeGreaterThan(2);
  });

  it("falls back to text with the link when Telegram cannot fetch an image URL", async () => {
    fake.failNext("sendPhoto", {
      error_code: 400,
      description: "Bad Request: wrong file identifier/HTTP URL specified",
    });
    const before = fake.sent.length;
    fake.pushUpdate(
      fake.message(
        dm,
        alice,
        `/nft ${t.sim.fixtures.token.contract} ${t.sim.fixtures.token.tokenId}`,
      ),
    );
    const text = await fake.waitFor((c) => c.seq > before && c.ok && c.method === "sendMessage");
    expect(textOf(text)).toMatch(/<a href="https?:\/\/[^"]+">image<\/a>/);
    expect(
      fake.sent.filter((c) => c.seq > before && c.method === "sendPhoto" && !c.ok),
    ).toHaveLength(1);
  });
});

describe("a chat that refuses pictures or files", () => {
  it("/top in a group that may not receive photos answers in text, saying the chart could not be attached", async () => {
    fake.setChatPermissions(group.id, { can_send_photos: false });
    const before = fake.sent.length;
    fake.pushUpdate(fake.message(group, alice, "/top volume 1d 3"));
    const text = await fake.waitFor(
      (c) => c.seq > before && c.ok && c.method === "sendMessage",
      10_000,
    );
    expect(textOf(text)).toMatch(/Top collections by sales volume/);
    expect(textOf(text)).toMatch(/The chart could not be attached in this chat/);
    // The buttons moved with the answer.
    expect(JSON.stringify(text.params.reply_markup)).toMatch(/Next/);
    expect(
      fake.sent.filter((c) => c.seq > before && c.method === "sendPhoto" && !c.ok),
    ).toHaveLength(1);
  });

  it("on a Bot API without sendPhoto, /owners answers in text with the note", async () => {
    await adapter.stop();
    await fake.close();
    fake = await startFakeTelegram({ unsupportedMethods: ["sendPhoto"] });
    adapter = newAdapter();
    await adapter.start();
    const before = fake.sent.length;
    fake.pushUpdate(fake.message(dm, alice, `/owners ${t.sim.fixtures.collection}`));
    const text = await fake.waitFor(
      (c) => c.seq > before && c.ok && c.method === "sendMessage",
      10_000,
    );
    expect(textOf(text)).toMatch(/The chart could not be attached in this chat/);
    expect(fake.sent.find((c) => c.method === "sendPhoto")?.error?.error_code).toBe(404);
  });

  it("a CSV export the group may not receive arrives as text saying the file could not be attached", async () => {
    fake.setChatPermissions(group.id, { can_send_documents: false });
    const call = await ask(group, alice, `/segment ${t.sim.fixtures.collection}`);
    const keyboard = call.params.reply_markup as {
      inline_keyboard: { text: string; callback_data: string }[][];
    };
    const exportButton = keyboard.inline_keyboard.flat().find((b) => b.text === "Export CSV");
    const before = fake.sent.length;
    fake.pushUpdate(fake.callbackQuery(group, alice, exportButton?.callback_data ?? ""));
    const text = await fake.waitFor(
      (c) =>
        c.seq > before &&
        c.ok &&
        c.method === "sendMessage" &&
        /could not be attached/.test(textOf(c)),
      10_000,
    );
    expect(textOf(text)).toMatch(/The file segment-.*\.csv could not be attached in this chat/);
    expect(fake.sent.filter((c) => c.seq > before && c.method === "sendDocument")).toHaveLength(1);
  });
});

describe("button presses Telegram has stopped waiting for", () => {
  it("a press whose answerCallbackQuery is too old still gets its page", async () => {
    const call = await ask(dm, alice, `/common ${t.sim.fixtures.collection}`);
    const keyboard = call.params.reply_markup as {
      inline_keyboard: { text: string; callback_data: string }[][];
    };
    const next = keyboard.inline_keyboard.flat().find((button) => button.text.includes("Next"));
    const message = fake
      .messages(dm.id)
      .filter((m) => m.from?.is_bot)
      .at(-1);
    fake.failNext("answerCallbackQuery", telegramErrors.queryTooOld());
    fake.pushUpdate(fake.callbackQuery(dm, alice, next?.callback_data ?? "", message));
    const edit = await fake.waitFor(sentOk("editMessageText"), 10_000);
    expect(String(edit.params.text)).toMatch(/Page 2/);
  });

  it("a refusal that can no longer be shown on the button is said in the chat", async () => {
    fake.failNext("answerCallbackQuery", telegramErrors.queryTooOld());
    const before = fake.sent.length;
    fake.pushUpdate(fake.callbackQuery(group, alice, "not-a-real-id"));
    const said = await fake.waitFor((c) => c.seq > before && c.ok && c.method === "sendMessage");
    expect(textOf(said)).toMatch(/not one of mine/);
  });

  it("a slow action's press is answered before the action finishes, and its reply still comes", async () => {
    let answeredFirst: boolean | undefined;
    const goAction = defineAction({ command: "waiter", name: "go", schema: z.object({}) });
    const waitsForAnswer = defineCommand({
      name: "waiter",
      description: "A button whose action is slow",
      options: {},
      examples: [],
      run: async () => ({
        text: "press it",
        buttons: [goAction.button({}, "Go")],
      }),
      actions: {
        go: goAction.handle({
          run: async () => {
            // Finishes only once the spinner was stopped, or after a second at most.
            answeredFirst = await fake
              .waitFor(sentOk("answerCallbackQuery"), 1_000)
              .then(() => true)
              .catch(() => false);
            return { text: "done at last" };
          },
        }),
      },
    });
    await restart({}, { answerCallbackAfterMs: 50 }, [waitsForAnswer]);
    const prompt = await ask(dm, alice, "/waiter");
    const go = (
      prompt.params.reply_markup as { inline_keyboard: { callback_data: string }[][] }
    ).inline_keyboard.flat()[0];
    const before = fake.sent.length;
    fake.pushUpdate(fake.callbackQuery(dm, alice, go?.callback_data ?? ""));
    const done = await fake.waitFor(
      (c) => c.seq > before && c.ok && c.method === "sendMessage",
      10_000,
    );
    expect(textOf(done)).toBe("done at last");
    expect(answeredFirst).toBe(true);
    expect(fake.unansweredCallbackQueries()).toEqual([]);
  });
});

describe("/reports is for the admin's eyes only", () => {
  const wallet = "0x1111111111111111111111111111111111111111";
  async function seedReport(): Promise<void> {
    await t.store.reports.create(
      {
        platform: "telegram",
        chatId: String(group.id),
        userId: String(bob.id),
        userName: "bob_the_reporter",
        wallet,
        contract: "0x2222222222222222222222222222222222222222",
        tokenId: "7",
        kind: "spam",
        feedback: "a private note",
      },
      Date.now(),
    );
  }
  const inGroup = (c: RecordedCall) => c.params.chat_id === group.id && c.method.startsWith("send");
  const leaks = (c: RecordedCall) =>
    /bob_the_reporter|0x1111|a private note|Spam reports in/i.test(
      `${textOf(c)}${String(c.params.caption ?? "")}`,
    ) || c.method === "sendDocument";

  it("sends the reports and the CSV to the admin privately; the group gets only a note", async () => {
    await seedReport();
    fake.setMemberStatus(group.id, alice.id, "administrator");
    const before = fake.sent.length;
    fake.pushUpdate(fake.message(group, alice, "/reports"));
    const list = await fake.waitFor(
      (c) => c.seq > before && c.ok && c.method === "sendMessage" && c.params.chat_id === alice.id,
      10_000,
    );
    expect(textOf(list)).toContain("bob_the_reporter");
    const note = await fake.waitFor((c) => c.seq > before && c.ok && inGroup(c));
    expect(textOf(note)).toMatch(/I sent the spam reports to you privately/);

    // The export button under the private list belongs to the private chat.
    const exportButton = (
      list.params.reply_markup as { inline_keyboard: { text: string; callback_data: string }[][] }
    ).inline_keyboard
      .flat()
      .find((b) => b.text === "Export CSV");
    const message = fake
      .messages(dm.id)
      .filter((m) => m.from?.is_bot)
      .at(-1);
    fake.pushUpdate(fake.callbackQuery(dm, alice, exportButton?.callback_data ?? "", message));
    const csv = await fake.waitFor(sentOk("sendDocument"), 10_000);
    expect(csv.params.chat_id).toBe(alice.id);
    expect(Buffer.from(Object.values(csv.files)[0]?.data ?? []).toString("utf8")).toContain(
      "a private note",
    );
    expect(fake.sent.filter((c) => c.seq > before && inGroup(c) && leaks(c))).toEqual([]);
  });

  it("the export button in a private chat checks again that the person still manages the group", async () => {
    await seedReport();
    fake.setMemberStatus(group.id, alice.id, "administrator");
    fake.pushUpdate(fake.message(group, alice, "/reports"));
    const list = await fake.waitFor(
      (c) => c.ok && c.method === "sendMessage" && c.params.chat_id === alice.id,
      10_000,
    );
    const exportButton = (
      list.params.reply_markup as { inline_keyboard: { text: string; callback_data: string }[][] }
    ).inline_keyboard
      .flat()
      .find((b) => b.text === "Export CSV");
    fake.setMemberStatus(group.id, alice.id, "member");
    const before = fake.sent.length;
    fake.pushUpdate(fake.callbackQuery(dm, alice, exportButton?.callback_data ?? ""));
    const answer = await fake.waitFor((c) => c.seq > before && c.method === "answerCallbackQuery");
    expect(String(answer.params.text)).toMatch(/Only people who can manage/);
    expect(fake.sent.filter((c) => c.method === "sendDocument")).toHaveLength(0);
  });

  it("with a person who never started the bot, the group learns how to start a private chat and sees no report", async () => {
    await seedReport();
    fake.setMemberStatus(group.id, alice.id, "administrator");
    fake.refusePrivateChat(alice.id, telegramErrors.cantInitiate());
    const before = fake.sent.length;
    fake.pushUpdate(fake.message(group, alice, "/reports"));
    const howTo = await fake.waitFor((c) => c.seq > before && c.ok && inGroup(c), 10_000);
    expect(textOf(howTo)).toContain(`https://t.me/${fake.botInfo.username}`);
    expect(textOf(howTo)).toMatch(/press Start, then run \/reports again/);
    expect(
      fake.sent.filter((c) => c.seq > before && c.ok && c.params.chat_id === alice.id),
    ).toEqual([]);
    expect(fake.sent.filter((c) => c.seq > before && inGroup(c) && leaks(c))).toEqual([]);
  });
});

describe("a busy group", () => {
  it("one member's 60 commands get their burst and one refusal, then silence; another member is answered meanwhile", async () => {
    await restart({
      rateLimit: { burst: 3, perMinute: 1 },
      chatRateLimit: { telegram: { burst: 20, perMinute: 20 } },
    });
    let outcomes = 0;
    t.runtime.onOutcome = () => outcomes++;
    const mark = fake.sent.length;
    for (let i = 0; i < 60; i++) fake.pushUpdate(fake.message(group, bob, "/slow"));
    fake.pushUpdate(fake.message(group, alice, "/help"));
    await expect.poll(() => outcomes, { timeout: 10_000 }).toBe(61);
    // Stopping lets every reply in flight go out first.
    await adapter.stop();
    const replies = fake.sent.filter(
      (c) => c.seq > mark && c.ok && c.method === "sendMessage" && c.params.chat_id === group.id,
    );
    // (/help lists the commands as served, /slow among them: "A slow answer".)
    const answers = replies.filter(
      (c) => textOf(c).includes("slow answer") && !textOf(c).includes("/whois"),
    );
    const refusals = replies.filter((c) => /sending commands quickly/.test(textOf(c)));
    const help = replies.filter((c) => textOf(c).includes("/whois"));
    expect(answers).toHaveLength(3);
    expect(refusals).toHaveLength(1);
    expect(help).toHaveLength(1);
    expect(replies).toHaveLength(5);
    // Alice did not wait behind Bob's queue: her answer came before his last one.
    expect(help[0]!.seq).toBeLessThan(answers[2]!.seq);
  });
});

describe("anonymous admins and channel posters", () => {
  const otherGroup = groupChat(-4002, "Other NFT chat");
  const channel = channelChat(-1001234567890, "Announcements");
  const asAnonymous = (chat: typeof group, text: string) =>
    fake.message(chat, anonymousAdmin, text, { senderChat: chat });

  async function answerTo(update: ReturnType<FakeTelegram["message"]>): Promise<string> {
    const before = fake.sent.length;
    fake.pushUpdate(update);
    const call = await fake.waitFor(
      (c) => c.seq > before && c.ok && c.method === "sendMessage",
      10_000,
    );
    return textOf(call);
  }

  it("anonymous admins of two groups do not share a rate-limit bucket", async () => {
    await restart({ rateLimit: { burst: 2, perMinute: 1 } });
    expect(await answerTo(asAnonymous(group, "/help"))).toContain("/whois");
    expect(await answerTo(asAnonymous(group, "/help"))).toContain("/whois");
    expect(await answerTo(asAnonymous(group, "/help"))).toMatch(/sending commands quickly/);
    expect(await answerTo(asAnonymous(otherGroup, "/help"))).toContain("/whois");
  });

  it("refuses /verify, /wallets, /unlink and /report from an anonymous admin or a channel, storing nothing", async () => {
    const refusal = /Anonymous admins and channels cannot .*send it from your own account/;
    expect(await answerTo(asAnonymous(group, "/verify"))).toMatch(refusal);
    expect(await answerTo(asAnonymous(group, "/wallets"))).toMatch(refusal);
    expect(await answerTo(asAnonymous(group, "/unlink all"))).toMatch(refusal);
    expect(
      await answerTo(fake.message(group, channelBot, "/verify", { senderChat: channel })),
    ).toMatch(refusal);
    expect(
      await answerTo(asAnonymous(otherGroup, `/report spam ${t.sim.fixtures.collection}`)),
    ).toMatch(refusal);
    const { wallets } = t.store;
    for (const id of [String(anonymousAdmin.id), "chat:-4001", String(channelBot.id)])
      expect(await wallets.list("telegram", id)).toEqual([]);
    expect(t.db.prepare("SELECT count(*) AS n FROM verify_links").get()).toEqual({ n: 0 });
    expect(t.sim.reports).toHaveLength(0);
  });

  it("lets an anonymous admin of the group /subscribe, and refuses a post sent as a channel", async () => {
    expect(await answerTo(asAnonymous(group, "/subscribe"))).toMatch(/Subscribed/);
    expect(await t.subscriptions.find("telegram", String(group.id))).toBeDefined();
    const fromChannel = fake.message(otherGroup, channelBot, "/subscribe", { senderChat: channel });
    expect(await answerTo(fromChannel)).toMatch(/Only people who can manage this channel/);
    expect(await t.subscriptions.find("telegram", String(otherGroup.id))).toBeUndefined();
    // Placeholder users are not members of anything: asking Telegram about them is pointless.
    expect(
      fake.sent.filter(
        (c) =>
          c.method === "getChatMember" &&
          [anonymousAdmin.id, channelBot.id].includes(Number(c.params.user_id)),
      ),
    ).toHaveLength(0);
  });
});

/** The bot's HTTP host on loopback, serving the adapter's routes (its webhook). */
async function hostFor(served: { routes: readonly HttpRoute[] }, port: number): Promise<HttpHost> {
  const host = new HttpHost(silentLogger());
  for (const route of served.routes) host.mount(route);
  await host.listen(port, "127.0.0.1");
  return host;
}

let cleanupHost: (() => Promise<void>) | undefined;
afterEach(async () => {
  await cleanupHost?.();
  cleanupHost = undefined;
});

describe("webhook mode", () => {
  it("checks the secret token on every request", async () => {
    await adapter.stop();
    const port = await freePort();
    const hooked = telegramAdapterFor(fake, t.runtime, {
      webhook: { url: "https://bot.example.com/hook", secret: "s3cr3t-token", path: "/" },
    });
    const host = await hostFor(hooked, port);
    await hooked.start();
    try {
      expect(fake.sent.find(sentOk("setWebhook"))?.params.secret_token).toBe("s3cr3t-token");
      const update = {
        update_id: 77,
        message: {
          message_id: 1,
          date: 0,
          chat: dm,
          from: alice,
          text: "/help",
          entities: [{ type: "bot_command", offset: 0, length: 5 }],
        },
      };
      const post = (secret?: string) =>
        fetch(`http://127.0.0.1:${port}/`, {
          method: "POST",
          headers: {
            "content-type": "application/json",
            ...(secret ? { "x-telegram-bot-api-secret-token": secret } : {}),
          },
          body: JSON.stringify(update),
        });
      expect((await post()).status).toBe(401);
      expect((await post("wrong")).status).toBe(401);
      expect(fake.sent.filter((c) => c.method === "sendMessage")).toHaveLength(0);
      expect((await post("s3cr3t-token")).status).toBe(200);
      const reply = await fake.waitFor(sentOk("sendMessage"));
      expect(textOf(reply)).toContain("/whois");
    } finally {
      await hooked.stop();
      await host.close();
    }
  });
});

describe("updates Telegram delivers twice", () => {
  /** A command that finishes when the test lets it (or after 2 s at most). */
  function gatedCommand(): { command: AnyCommand; open: () => void } {
    let open: () => void = () => {};
    const gate = new Promise<void>((resolve) => {
      open = resolve;
    });
    const command = defineCommand({
      name: "gated",
      description: "Answers when let through",
      options: {},
      examples: [],
      run: async () => {
        await Promise.race([gate, sleep(2_000)]);
        return { text: "gated answer" };
      },
    });
    return { command, open: () => open() };
  }

  it("webhook: acknowledges an update before handling it, and answers a re-delivery once", async () => {
    const { command, open } = gatedCommand();
    const port = await freePort();
    await restart({}, {}, [command]);
    await adapter.stop();
    adapter = newAdapter({
      webhook: { url: "https://bot.example.com/hook", secret: "s3cr3t", path: "/" },
      updates: new SourceUpdateDedup(t.store.updates, { source: "telegram:test" }),
    });
    const host = await hostFor(adapter, port);
    cleanupHost = () => host.close();
    await adapter.start();
    const update = {
      update_id: 501,
      message: {
        message_id: 1,
        date: 0,
        chat: dm,
        from: alice,
        text: "/gated",
        entities: [{ type: "bot_command", offset: 0, length: 6 }],
      },
    };
    const post = () =>
      fetch(`http://127.0.0.1:${port}/`, {
        method: "POST",
        headers: {
          "content-type": "application/json",
          "x-telegram-bot-api-secret-token": "s3cr3t",
        },
        body: JSON.stringify(update),
      });
    const first = await post();
    expect(first.status).toBe(200);
    // Answered while the command is still running: Telegram has no reason to send it again.
    expect(fake.sent.filter((c) => c.method === "sendMessage")).toHaveLength(0);
    // It does anyway (a timeout on its side): the second delivery is taken and dropped.
    expect((await post()).status).toBe(200);
    open();
    await fake.waitFor(sentOk("sendMessage"));
    await adapter.stop();
    expect(fake.sent.filter((c) => c.method === "sendMessage").map(textOf)).toEqual([
      "gated answer",
    ]);
  });

  it("a store that hangs (a frozen database) delays an update by at most a second: it is answered", async () => {
    await adapter.stop();
    adapter = newAdapter({ updates: { firstSeen: () => new Promise<boolean>(() => {}) } });
    await adapter.start();
    fake.pushUpdate(fake.message(dm, alice, "/help"));
    await fake.waitFor(sentOk("sendMessage"), 4_000);
    await adapter.stop();
  });

  it("polling: an update delivered again after a restart is answered once", async () => {
    const updates = new SourceUpdateDedup(t.store.updates, { source: "telegram:test" });
    await adapter.stop();
    adapter = newAdapter({ updates });
    await adapter.start();
    const update = fake.pushUpdate(fake.message(dm, alice, "/help"));
    await fake.waitFor(sentOk("sendMessage"));
    await adapter.stop();
    // The offset past it never reached Telegram before the restart.
    fake.redeliver(update);
    adapter = newAdapter({ updates });
    await adapter.start();
    await expect.poll(() => fake.pendingUpdates().length, { timeout: 5_000 }).toBe(0);
    await adapter.stop();
    expect(fake.sent.filter((c) => c.method === "sendMessage")).toHaveLength(1);
  });
});

describe("several chains", () => {
  async function onChains(): Promise<void> {
    await adapter.stop();
    await t.close();
    t = await startRuntime({ CHAINS: "ethereum,base,polygon" });
    adapter = newAdapter();
    await adapter.start();
  }

  async function say(text: string): Promise<string> {
    const before = fake.sent.length;
    fake.pushUpdate(fake.message(group, alice, text));
    const call = await fake.waitFor(
      (c) => c.seq > before && c.ok && (c.method === "sendMessage" || c.method === "sendPhoto"),
      10_000,
    );
    // A chart's reply is a photo with its text as the caption.
    return String(call.params.text ?? call.params.caption ?? "");
  }

  it("/help shows the chain option, its choices and an example; a leading chain word picks the chain", async () => {
    await onChains();
    const index = await say("/help");
    expect(index).toContain("/top [chain] [volume|sales|max_price]");
    expect(index).toMatch(/Chains: ethereum, base, polygon .*\/top volume 1d chain:base/);
    // The choices once: the option's description names them.
    expect(await say("/help top")).toMatch(
      /chain \(optional\)<\/b>: Which chain \(ethereum, base or polygon; default: this chat's\)\n/,
    );
    const before = t.sim.requests.length;
    expect(await say("/top polygon volume 1d 3")).toMatch(/POL[\s\S]*Polygon/);
    expect(new Set(t.sim.requests.slice(before).map((request) => request.chain))).toEqual(
      new Set(["polygon"]),
    );
    expect(await say("/top volume 1d chain:solana")).toContain(
      "There is no chain &quot;solana&quot; here: this bot serves ethereum, base or polygon.",
    );
  });
});
