import {
  type AutocompleteInteraction,
  type ButtonInteraction,
  type ChatInputCommandInteraction,
  Client,
  type ClientEvents,
  DiscordAPIError,
  Events,
  GatewayIntentBits,
  type Interaction,
  MessageFlags,
  PermissionFlagsBits,
  type TextChannel,
} from "discord.js";
import { afterEach, describe, expect, it } from "vitest";
import type { RenderableReply } from "../src/core/reply.ts";
import { renderDiscord, withoutFlags } from "../src/render/discord.ts";
import {
  type FakeDiscord,
  GATEWAY_OP,
  MEMBER_PERMISSIONS,
  populatedGuilds,
  startFakeDiscord,
} from "./fakes/discord/index.ts";

const PNG = Buffer.from(
  "89504e470d0a1a0a0000000d4948445200000001000000010806000000" +
    "1f15c4890000000d49444154789c6360000002000154a24f5d0000000049454e44ae426082",
  "hex",
);

/** What a channel post takes: a rendered reply without the ephemeral flag. */
const toChannel = (reply: RenderableReply) => withoutFlags(renderDiscord(reply));

let fake: FakeDiscord | undefined;
let client: Client | undefined;

afterEach(async () => {
  // discord.js' destroy() never settles when it lands between IDENTIFY and READY (the shard
  // reconnects instead): a test that failed mid-handshake must not also hang its cleanup.
  await Promise.race([client?.destroy(), new Promise((resolve) => setTimeout(resolve, 2000))]);
  client = undefined;
  await fake?.close();
  fake = undefined;
});

/** A real discord.js client, logged in to the fake and ready. */
async function connect(fakeDiscord: FakeDiscord): Promise<Client> {
  const c = new Client({
    intents: [GatewayIntentBits.Guilds],
    rest: { api: fakeDiscord.apiBase },
    allowedMentions: { parse: [] },
  });
  client = c;
  const ready = new Promise<void>((resolve) => c.once(Events.ClientReady, () => resolve()));
  await c.login(fakeDiscord.token);
  await ready;
  return c;
}

/** Resolves with the first emission of a client event, or fails after `timeoutMs`. */
function clientEvent<E extends keyof ClientEvents>(
  c: Client,
  event: E,
  timeoutMs = 10_000,
): Promise<ClientEvents[E]> {
  return new Promise((resolve, reject) => {
    const timer = setTimeout(
      () => reject(new Error(`no ${String(event)} within ${timeoutMs} ms`)),
      timeoutMs,
    );
    c.once(event, (...args: ClientEvents[E]) => {
      clearTimeout(timer);
      resolve(args);
    });
  });
}

/** The next interaction the client emits, once handled (a failing handler rejects the promise). */
function nextInteraction<T extends Interaction>(
  c: Client,
  handle: (interaction: Interaction) => Promise<T | undefined>,
  timeoutMs = 5000,
): Promise<T> {
  return new Promise((resolve, reject) => {
    const timer = setTimeout(() => {
      c.off(Events.InteractionCreate, listener);
      reject(new Error(`no interaction reached the client within ${timeoutMs} ms`));
    }, timeoutMs);
    const listener = (interaction: Interaction) => {
      clearTimeout(timer);
      handle(interaction).then((handled) => {
        if (handled) resolve(handled);
        else reject(new Error(`unexpected interaction type ${interaction.type}`));
      }, reject);
    };
    c.once(Events.InteractionCreate, listener);
  });
}

