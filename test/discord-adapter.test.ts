import * as discord from "discord.js";
import { Events } from "discord.js";
import { afterEach, beforeEach, describe, expect, it } from "vitest";
import { DISCORD_CACHE_LIMITS } from "../src/adapters/discord/caches.ts";
import { slashCommands } from "../src/adapters/discord/commands.ts";
import { DiscordAdapter } from "../src/adapters/discord/index.ts";
import { defineCommand } from "../src/core/command.ts";
import { silentLogger } from "../src/log.ts";
import { DISCORD_LIMITS } from "../src/render/discord.ts";
import { discordAdapterFor } from "./discord-helpers.ts";
import {
  DEFAULT_USER,
  type FakeDiscord,
  GATEWAY_OP,
  MEMBER_PERMISSIONS,
  populatedGuilds,
  type RecordedRequest,
  startFakeDiscord,
} from "./fakes/discord/index.ts";
import { type RuntimeSetup, startRuntime } from "./helpers.ts";

/** A reply over every embed limit, with hostile text, for the truncation test. */
const hugeCommand = defineCommand({
  name: "huge",
  description: "A reply over every limit",
  options: {},
  examples: [],
  run: async () => ({
    title: `Huge ${"T".repeat(400)}`,
    text: "@everyone <b>x</b> ".repeat(500),
    fields: Array.from({ length: 40 }, (_, i) => ({ name: `field ${i}`, value: "v".repeat(2000) })),
    footer: "f".repeat(3000),
  }),
});

/** A command only channel managers may run, for the permission test. */
let adminRuns = 0;
const adminCommand = defineCommand({
  name: "adminonly",
  description: "Changes channel settings",
  options: {},
  examples: [],
  requiresManageChannel: true,
  run: async () => {
    adminRuns++;
    return { text: "changed" };
  },
});

/** Every process warning of this file's run (discord.js emits its own once per process). */
const warnings: Error[] = [];
process.on("warning", (warning) => warnings.push(warning));

let t: RuntimeSetup;
let fake: FakeDiscord;
let adapter: DiscordAdapter;

beforeEach(async () => {
  adminRuns = 0;
  t = await startRuntime({}, {}, [hugeCommand, adminCommand]);
  fake = await startFakeDiscord();
  adapter = await discordAdapterFor(fake, t.runtime);
  await adapter.start();
});

afterEach(async () => {
  await adapter.stop();
  await fake.close();
  await t.close();
});

type Embed = {
  title?: string;
  description?: string;
  url?: string;
  fields?: { name: string; value: string }[];
  footer?: { text: string };
};
const embedOf = (request: RecordedRequest): Embed => {
  const body = request.body as { embeds?: Embed[]; data?: { embeds?: Embed[] } };
  return body.data?.embeds?.[0] ?? body.embeds?.[0] ?? {};
};
const bodyData = (request: RecordedRequest) => {
  const body = request.body as { type?: number; data?: Record<string, unknown> } & Record<
    string,
    unknown
  >;
  return (body.data ?? body) as Record<string, unknown>;
};

/** Sends a slash command and returns the request that carried the answer (reply or edit). */
async function slash(
  name: string,
  options: Record<string, string | number> = {},
  ctx = {},
): Promise<RecordedRequest> {
  const payload = fake.sendInteraction(fake.slashCommand(name, options, ctx));
  const callback = await fake.waitForCallback(payload, 10_000);
  const type = (callback.body as { type: number }).type;
  if (type === 5) return fake.waitForOriginalEdit(payload, 10_000);
  return callback;
}

describe("registration", () => {
  it("registers every command of the registry, with STRING token ids, choices and autocomplete", () => {
    const registered = fake.commands(fake.guildId);
    expect(registered.map((c) => c.name).sort()).toEqual(
      t.runtime.commands.map((c) => c.name).sort(),
    );
    const expected = slashCommands(t.runtime.commands);
    for (const command of expected) {
      const actual = registered.find((c) => c.name === command.name);
      expect(actual?.description).toBe(command.description);
      expect(actual?.options?.map((o) => o.name)).toEqual(command.options?.map((o) => o.name));
    }
    const nft = expected.find((c) => c.name === "nft");
    expect(nft?.options?.find((o) => o.name === "token_id")?.type).toBe(3);
    const top = expected.find((c) => c.name === "top");
    expect(top?.options?.find((o) => o.name === "duration")).toMatchObject({
      choices: expect.arrayContaining([{ name: "1 day", value: "1d" }]),
    });
    expect(expected.find((c) => c.name === "audience")?.options?.[0]).toMatchObject({
      autocomplete: true,
    });
    expect(expected.find((c) => c.name === "adminonly")?.default_member_permissions).toBe("16");
  });
});

