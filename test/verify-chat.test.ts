/**
 * /verify on every chat platform, through the real adapters (grammY and discord.js against the
 * fakes in test/fakes, the HTTP-interactions adapter on a loopback host, the console on streams):
 * where the link is given (privately), how a Telegram group sends the person to their private
 * chat, and the confirmation each platform gives once the page has proved the wallet.
 */

import { mkdtempSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { PassThrough } from "node:stream";
import { generatePrivateKey, privateKeyToAccount } from "viem/accounts";
import { afterEach, beforeEach, describe, expect, it } from "vitest";
import { ConsoleAdapter } from "../src/adapters/console/index.ts";
import type { TelegramAdapter } from "../src/adapters/telegram/index.ts";
import { silentLogger } from "../src/log.ts";
import { confirmThrough } from "../src/verify/notice.ts";
import { tokenHash } from "../src/verify/service.ts";
import { discordAdapterFor, serveDiscordHttp } from "./discord-helpers.ts";
import { type FakeDiscord, type RecordedRequest, startFakeDiscord } from "./fakes/discord/index.ts";
import {
  type FakeTelegram,
  groupChat,
  privateChat,
  type RecordedCall,
  startFakeTelegram,
  user,
} from "./fakes/telegram/index.ts";
import {
  capturingLogger,
  proveWithLink,
  type RuntimeSetup,
  startRuntime,
  verifyToken,
} from "./helpers.ts";
import { outboundWith } from "./outbound-helpers.ts";
import { telegramAdapterFor } from "./telegram-helpers.ts";

let t: RuntimeSetup;

/** The link a reply gives (Telegram's HTML, Discord's markdown, the console's line). */
function linkIn(text: string): string {
  const url = /http:\/\/127\.0\.0\.1:9\/verify\/[A-Za-z0-9_-]+/.exec(text)?.[0];
  if (!url) throw new Error(`no link in: ${text}`);
  return url;
}

/** The link as stored: who it is for, the chat to tell, and how. */
async function stored(url: string) {
  const row = await t.store.verifyLinks.find(tokenHash(verifyToken(url)));
  if (!row) throw new Error("link not stored");
  return row;
}

/** Every link made so far. */
function linkCount(): number {
  return (t.db.prepare("SELECT count(*) AS n FROM verify_links").get() as { n: number }).n;
}

/** The page's part: the link's challenge signed by a local key, and the proof. */
const account = privateKeyToAccount(generatePrivateKey());
const ADDRESS = account.address;

beforeEach(async () => {
  t = await startRuntime();
});

afterEach(async () => {
  await t.close();
});

describe("/verify on Telegram", () => {
  const alice = user(1001, "Alice", "alice");
  const dm = privateChat(alice);
  const group = groupChat(-4001, "NFT chat");
  let fake: FakeTelegram;
  let adapter: TelegramAdapter;

  beforeEach(async () => {
    fake = await startFakeTelegram();
    adapter = telegramAdapterFor(fake, t.runtime);
    await adapter.start();
  });

  afterEach(async () => {
    await adapter.stop();
    await fake.close();
  });

  async function ask(chat: Parameters<FakeTelegram["message"]>[0], text: string) {
    const before = fake.sent.length;
    fake.pushUpdate(fake.message(chat, alice, text));
    return fake.waitFor(
      (call: RecordedCall) => call.seq > before && call.ok && call.method === "sendMessage",
      10_000,
    );
  }

  it("in a group answers with a button to the private chat, and gives no link there", async () => {
    const answer = await ask(group, "/verify");
    expect(answer.params.chat_id).toBe(group.id);
    const text = String(answer.params.text);
    expect(text).toContain("private chat");
    expect(text).not.toContain("/verify/");
    expect(answer.params.reply_markup).toEqual({
      inline_keyboard: [
        [
          {
            text: "Verify in private chat",
            // The group's id rides along: a proof through it makes a member of this group.
            url: `https://t.me/${fake.botInfo.username}?start=verify_ethereum_-4001`,
          },
        ],
      ],
    });
    // Nothing was made for the group: the link is made in the private chat.
    expect(linkCount()).toBe(0);
  });

  it("/start verify_<chain> in the private chat (the button's) gives the link there", async () => {
    const answer = await ask(dm, "/start verify_ethereum");
    expect(answer.params.chat_id).toBe(alice.id);
    const link = await stored(linkIn(String(answer.params.text)));
    expect(link).toMatchObject({
      platform: "telegram",
      userId: "1001",
      chatId: "1001",
      chain: "ethereum",
      confirm: undefined,
    });
  });

  it("/start verify_<chain>_<group> gives the link, which keeps the group it came from and the name", async () => {
    const answer = await ask(dm, "/start verify_ethereum_-4001");
    expect(answer.params.chat_id).toBe(alice.id);
    const link = await stored(linkIn(String(answer.params.text)));
    expect(link).toMatchObject({ chatId: "1001", chain: "ethereum", place: "-4001" });
    expect(link?.name).toBeTruthy();
  });

  it("a /start payload of no command, or /start in a group, runs no /verify; Start alone is /help", async () => {
    const help = String((await ask(dm, "/start")).params.text);
    expect(help).toContain("/whois");
    expect(help).toContain("/verify");
    const other = await ask(dm, "/start verify_<x>");
    expect(String(other.params.text)).toContain("There is no /start command");
    const inGroup = await ask(group, "/start verify_ethereum");
    expect(String(inGroup.params.text)).toContain("There is no /start command");
    expect(linkCount()).toBe(0);
  });

  it("confirms a proved wallet in the private chat /verify was asked in", async () => {
    t.onVerified = confirmThrough(() => outboundWith(adapter, adapter.platform), 5_000);
    const answer = await ask(dm, "/verify");
    const before = fake.sent.length;
    await proveWithLink(t.verify, linkIn(String(answer.params.text)), account);
    const told = await fake.waitFor(
      (call) => call.seq > before && call.ok && call.method === "sendMessage",
      10_000,
    );
    expect(String(told.params.chat_id)).toBe("1001");
    expect(String(told.params.text)).toContain(ADDRESS);
    expect(String(told.params.text)).toContain("Wallet verified");
  });
});

type Body = {
  flags?: number;
  allowed_mentions?: unknown;
  embeds?: { description?: string; title?: string }[];
};
const dataOf = (request: RecordedRequest): Body => {
  const body = request.body as Body & { data?: Body };
  return body.data ?? body;
};
const textOf = (request: RecordedRequest) =>
  (dataOf(request).embeds ?? [])
    .map((embed) => `${embed.title ?? ""}\n${embed.description ?? ""}`)
    .join("\n");

describe("/verify on Discord", () => {
  let fake: FakeDiscord;

  beforeEach(async () => {
    fake = await startFakeDiscord();
  });

  afterEach(async () => {
    await fake.close();
  });

  it("gateway: answers with the link ephemeral, and confirms ephemeral under that interaction", async () => {
    const adapter = await discordAdapterFor(fake, t.runtime);
    await adapter.start();
    try {
      const interaction = fake.sendInteraction(fake.slashCommand("verify"));
      const answer = await fake.waitForCallback(interaction, 10_000);
      expect(dataOf(answer).flags).toBe(64);
      const url = linkIn(textOf(answer));
      const link = await stored(url);
      expect(link).toMatchObject({ platform: "discord", chatId: fake.channelId });
      // The confirmation rides on this interaction's webhook: its application id and token.
      expect(JSON.parse(link.confirm ?? "{}")).toEqual({
        application: fake.applicationId,
        token: interaction.token,
      });
      t.onVerified = confirmThrough(() => outboundWith(adapter, adapter.platform), 5_000);
      await proveWithLink(t.verify, url, account);
      const told = await fake.waitForFollowUp(interaction, 10_000);
      expect(dataOf(told).flags).toBe(64);
      expect(textOf(told)).toContain(ADDRESS);
      // Plain text where the person asked is theirs alone too, and mentions nobody.
      const before = fake.requestsOf("createFollowUp").length;
      const sent = await outboundWith(adapter, "discord").tell({
        platform: "discord",
        to: {
          userId: "1",
          origin: {
            platform: "discord",
            userId: "1",
            chatId: fake.channelId,
            confirm: link.confirm ?? "",
          },
        },
        message: "@everyone plain words",
        what: "notice",
        timeoutMs: 5_000,
        policy: { maxAttempts: 1, backoff: {} },
      });
      expect(sent).toEqual({ outcome: "sent" });
      const plain = fake.requestsOf("createFollowUp")[before];
      expect(dataOf(plain as RecordedRequest).flags).toBe(64);
      expect(dataOf(plain as RecordedRequest).allowed_mentions).toEqual({ parse: [] });
    } finally {
      await adapter.stop();
    }
  });

  it("HTTP interactions: the same, the confirmation through REST; none once the token is gone, and it is never logged", async () => {
    const { logger, lines } = capturingLogger();
    const { adapter, host, endpoint } = await serveDiscordHttp(fake, t.runtime, t.store.updates, {
      logger,
    });
    try {
      const payload = fake.slashCommand("verify");
      const delivery = await fake.postInteraction(endpoint, payload);
      expect(delivery.status).toBe(200);
      const answer = delivery.callback as RecordedRequest;
      expect(dataOf(answer).flags).toBe(64);
      t.onVerified = confirmThrough(() => outboundWith(adapter, adapter.platform), 5_000);
      await proveWithLink(t.verify, linkIn(textOf(answer)), account);
      const told = await fake.waitForFollowUp(payload, 10_000);
      expect(dataOf(told).flags).toBe(64);
      expect(textOf(told)).toContain(ADDRESS);
      // A token Discord no longer knows (15 minutes on): the confirmation fails, said without the
      // token (a key to post in that channel), in the error and in the log.
      const gone = "aW50ZXJhY3Rpb246MTIzNDU2Nzg5OmdvbmU";
      const before = fake.requests.length;
      const confirm = confirmThrough(() => outboundWith(adapter, adapter.platform), 5_000);
      const failed = await confirm({
        origin: {
          platform: "discord",
          userId: "1",
          chatId: fake.channelId,
          confirm: JSON.stringify({ application: fake.applicationId, token: gone }),
        },
        address: ADDRESS,
        chain: "ethereum",
        kind: "eoa",
      }).catch((error: Error) => error);
      expect(String(failed)).toMatch(/the confirmation was not sent/);
      expect(String(failed)).not.toContain(gone);
      expect(fake.requests.slice(before).map((request) => request.status)).toEqual([404]);
      expect(lines.join("")).toContain("discord private follow-up not sent");
      expect(lines.join("")).not.toContain(gone);
      // No confirm at all (a link asked elsewhere): nothing is tried.
      await confirm({
        origin: { platform: "discord", userId: "1", chatId: fake.channelId },
        address: ADDRESS,
        chain: "ethereum",
        kind: "eoa",
      });
      expect(fake.requests.length).toBe(before + 1);
    } finally {
      await host.close();
      await adapter.stop();
    }
  });
});

describe("/verify on the console", () => {
  it("prints the link, then the confirmation", async () => {
    const exportDir = mkdtempSync(join(tmpdir(), "verify-console-"));
    const output = new PassThrough();
    let printed = "";
    output.on("data", (chunk: Buffer) => {
      printed += chunk.toString();
    });
    const adapter = new ConsoleAdapter({
      runtime: t.runtime,
      logger: silentLogger(),
      input: new PassThrough(),
      output,
      interactive: false,
      exportDir,
    });
    try {
      await adapter.handleLine("/verify");
      const url = linkIn(printed);
      // Printed once, on a line of its own, to be copied into a wallet's browser.
      expect(printed.split("\n")).toContain(url);
      expect(await stored(url)).toMatchObject({
        platform: "console",
        userId: "console-user",
        chatId: "console",
      });
      t.onVerified = confirmThrough(() => outboundWith(adapter, adapter.platform), 5_000);
      await proveWithLink(t.verify, url, account);
      // Told once the registries are read (issue 37): after the page's answer.
      await expect.poll(() => printed).toContain(`Wallet verified`);
      expect(printed).toContain(ADDRESS);
    } finally {
      rmSync(exportDir, { recursive: true, force: true });
    }
  });
});

describe("/verify [chain]", () => {
  it("makes the link for the chain asked, else the chat's; a group's button carries it", async () => {
    const multi = await startRuntime({ CHAINS: "ethereum,base,polygon" });
    try {
      const on = async (line: string, who = {}) => {
        const reply = await multi.say(line, who);
        const url = /http:\/\/127\.0\.0\.1:9\/verify\/[A-Za-z0-9_-]+/.exec(multi.text(reply))?.[0];
        if (!url) return multi.text(reply);
        return (await multi.store.verifyLinks.find(tokenHash(verifyToken(url))))?.chain;
      };
      expect(await on("/verify polygon")).toBe("polygon");
      expect(await on("/verify chain:base")).toBe("base");
      expect(await on("/verify")).toBe("ethereum");
      expect(await on("/verify solana")).toMatch(/solana/);
      // A Telegram group: the button opens the private chat with /start verify_polygon.
      const button = await multi.say("/verify polygon", {
        privateStart: (payload) => `https://t.me/TestBot?start=${payload}`,
      });
      expect(button.openButton?.url).toBe("https://t.me/TestBot?start=verify_polygon");
    } finally {
      await multi.close();
    }
  });
});