describe("fake Discord with a real discord.js client", () => {
  it("logs in: gateway/bot, HELLO, IDENTIFY, READY and GUILD_CREATE make the client ready", async () => {
    fake = await startFakeDiscord();
    const c = await connect(fake);

    expect(c.user?.id).toBe(fake.applicationId);
    expect(c.application?.id).toBe(fake.applicationId);
    expect(c.guilds.cache.get(fake.guildId)?.name).toBe("Fake Guild");
    expect(c.channels.cache.get(fake.channelId)?.isTextBased()).toBe(true);
    const gatewayBot = fake.requestsOf("getGatewayBot")[0];
    expect(gatewayBot?.headers.authorization).toBe(`Bot ${fake.token}`);
    const identify = await fake.waitForGateway((f) => f.op === GATEWAY_OP.Identify);
    expect(identify.d).toMatchObject({ token: fake.token, intents: GatewayIntentBits.Guilds });
  });

  it("sends many guilds, each with its channels, roles, emojis and stickers, and a lean fake keeps none of them", async () => {
    fake = await startFakeDiscord({ guilds: populatedGuilds(250), lean: true });
    const c = await connect(fake);

    expect(c.guilds.cache.size).toBe(250);
    const guild = c.guilds.cache.get(fake.guilds[249]?.id ?? "");
    expect(guild?.channels.cache.size).toBe(20);
    expect(guild?.roles.cache.size).toBe(16);
    expect(guild?.roles.everyone.id).toBe(guild?.id);
    expect(guild?.emojis.cache.size).toBe(10);
    expect(guild?.stickers.cache.size).toBe(2);
    expect(c.channels.cache.size).toBe(250 * 20);
    expect(fake.gatewayFrames.some((f) => f.t === "GUILD_CREATE")).toBe(false);
    expect(fake.gatewayFrames.some((f) => f.t === "READY")).toBe(true);
  });

  it("sends no GUILD_CREATE to a client without the Guilds intent, which is ready at READY and gets interactions", async () => {
    fake = await startFakeDiscord();
    const c = new Client({ intents: [], rest: { api: fake.apiBase } });
    client = c;
    const ready = new Promise<void>((resolve) => c.once(Events.ClientReady, () => resolve()));
    await c.login(fake.token);
    await ready;
    expect(fake.gatewayFrames.some((f) => f.t === "READY")).toBe(true);
    expect(fake.gatewayFrames.some((f) => f.t === "GUILD_CREATE")).toBe(false);
    const received = new Promise<string>((resolve) =>
      c.once(Events.InteractionCreate, (interaction) => resolve(interaction.guildId ?? "")),
    );
    fake.sendInteraction(fake.slashCommand("whois", { query: "vitalik.eth" }));
    expect(await received).toBe(fake.guildId);
  });

  it("answers heartbeats with ACKs, so the client measures a ping", async () => {
    fake = await startFakeDiscord({ heartbeatIntervalMs: 100 });
    const c = await connect(fake);
    const heartbeat = await fake.waitForGateway((f) => f.op === GATEWAY_OP.Heartbeat);
    await fake.waitForGateway((f) => f.op === GATEWAY_OP.HeartbeatAck && f.at >= heartbeat.at);
    await expect.poll(() => c.ws.ping).toBeGreaterThanOrEqual(0);
  });

  it("registers commands and types slash options from the registration", async () => {
    fake = await startFakeDiscord();
    const c = await connect(fake);
    await c.application?.commands.set(
      [
        {
          name: "top",
          description: "Top collections",
          options: [
            { type: 4, name: "limit", description: "How many", required: false },
            {
              type: 3,
              name: "chain",
              description: "Chain",
              choices: [{ name: "Ethereum", value: "eth" }],
            },
          ],
        },
      ],
      fake.guildId,
    );
    const put = await fake.waitFor((r) => r.route === "putCommands");
    expect(put.params.guildId).toBe(fake.guildId);
    expect(fake.commands(fake.guildId).map((cmd) => cmd.name)).toEqual(["top"]);

    const payload = fake.slashCommand("top", { limit: 5, chain: "eth" });
    expect(payload.data.options).toEqual([
      { name: "limit", type: 4, value: 5 },
      { name: "chain", type: 3, value: "eth" },
    ]);
    expect(payload.data.id).toBe(fake.commands(fake.guildId)[0]?.id);
    expect(() => fake?.slashCommand("top", { chain: "sol" })).toThrow(/one of/);
    expect(() => fake?.slashCommand("top", { nope: 1 })).toThrow(/no option "nope"/);
  });

  it("rejects a command registration Discord would reject", async () => {
    fake = await startFakeDiscord();
    const c = await connect(fake);
    const bad = c.application?.commands.set([{ name: "Bad Name", description: "x" }], fake.guildId);
    await expect(bad).rejects.toMatchObject({ code: 50035, status: 400 });
  });

  it("a slash command: deferReply then editReply(renderDiscord) is recorded as callback 5 and a PATCH of @original", async () => {
    fake = await startFakeDiscord();
    const c = await connect(fake);
    const handled = nextInteraction(c, async (interaction) => {
      if (!interaction.isChatInputCommand()) return undefined;
      await interaction.deferReply();
      const message = renderDiscord({
        title: `Wallet ${interaction.options.getString("address")}`,
        text: "@everyone **owns** things",
        fields: [{ name: "Balance", value: "1.5 ETH", inline: true }],
        image: { kind: "png", data: PNG, name: "chart.png", alt: "a chart" },
        buttons: [{ label: "More", id: "btn-more" }],
      });
      await interaction.editReply(withoutFlags(message));
      return interaction;
    });
    const payload = fake.sendInteraction(fake.slashCommand("whois", { address: "0xabc" }));
    const interaction = await handled;

    expect(interaction.commandName).toBe("whois");
    expect(interaction.memberPermissions?.bitfield).toBe(MEMBER_PERMISSIONS);
    expect(interaction.inCachedGuild()).toBe(true);
    const callback = await fake.waitForCallback(payload);
    expect(callback.body).toEqual({ type: 5, data: { flags: 0 } });
    expect(callback.status).toBe(204);

    const edit = await fake.waitForOriginalEdit(payload);
    expect(edit.path).toBe(`/webhooks/${fake.applicationId}/${payload.token}/messages/@original`);
    expect(edit.headers["content-type"]).toMatch(/^multipart\/form-data/);
    const body = edit.body as {
      embeds: { title: string; description: string; image: { url: string } }[];
      allowed_mentions: unknown;
    };
    expect(body.embeds[0]?.title).toBe("Wallet 0xabc");
    expect(body.embeds[0]?.description).toBe("@\u200beveryone \\*\\*owns\\*\\* things");
    expect(body.embeds[0]?.image.url).toBe("attachment://chart.png");
    expect(body.allowed_mentions).toEqual({ parse: [] });
    expect(edit.files).toHaveLength(1);
    expect(edit.files[0]).toMatchObject({ filename: "chart.png", contentType: "image/png" });
    expect(edit.files[0]?.data.equals(PNG)).toBe(true);

    const stored = fake.messages(fake.channelId).at(-1);
    expect(stored?.attachments[0]?.filename).toBe("chart.png");
    expect(stored?.embeds[0]?.image?.url).toBe(stored?.attachments[0]?.url);
  });

  it("a button click on the bot's message: update() is recorded as callback 7", async () => {
    fake = await startFakeDiscord();
    const c = await connect(fake);
    const channel = c.channels.cache.get(fake.channelId) as TextChannel;
    await channel.send(toChannel({ title: "Page 1", buttons: [{ label: "Next", id: "page-2" }] }));

    const handled = nextInteraction<ButtonInteraction>(c, async (interaction) => {
      if (!interaction.isButton()) return undefined;
      await interaction.update(withoutFlags(renderDiscord({ title: "Page 2" })));
      return interaction;
    });
    const payload = fake.sendInteraction(
      fake.buttonClick("page-2", {
        memberPermissions: MEMBER_PERMISSIONS | PermissionFlagsBits.ManageGuild,
      }),
    );
    const interaction = await handled;

    expect(interaction.customId).toBe("page-2");
    expect(interaction.message.embeds[0]?.title).toBe("Page 1");
    expect(interaction.memberPermissions?.has(PermissionFlagsBits.ManageGuild)).toBe(true);
    const callback = await fake.waitForCallback(payload);
    expect(callback.body).toMatchObject({
      type: 7,
      data: { embeds: [{ title: "Page 2" }], components: [] },
    });
    expect(fake.message(payload.message.id)?.embeds[0]?.title).toBe("Page 2");
  });

  it("a button click answered with deferUpdate() and an ephemeral followUp()", async () => {
    fake = await startFakeDiscord();
    const c = await connect(fake);
    const handled = nextInteraction<ButtonInteraction>(c, async (interaction) => {
      if (!interaction.isButton()) return undefined;
      await interaction.deferUpdate();
      await interaction.followUp(renderDiscord({ text: "Reported, thanks", private: true }));
      return interaction;
    });
    // No stored message carries the id: the fake makes up the bot message the button sits under.
    const payload = fake.sendInteraction(fake.buttonClick("report-spam"));
    await handled;

    expect((await fake.waitForCallback(payload)).body).toEqual({ type: 6 });
    const followUp = await fake.waitForFollowUp(payload);
    expect(followUp.query).toMatchObject({ wait: "true" });
    expect(followUp.body).toMatchObject({
      flags: 64,
      embeds: [{ description: "Reported, thanks" }],
    });
    expect(fake.messages(fake.channelId).at(-1)?.flags).toBe(64);
  });

  it("a slash command in a DM carries the user and no member", async () => {
    fake = await startFakeDiscord();
    const c = await connect(fake);
    const handled = nextInteraction<ChatInputCommandInteraction>(c, async (interaction) => {
      if (!interaction.isChatInputCommand()) return undefined;
      await interaction.reply(renderDiscord({ text: "hi" }));
      return interaction;
    });
    const payload = fake.sendInteraction(
      fake.slashCommand(
        "help",
        {},
        { guildId: null, user: { id: "300000000000000003", username: "dm-user" } },
      ),
    );
    const interaction = await handled;

    expect(interaction.inGuild()).toBe(false);
    expect(interaction.member).toBeNull();
    expect(interaction.user.username).toBe("dm-user");
    expect(interaction.context).toBe(1);
    expect((await fake.waitForCallback(payload)).body).toMatchObject({ type: 4 });
  });

  it("an autocomplete: respond() is recorded as callback 8 with the choices", async () => {
    fake = await startFakeDiscord();
    const c = await connect(fake);
    const handled = nextInteraction<AutocompleteInteraction>(c, async (interaction) => {
      if (!interaction.isAutocomplete()) return undefined;
      const typed = interaction.options.getFocused(true);
      await interaction.respond([{ name: `Collection ${typed.value}`, value: `${typed.value}-1` }]);
      return interaction;
    });
    const payload = fake.sendInteraction(
      fake.autocomplete("nft", { collection: "bored", token: "1" }, "collection"),
    );
    const interaction = await handled;

    expect(interaction.options.getFocused(true)).toMatchObject({
      name: "collection",
      value: "bored",
    });
    const callback = await fake.waitForCallback(payload);
    expect(callback.body).toEqual({
      type: 8,
      data: { choices: [{ name: "Collection bored", value: "bored-1" }] },
    });
  });

  it("refuses a second acknowledgement (40060) and a late one (10062), as Discord does", async () => {
    // Long enough for the first acknowledgement on a loaded machine (50 ms was not, once).
    fake = await startFakeDiscord({ ackDeadlineMs: 500 });
    const c = await connect(fake);
    const twice = nextInteraction<ChatInputCommandInteraction>(c, async (interaction) => {
      if (!interaction.isChatInputCommand()) return undefined;
      await interaction.deferReply({ flags: MessageFlags.Ephemeral });
      // Pretend discord.js did not know: a second callback on the same interaction.
      await c.rest.post(`/interactions/${interaction.id}/${interaction.token}/callback`, {
        body: { type: 5 },
        auth: false,
      });
      return interaction;
    });
    fake.sendInteraction(fake.slashCommand("ping"));
    await expect(twice).rejects.toMatchObject({ code: 40060 });

    const late = nextInteraction<ChatInputCommandInteraction>(c, async (interaction) => {
      if (!interaction.isChatInputCommand()) return undefined;
      await new Promise((resolve) => setTimeout(resolve, 1000));
      await interaction.reply({ content: "too late" });
      return interaction;
    });
    fake.sendInteraction(fake.slashCommand("ping"));
    await expect(late).rejects.toMatchObject({ code: 10062 });
  });

  it("a channel send with a PNG arrives multipart with the file", async () => {
    fake = await startFakeDiscord();
    const c = await connect(fake);
    const channel = await c.channels.fetch(fake.channelId);
    if (!channel?.isSendable()) throw new Error("channel not sendable");
    const sent = await channel.send(
      toChannel({
        title: "New collection",
        image: { kind: "png", data: PNG, name: "mint chart", alt: "mints" },
        files: [{ name: "holders.csv", contentType: "text/csv", data: Buffer.from("a,b\n1,2\n") }],
      }),
    );

    const request = await fake.waitForChannelMessage(fake.channelId);
    expect(request.headers["content-type"]).toMatch(/^multipart\/form-data/);
    expect(request.files.map((f) => [f.field, f.filename])).toEqual([
      ["files[0]", "mint_chart.png"],
      ["files[1]", "holders.csv"],
    ]);
    expect(request.files[0]?.data.equals(PNG)).toBe(true);
    expect(request.files[1]?.data.toString()).toBe("a,b\n1,2\n");
    expect(request.body).toMatchObject({
      embeds: [{ image: { url: "attachment://mint_chart.png" } }],
      attachments: [{ id: "0", description: "mints" }, { id: "1" }],
      allowed_mentions: { parse: [] },
    });
    expect(sent.attachments.size).toBe(2);
  });

  it("answers an over-limit embed with 50035 Invalid Form Body", async () => {
    fake = await startFakeDiscord();
    const c = await connect(fake);
    const channel = c.channels.cache.get(fake.channelId) as TextChannel;
    const error = await channel
      .send({ embeds: [{ description: "x".repeat(4097) }] })
      .catch((e: unknown) => e);
    expect(error).toBeInstanceOf(DiscordAPIError);
    expect(error).toMatchObject({ code: 50035, status: 400 });
    expect((error as DiscordAPIError).rawError).toMatchObject({
      errors: { embeds: { "0": { description: { _errors: [{ code: "BASE_TYPE_MAX_LENGTH" }] } } } },
    });
  });

  it("drops the gateway connection: the client resumes, gets the missed event and answers it", async () => {
    fake = await startFakeDiscord();
    const c = await connect(fake);
    const handled = nextInteraction<ChatInputCommandInteraction>(c, async (interaction) => {
      if (!interaction.isChatInputCommand()) return undefined;
      await interaction.reply(renderDiscord({ text: "still here" }));
      return interaction;
    });

    fake.dropConnection();
    // Sent while the socket is down: Discord keeps it and replays it on RESUME.
    const payload = fake.sendInteraction(fake.slashCommand("ping"));
    const resume = await fake.waitForGateway((f) => f.op === GATEWAY_OP.Resume);
    expect(resume.connection).toBe(2);
    await handled;
    const callback = await fake.waitForCallback(payload);
    expect(callback.body).toMatchObject({
      type: 4,
      data: { embeds: [{ description: "still here" }] },
    });
  });

  it("after an abrupt drop and an invalid session the client identifies again and keeps working", async () => {
    fake = await startFakeDiscord();
    const c = await connect(fake);
    // discord.js must have handled RESUMED before the next op 9: when INVALID_SESSION overtakes
    // it, its RESUMED handler reads a cleared session and rejects unhandled.
    const resumed = clientEvent(c, Events.ShardResume);
    fake.dropConnection({ abrupt: true });
    await resumed;

    // Not resumable: a fresh IDENTIFY, which discord.js holds back 5 s after the last one.
    const ready = clientEvent(c, Events.ShardReady);
    fake.invalidateSession(false);
    await ready;
    const identify = fake.gatewayFrames.filter((f) => f.op === GATEWAY_OP.Identify);
    expect(identify.map((f) => f.connection)).toEqual([1, 3]);

    const handled = nextInteraction<ChatInputCommandInteraction>(c, async (interaction) => {
      if (!interaction.isChatInputCommand()) return undefined;
      await interaction.reply(renderDiscord({ text: "fresh" }));
      return interaction;
    });
    const payload = fake.sendInteraction(fake.slashCommand("ping"));
    await handled;
    await fake.waitForCallback(payload);
  }, 15_000);

  it("a 429 on a channel message is waited out by discord.js and the message arrives once", async () => {
    fake = await startFakeDiscord();
    const c = await connect(fake);
    fake.failChannel(fake.channelId, { status: 429, retryAfter: 0.3, times: 1 });
    const channel = c.channels.cache.get(fake.channelId) as TextChannel;

    const started = Date.now();
    await channel.send(toChannel({ text: "alert" }));

    const attempts = fake.requestsOf("createMessage");
    expect(attempts.map((r) => r.status)).toEqual([429, 200]);
    expect(attempts[0]?.response).toMatchObject({ retry_after: 0.3, global: false });
    expect(attempts[0]?.responseHeaders).toMatchObject({
      "retry-after": "1",
      "x-ratelimit-remaining": "0",
    });
    expect((attempts[1]?.at ?? 0) - (attempts[0]?.at ?? 0)).toBeGreaterThanOrEqual(250);
    expect(Date.now() - started).toBeLessThan(2000);
    expect(fake.messages(fake.channelId)).toHaveLength(1);
  });

  it("per-channel limits are announced in headers, so discord.js waits instead of hitting 429", async () => {
    fake = await startFakeDiscord({ rateLimits: { perChannel: { limit: 2, windowMs: 400 } } });
    const c = await connect(fake);
    const channel = c.channels.cache.get(fake.channelId) as TextChannel;
    await Promise.all([1, 2, 3].map((n) => channel.send(toChannel({ text: `alert ${n}` }))));

    const attempts = fake.requestsOf("createMessage");
    expect(attempts.map((r) => r.status)).toEqual([200, 200, 200]);
    expect(attempts[0]?.responseHeaders).toMatchObject({
      "x-ratelimit-limit": "2",
      "x-ratelimit-remaining": "1",
    });
    expect(attempts[1]?.responseHeaders["x-ratelimit-remaining"]).toBe("0");
    expect((attempts[2]?.at ?? 0) - (attempts[0]?.at ?? 0)).toBeGreaterThanOrEqual(300);
  });

  it("a global 429 makes discord.js pause every route, then retry", async () => {
    fake = await startFakeDiscord();
    const c = await connect(fake);
    const second = fake.addChannel({ name: "alerts" });
    await expect.poll(() => c.channels.cache.has(second.id)).toBe(true);
    fake.setRateLimits({ globalPerSecond: 2 });
    const first = c.channels.cache.get(fake.channelId) as TextChannel;
    const other = c.channels.cache.get(second.id) as TextChannel;
    await Promise.all([
      first.send(toChannel({ text: "a" })),
      other.send(toChannel({ text: "b" })),
      first.send(toChannel({ text: "c" })),
    ]);
    const statuses = fake.requestsOf("createMessage").map((r) => r.status);
    expect(statuses.filter((s) => s === 200)).toHaveLength(3);
    const limited = fake.requestsOf("createMessage", (r) => r.status === 429);
    expect(limited.length).toBeGreaterThanOrEqual(1);
    expect(limited[0]?.response).toMatchObject({ global: true });
    expect(limited[0]?.responseHeaders).toMatchObject({
      "x-ratelimit-global": "true",
      "x-ratelimit-scope": "global",
    });
  });

  it("reports a lost channel with Discord's codes: 404 10003, 403 50001 and 50013", async () => {
    fake = await startFakeDiscord();
    const c = await connect(fake);
    const channel = c.channels.cache.get(fake.channelId) as TextChannel;
    for (const [status, code] of [
      [404, 10003],
      [403, 50001],
      [403, 50013],
    ] as const) {
      fake.failChannel(fake.channelId, { status, code, times: 1 });
      await expect(channel.send(toChannel({ text: "x" }))).rejects.toMatchObject({ status, code });
    }
    await expect(
      c.rest.post("/channels/1/messages", { body: { content: "x" } }),
    ).rejects.toMatchObject({
      status: 404,
      code: 10003,
    });
  });
});