describe("commands round-trip through discord.js", () => {
  it("/whois", async () => {
    const answer = await slash("whois", { query: t.sim.fixtures.walletEns });
    const embed = embedOf(answer);
    expect(embed.title).toBe(t.sim.fixtures.walletEns);
    expect(embed.fields?.find((f) => f.name === "Address")?.value).toMatch(/^0x[0-9a-fA-F]{40}$/);
  });

  it("/audience with its button, and the button click pages in place", async () => {
    const answer = await slash("audience", { collection: t.sim.fixtures.collection });
    expect(embedOf(answer).title).toMatch(/^Audience of/);
    expect(embedOf(answer).description).toMatch(/Behavior[\s\S]*Wallets[\s\S]*Share/);
    const components = bodyData(answer).components as {
      components: { custom_id: string; label: string }[];
    }[];
    const sample = components[0]?.components[0];
    expect(sample?.label).toBe("Sample wallets");
    const click = fake.sendInteraction(fake.buttonClick(sample?.custom_id ?? ""));
    const clicked = await fake.waitForCallback(click, 10_000);
    const type = (clicked.body as { type: number }).type;
    const page = type === 6 ? await fake.waitForFollowUp(click, 10_000) : clicked;
    expect(embedOf(page).title).toMatch(/Sample wallets/);
  });

  it("/top", async () => {
    const answer = await slash("top", { metric: "sales", duration: "7d", limit: 5 });
    expect(embedOf(answer).title).toBe("Top collections by number of sales, last 7 days");
    expect(
      embedOf(answer)
        .description?.split("\n")
        .filter((line) => /^\s*\d+\s/.test(line)),
    ).toHaveLength(5);
  });

  it("/nft with a 78-digit token id as a STRING option", async () => {
    const { contract, tokenId } = t.sim.fixtures.hugeTokenId;
    const answer = await slash("nft", { item: contract, token_id: tokenId });
    const embed = embedOf(answer);
    expect(embed.fields?.find((f) => f.name === "Token id")?.value).toBe(tokenId);
    expect(embed.url).toContain(tokenId);
  });

  it("defers a slow command and edits the answer in", async () => {
    await adapter.stop();
    adapter = new DiscordAdapter({
      token: fake.token,
      runtime: t.runtime,
      logger: silentLogger(),
      apiUrl: fake.apiBase,
      deferAfterMs: 20,
    });
    await adapter.start();
    t.sim.setFaults({ latencyMs: 300 });
    const payload = fake.sendInteraction(
      fake.slashCommand("stats", { collection: t.sim.fixtures.collection }),
    );
    expect((await fake.waitForCallback(payload, 10_000)).body).toMatchObject({ type: 5 });
    const edit = await fake.waitForOriginalEdit(payload, 10_000);
    expect(embedOf(edit).title).toMatch(/stats/i);
  });
});

describe("charts", () => {
  it("/owners attaches its PNG and shows it in the embed as attachment://", async () => {
    const answer = await slash("owners", { collection: t.sim.fixtures.collection });
    const embed = embedOf(answer) as Embed & { image?: { url?: string } };
    expect(embed.image?.url).toBe("attachment://owners.png");
    const file = answer.files.find((f) => f.filename === "owners.png");
    expect([...(file?.data.subarray(0, 4) ?? [])]).toEqual([0x89, 0x50, 0x4e, 0x47]);
  });
});

