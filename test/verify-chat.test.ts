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
import { afterEach, beforeEach, describe, expect, it } from "vitest";
import { ConsoleAdapter } from "../src/adapters/console/index.ts";
import { DiscordAdapter } from "../src/adapters/discord/index.ts";
import {
  DiscordHttpAdapter,
  INTERACTION_REPLAY_WINDOW_MS,
  INTERACTIONS_PATH,
} from "../src/adapters/discord-http/index.ts";
import type { TelegramAdapter } from "../src/adapters/telegram/index.ts";
import type { ChatAdapter } from "../src/adapters/types.ts";
import { HttpHost } from "../src/http/host.ts";
import { silentLogger } from "../src/log.ts";
import { SourceUpdateDedup } from "../src/store/updates.ts";
import { adaptersNotifier } from "../src/verify/notice.ts";
import type { VerifyOrigin, VerifyService } from "../src/verify/types.ts";
import { type FakeDiscord, type RecordedRequest, startFakeDiscord } from "./fakes/discord/index.ts";
import {
  type FakeTelegram,
  groupChat,
  privateChat,
  type RecordedCall,
  startFakeTelegram,
  user,
} from "./fakes/telegram/index.ts";
import { freePort, type RuntimeSetup, startRuntime } from "./helpers.ts";
import { telegramAdapterFor } from "./telegram-helpers.ts";

const ADDRESS = "0x70997970C51812dc3A010C7d01b50e0d17dc79C8";

/** A stand-in of the service: it records the links asked for and proves whatever it is told. */
function recordingService(): VerifyService & {
  origins: { origin: VerifyOrigin; chain: string }[];
} {
  const origins: { origin: VerifyOrigin; chain: string }[] = [];
  return {
    origins,
    async createLink(origin, chain) {
      origins.push({ origin, chain });
      return {
        ok: true,
        link: {
          url: `http://127.0.0.1:9/verify/token${origins.length}`,
          expiresAt: Date.now() + 600_000,
          chain,
        },
      };
    },
    open: async () => ({ ok: false, refusal: { code: "unknown_link", message: "unknown" } }),
    challenge: async () => ({ ok: false, refusal: { code: "unknown_link", message: "unknown" } }),
    prove: async () => ({ ok: false, refusal: { code: "unknown_link", message: "unknown" } }),
  };
}

let t: RuntimeSetup;
let service: ReturnType<typeof recordingService>;

/** A proof for the person's latest link: the service tells the chat through the adapters. */
async function prove(adapters: ChatAdapter[]): Promise<void> {
  const last = service.origins.at(-1);
  if (!last) throw new Error("no link was made");
  await adaptersNotifier(
    adapters,
    silentLogger(),
  )({
    origin: last.origin,
    address: ADDRESS,
    chain: last.chain,
    kind: "eoa",
  });
}

beforeEach(async () => {
  service = recordingService();
  t = await startRuntime({}, {}, [], { verify: service });
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
            url: `https://t.me/${fake.botInfo.username}?start=verify_ethereum`,
          },
        ],
      ],
    });
    // Nothing was made for the group: the link is made in the private chat.
    expect(service.origins).toEqual([]);
  });

  it("/start verify_<chain> in the private chat (the button's) gives the link there", async () => {
    const answer = await ask(dm, "/start verify_ethereum");
    expect(answer.params.chat_id).toBe(alice.id);
    expect(String(answer.params.text)).toContain("http://127.0.0.1:9/verify/token1");
    expect(service.origins).toEqual([
      {
        origin: { platform: "telegram", userId: "1001", chatId: "1001" },
        chain: "ethereum",
      },
    ]);
  });

  it("a /start payload of no command, or /start in a group, runs no /verify", async () => {
    const other = await ask(dm, "/start verify_<x>");
    expect(String(other.params.text)).toContain("There is no /start command");
    const inGroup = await ask(group, "/start verify_ethereum");
    expect(String(inGroup.params.text)).toContain("There is no /start command");
    expect(service.origins).toEqual([]);
  });

  it("confirms a proved wallet in the private chat /verify was asked in", async () => {
    await ask(dm, "/verify");
    const before = fake.sent.length;
    await prove([adapter]);
    const told = await fake.waitFor(
      (call) => call.seq > before && call.ok && call.method === "sendMessage",
      10_000,
    );
    expect(String(told.params.chat_id)).toBe("1001");
    expect(String(told.params.text)).toContain(ADDRESS);
    expect(String(told.params.text)).toContain("Wallet verified");
  });
});

type Body = { flags?: number; embeds?: { description?: string; title?: string }[] };
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
    const adapter = new DiscordAdapter({
      token: fake.token,
      runtime: t.runtime,
      logger: silentLogger(),
      apiUrl: fake.apiBase,
      guildId: fake.guildId,
      registerOnStart: true,
    });
    await adapter.start();
    try {
      const interaction = fake.sendInteraction(fake.slashCommand("verify"));
      const answer = await fake.waitForCallback(interaction, 10_000);
      expect(dataOf(answer).flags).toBe(64);
      expect(textOf(answer)).toContain("http://127.0.0.1:9/verify/token1");
      const origin = service.origins[0]?.origin;
      expect(origin).toMatchObject({ platform: "discord", chatId: fake.channelId });
      // The confirmation rides on this interaction's webhook: its application id and token.
      expect(JSON.parse(origin?.confirm ?? "{}")).toEqual({
        application: fake.applicationId,
        token: interaction.token,
      });
      await prove([adapter]);
      const told = await fake.waitForFollowUp(interaction, 10_000);
      expect(dataOf(told).flags).toBe(64);
      expect(textOf(told)).toContain(ADDRESS);
    } finally {
      await adapter.stop();
    }
  });

  it("HTTP interactions: the same, the confirmation through REST", async () => {
    const adapter = new DiscordHttpAdapter({
      token: fake.token,
      publicKey: fake.publicKey,
      runtime: t.runtime,
      logger: silentLogger(),
      apiUrl: fake.apiBase,
      guildId: fake.guildId,
      registerOnStart: true,
      interactions: new SourceUpdateDedup(t.store.updates, {
        source: "discord",
        windowMs: INTERACTION_REPLAY_WINDOW_MS,
      }),
    });
    await adapter.start();
    const host = new HttpHost(silentLogger());
    for (const route of adapter.routes) host.mount(route);
    const port = await freePort();
    await host.listen(port, "127.0.0.1");
    try {
      const payload = fake.slashCommand("verify");
      const delivery = await fake.postInteraction(
        `http://127.0.0.1:${port}${INTERACTIONS_PATH}`,
        payload,
      );
      expect(delivery.status).toBe(200);
      const answer = delivery.callback as RecordedRequest;
      expect(dataOf(answer).flags).toBe(64);
      expect(textOf(answer)).toContain("http://127.0.0.1:9/verify/token1");
      await prove([adapter]);
      const told = await fake.waitForFollowUp(payload, 10_000);
      expect(dataOf(told).flags).toBe(64);
      expect(textOf(told)).toContain(ADDRESS);
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
      expect(printed).toContain("http://127.0.0.1:9/verify/token1");
      expect(service.origins[0]?.origin).toEqual({
        platform: "console",
        userId: "console-user",
        chatId: "console",
      });
      await prove([adapter]);
      expect(printed).toContain(`Wallet verified`);
      expect(printed).toContain(ADDRESS);
    } finally {
      rmSync(exportDir, { recursive: true, force: true });
    }
  });
});