describe("errors and refusals are ephemeral", () => {
  it("a bad argument", async () => {
    const answer = await slash("nft", { item: "0x12", token_id: "1" });
    expect(bodyData(answer).flags).toBe(64);
    expect(embedOf(answer).description).toMatch(/is not a valid contract address/);
  });

  it("an expired or foreign button", async () => {
    const click = fake.sendInteraction(fake.buttonClick("AAAAAAAAAAAAAAAAAAAAAA"));
    const answer = await fake.waitForCallback(click);
    expect(answer.body).toMatchObject({ type: 4, data: { flags: 64 } });
    expect(embedOf(answer).description).toMatch(/expired/);
  });

  it("a channel-changing command from a member without Manage Channels changes nothing", async () => {
    const answer = await slash("adminonly", {}, { memberPermissions: MEMBER_PERMISSIONS });
    expect(bodyData(answer).flags).toBe(64);
    expect(embedOf(answer).description).toMatch(/Only people who can manage this channel/);
    expect(adminRuns).toBe(0);
  });
});

describe("spam reports", () => {
  it("a /wallet button asks privately, and Confirm updates that private message to 'Reported by'", async () => {
    // The person's own wallet, proved: reports are made for no other.
    const { address } = await t.prove({
      platform: "discord",
      user: { id: DEFAULT_USER.id, name: "tester" },
    });
    t.sim.giveNft(address);
    const answer = await slash("wallet", { wallet: address, spam: "exclude" });
    const rows = bodyData(answer).components as {
      components: { custom_id: string; label: string }[];
    }[];
    const spam = rows.flatMap((row) => row.components).find((b) => b.label === "Spam #1");
    const click = fake.sendInteraction(fake.buttonClick(spam?.custom_id ?? ""));
    const prompt = await fake.waitForCallback(click, 10_000);
    expect(prompt.body).toMatchObject({ type: 4, data: { flags: 64 } });
    const promptRows = bodyData(prompt).components as {
      components: { custom_id: string; label: string }[];
    }[];
    const confirm = promptRows
      .flatMap((row) => row.components)
      .find((b) => b.label === "Confirm report");
    const confirmClick = fake.sendInteraction(fake.buttonClick(confirm?.custom_id ?? ""));
    const done = await fake.waitForCallback(confirmClick, 10_000);
    expect((done.body as { type: number }).type).toBe(7);
    expect(embedOf(done).description).toMatch(/Reported as spam by /);
    expect(t.sim.reports).toHaveLength(1);
  });
});

describe("autocomplete", () => {
  it("suggests collections seen before, within 25", async () => {
    await slash("top", { metric: "volume", duration: "30d", limit: 25 });
    await slash("top", { metric: "sales", duration: "30d", limit: 25 });
    const payload = fake.sendInteraction(
      fake.autocomplete("audience", { collection: "" }, "collection"),
    );
    const answer = await fake.waitForCallback(payload);
    const choices = (
      answer.body as { type: number; data: { choices: { name: string; value: string }[] } }
    ).data.choices;
    expect((answer.body as { type: number }).type).toBe(8);
    expect(choices.length).toBe(25);
    for (const choice of choices) expect(choice.value).toMatch(/^0x[0-9a-fA-F]{40}$/);
  });

  it("puts the collection named exactly first, and a command takes that name", async () => {
    const { collections } = await t.api.collections.top("METRIC_SALES_VOLUME", "DURATION_7_DAYS", {
      limit: 25,
    });
    await slash("top", { metric: "volume", duration: "7d", limit: 25 });
    // A name of letters only that no other collection the bot knows has.
    const named = collections.find(
      (c) =>
        /^[A-Za-z]+( [A-Za-z]+)+$/.test(c.contractName) &&
        t.runtime.collections.match(c.contractName).filter((m) => m.kind === "exact").length === 1,
    );
    const name = named?.contractName ?? "";
    const payload = fake.sendInteraction(
      fake.autocomplete("audience", { collection: name.toLowerCase() }, "collection"),
    );
    const answer = await fake.waitForCallback(payload);
    const choices = (answer.body as { data: { choices: { name: string; value: string }[] } }).data
      .choices;
    expect(choices[0]?.name).toMatch(new RegExp(`^${name} \\(0x`));
    expect(choices[0]?.value.toLowerCase()).toBe(named?.contractAddress.toLowerCase());
    expect(embedOf(await slash("audience", { collection: name })).title).toBe(
      `Audience of ${name}`,
    );
  });
});

describe("limits and untrusted text", () => {
  it("truncates an over-long reply within every limit, visibly", async () => {
    const answer = await slash("huge");
    const embed = embedOf(answer);
    expect(embed.title?.length).toBeLessThanOrEqual(DISCORD_LIMITS.title);
    expect(embed.title).toMatch(/…$/);
    expect(embed.description?.length).toBeLessThanOrEqual(DISCORD_LIMITS.description);
    expect(embed.fields?.length).toBeLessThanOrEqual(DISCORD_LIMITS.fields);
    const total =
      (embed.title?.length ?? 0) +
      (embed.description?.length ?? 0) +
      (embed.footer?.text.length ?? 0) +
      (embed.fields ?? []).reduce((sum, f) => sum + f.name.length + f.value.length, 0);
    expect(total).toBeLessThanOrEqual(DISCORD_LIMITS.embedTotal);
  });

  it("a collection named '@everyone <b>x</b>' cannot ping or format", async () => {
    const answer = await slash("nft", { item: t.sim.fixtures.markupCollection, token_id: "1" });
    expect(bodyData(answer).allowed_mentions).toEqual({ parse: [] });
    const text = JSON.stringify(embedOf(answer));
    expect(text).not.toMatch(/@everyone(?!\u200b)/);
    expect(text).not.toContain("**bold**");
    expect(text).not.toContain("[link](https://evil.example)");
  });
});

describe("the gateway", () => {
  it("drops the connection: the bot comes back and answers the next command", async () => {
    const resumed = new Promise<void>((resolve) =>
      adapter.client.once(Events.ShardResume, () => resolve()),
    );
    fake.dropConnection({ abrupt: true });
    await resumed;
    const answer = await slash("whois", { query: t.sim.fixtures.walletEns });
    expect(embedOf(answer).title).toBe(t.sim.fixtures.walletEns);
  });
});

describe("bounded caches", () => {
  it("asks for no guild events and keeps no guild, channel, member or user of interactions", async () => {
    const answer = await slash("audience", { collection: t.sim.fixtures.collection });
    const components = bodyData(answer).components as { components: { custom_id: string }[] }[];
    const click = fake.sendInteraction(
      fake.buttonClick(components[0]?.components[0]?.custom_id ?? ""),
    );
    await fake.waitForCallback(click, 10_000);
    const { client } = adapter;
    // No intent: Discord sends no guild whole (GUILD_CREATE), only READY's list of ids.
    const identify = await fake.waitForGateway((f) => f.op === GATEWAY_OP.Identify);
    expect(identify.d).toMatchObject({ intents: 0 });
    expect(fake.gatewayFrames.some((f) => f.t === "GUILD_CREATE")).toBe(false);
    expect(client.guilds.cache.size).toBe(0);
    expect(client.channels.cache.size).toBe(0);
    expect(client.users.cache.size).toBe(0);
    // The answer still knew the clicker's rights from the interaction itself.
    expect(embedOf(answer).title).toMatch(/^Audience of/);
    // Nor is an operator told at start that limiting them "breaks functionality".
    await new Promise((resolve) => setImmediate(resolve));
    expect(warnings.map((w) => w.name)).not.toContain("UnsupportedCacheOverwriteWarning");
  });

  it("connects in 2,501 guilds, more than one shard may hold, and answers there", async () => {
    const crowded = await startFakeDiscord({
      guilds: populatedGuilds(2501, { channels: 1, roles: 0, emojis: 0, stickers: 0 }),
      lean: true,
      // The 3 shards identify at once rather than 5 s apart.
      maxConcurrency: 3,
    });
    const bot = await discordAdapterFor(crowded, t.runtime, { registerOnStart: false });
    try {
      await bot.start();
      const identified = crowded.gatewayFrames.filter((f) => f.op === GATEWAY_OP.Identify);
      expect(identified.map((f) => (f.d as { shard: number[] }).shard)).toEqual(
        expect.arrayContaining([
          [0, 3],
          [1, 3],
          [2, 3],
        ]),
      );
      const payload = crowded.sendInteraction(
        crowded.slashCommand("whois", { query: t.sim.fixtures.walletEns }),
      );
      await crowded.waitForCallback(payload, 10_000);
    } finally {
      await bot.stop();
      await crowded.close();
    }
  });

  it("limits every cache discord.js has, so a cache added by an upgrade is not unbounded", () => {
    const cached = Object.entries(discord)
      .filter(
        ([, value]) =>
          typeof value === "function" && value.prototype instanceof discord.CachedManager,
      )
      .map(([name]) => name)
      .sort();
    expect(cached.length).toBeGreaterThan(20);
    expect(Object.keys(DISCORD_CACHE_LIMITS).sort()).toEqual(cached);
  });
});

describe("alert sends under Discord's global limit", () => {
  /** Sends one message to each channel like the delivery worker does: `inFlight` at a time. */
  async function fanOut(channels: string[], inFlight = 16): Promise<void> {
    const queue = [...channels];
    await Promise.all(
      Array.from({ length: inFlight }, async () => {
        for (let id = queue.shift(); id; id = queue.shift())
          await adapter.sendToChat(id, { text: "Minted" }, `alert-${id}`);
      }),
    );
  }
  const channels = (n: number) =>
    Array.from({ length: n }, (_, i) => fake.addChannel({ name: `alerts-${i}` }).id);

  it("120 alert sends against the fake's 50/s global limit draw no 429", async () => {
    fake.setRateLimits({ globalPerSecond: 50 });
    await fanOut(channels(120));
    const sends = fake.requestsOf("createMessage");
    expect(sends.filter((r) => r.status === 429)).toHaveLength(0);
    expect(sends.filter((r) => r.status === 200)).toHaveLength(120);
  });

  it("a command answered while alerts are paced is not queued behind them", async () => {
    fake.setRateLimits({ globalPerSecond: 50 });
    const sending = fanOut(channels(60));
    await fake.waitFor((r) => r.route === "createMessage" && r.status === 200, 10_000);
    const asked = fake.requestsOf("createMessage").length;
    const answer = await slash("help");
    const between = fake.requestsOf("createMessage", (r) => r.seq < answer.seq).length - asked;
    await sending;
    // Interaction callbacks skip the global limit: the answer does not wait its turn among the
    // alerts (16 in flight), it goes out with at most a send or two beside it.
    expect(between).toBeLessThanOrEqual(4);
    expect(fake.requestsOf("createMessage", (r) => r.seq > answer.seq).length).toBeGreaterThan(30);
    expect(fake.requestsOf("createMessage", (r) => r.status === 429)).toHaveLength(0);
  });
});

describe("several chains", () => {
  async function onChains(): Promise<void> {
    await adapter.stop();
    await t.close();
    t = await startRuntime({ CHAINS: "ethereum,base,polygon" });
    adapter = new DiscordAdapter({
      token: fake.token,
      runtime: t.runtime,
      logger: silentLogger(),
      apiUrl: fake.apiBase,
      guildId: fake.guildId,
      registerOnStart: true,
    });
    await adapter.start();
  }

  it("registers the chain option with the chains as choices; a command reads the chain chosen", async () => {
    await onChains();
    const top = fake.commands(fake.guildId).find((c) => c.name === "top") as unknown as {
      options: { name: string; required?: boolean; choices?: { name: string; value: string }[] }[];
    };
    expect(top.options.find((option) => option.name === "chain")).toMatchObject({
      choices: [
        { name: "Ethereum", value: "ethereum" },
        { name: "Base", value: "base" },
        { name: "Polygon", value: "polygon" },
      ],
    });
    const before = t.sim.requests.length;
    const answer = await slash("top", { metric: "volume", duration: "1d", chain: "base" });
    expect(embedOf(answer).footer?.text).toMatch(/ · Base$/);
    expect(new Set(t.sim.requests.slice(before).map((request) => request.chain))).toEqual(
      new Set(["base"]),
    );
  });

  it("autocomplete suggests the chosen chain's collections, naming the chain", async () => {
    await onChains();
    await slash("top", { metric: "volume", duration: "30d", limit: 25, chain: "polygon" });
    const payload = fake.sendInteraction(
      fake.autocomplete("audience", { collection: "", chain: "polygon" }, "collection"),
    );
    const choices = (
      (await fake.waitForCallback(payload)).body as {
        data: { choices: { name: string; value: string }[] };
      }
    ).data.choices;
    expect(choices.length).toBeGreaterThan(0);
    for (const choice of choices) expect(choice.name).toMatch(/ · Polygon$/);
    // Nothing was read on ethereum, so its index is empty.
    const none = fake.sendInteraction(
      fake.autocomplete("audience", { collection: "", chain: "ethereum" }, "collection"),
    );
    const empty = ((await fake.waitForCallback(none)).body as { data: { choices: unknown[] } }).data
      .choices;
    expect(empty).toEqual([]);
  });
});
