/**
 * Issue 34, item 1: a gate must never hand out more than its adder could give by hand. Through the
 * whole bot (createBot) on the fake Discord, over the gateway and over HTTP interactions: a
 * moderator with Manage Channels alone cannot gate the server's Administrator role and so never
 * receives it by proving the demo wallet; a role carrying an elevated permission is refused even
 * to someone who could give it; a gate whose role gains such a permission later pauses before
 * the next grant, says why in /gate list, and goes on by itself once the permission is gone. On
 * Telegram, only the group's administrators add or remove gates (an anonymous one speaking as the
 * group too); a member and a post sent as a channel are refused.
 */
import { mkdtempSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { PermissionFlagsBits } from "discord-api-types/v10";
import { privateKeyToAccount } from "viem/accounts";
import { afterEach, describe, expect, it } from "vitest";
import { INTERACTIONS_PATH } from "../src/adapters/discord-http/endpoint.ts";
import { type Bot, createBot } from "../src/bot.ts";
import { parseConfig } from "../src/config.ts";
import { silentLogger } from "../src/log.ts";
import { DEMO_WALLET } from "../src/simulator/index.ts";
import {
  type FakeDiscord,
  MEMBER_PERMISSIONS,
  PERMISSION,
  type RecordedRequest,
  startFakeDiscord,
} from "./fakes/discord/index.ts";
import {
  anonymousAdmin,
  channelBot,
  channelChat,
  type RecordedCall,
  startFakeTelegram,
  supergroupChat,
  user,
} from "./fakes/telegram/index.ts";
import { proveWithLink, worldEnv } from "./helpers.ts";
import { startTestSimulator } from "./test-simulator.ts";

const demo = privateKeyToAccount(DEMO_WALLET.privateKey);
const cleanups: (() => unknown)[] = [];

afterEach(async () => {
  for (const cleanup of cleanups.splice(0).reverse()) await cleanup();
});

type Body = {
  type?: number;
  content?: string;
  embeds?: { description?: string; title?: string }[];
};
function textOf(request: RecordedRequest): string {
  const body = request.body as Body & { data?: Body };
  const data = body.data ?? body;
  const embeds = (data.embeds ?? []).map((e) => `${e.title ?? ""}\n${e.description ?? ""}`);
  return [data.content ?? "", ...embeds].join("\n");
}

/** What a moderator's client shows in a channel: Manage Channels there, nothing more. */
const MOD_CHANNEL_PERMISSIONS = MEMBER_PERMISSIONS | PERMISSION.ManageChannels;

/**
 * The server of the report, Server Settings → Roles top to bottom: the bot's role (Manage Roles),
 * Mods (Manage Channels), Staff (Manage Roles), Admin (Administrator), Holders (nothing).
 */
async function discordWorld(mode: "gateway" | "http") {
  const fake: FakeDiscord = await startFakeDiscord();
  cleanups.push(() => fake.close());
  const holders = fake.addRole({ name: "Holders", position: 1 });
  const admin = fake.addRole({
    name: "Admin",
    position: 2,
    permissions: PERMISSION.Administrator,
  });
  const staff = fake.addRole({ name: "Staff", position: 3, permissions: PERMISSION.ManageRoles });
  const mods = fake.addRole({ name: "Mods", position: 4, permissions: PERMISSION.ManageChannels });
  const botRole = fake.addRole({
    name: "Gatekeeper",
    position: 5,
    permissions: PERMISSION.ManageRoles,
    managed: true,
  });
  fake.setBotRoles([botRole.id]);
  const moderator = { id: "300000000000000011", username: "mallory", globalName: "Mallory" };
  fake.addMember(moderator.id, [mods.id]);
  const manager = { id: "300000000000000012", username: "sam", globalName: "Sam" };
  fake.addMember(manager.id, [staff.id]);
  const person = { id: "300000000000000013", username: "alice", globalName: "Alice" };
  fake.addMember(person.id);

  const sim = await startTestSimulator({ apiKey: "gates-permissions" });
  cleanups.push(() => sim.close());
  const dataDir = mkdtempSync(join(tmpdir(), "gates-permissions-"));
  cleanups.push(() => rmSync(dataDir, { recursive: true, force: true }));
  let skew = 0;
  const env = worldEnv(
    { sim, dataDir, discord: { token: fake.token, apiBase: fake.apiBase, guildId: fake.guildId } },
    {
      CHAINS: "ethereum",
      CACHE_TTL_OWNERSHIP_S: "0",
      ...(mode === "http" ? { DISCORD_PUBLIC_KEY: fake.publicKey } : {}),
    },
  );
  const bot: Bot = await createBot(parseConfig(env), {
    logger: silentLogger(),
    now: () => Date.now() + skew,
  });
  await bot.start();
  cleanups.push(() => bot.stop());
  const endpoint = `http://127.0.0.1:${bot.http.port}${INTERACTIONS_PATH}`;

  /** Runs a slash command one way or the other; resolves to what the person read. */
  const ask = async (payload: ReturnType<FakeDiscord["slashCommand"]>) => {
    let callback: RecordedRequest;
    if (mode === "gateway") callback = await fake.waitForCallback(fake.sendInteraction(payload));
    else {
      const delivery = await fake.postInteraction(endpoint, payload);
      expect(delivery.status).toBe(200);
      callback = delivery.callback as RecordedRequest;
    }
    if ((callback.body as Body).type === 5)
      return textOf(await fake.waitForOriginalEdit(payload, 10_000));
    return textOf(callback);
  };
  /** /verify in the server, then the demo wallet proved on the page's challenge. */
  const prove = async (who: { id: string; username: string; globalName: string }) => {
    const answer = await ask(fake.slashCommand("verify", {}, { user: who }));
    const url = new RegExp(`http://127\\.0\\.0\\.1:${bot.http.port}/verify/[\\w-]+`).exec(
      answer,
    )?.[0];
    if (!url) throw new Error(`no link to the bot's page in: ${answer}`);
    await proveWithLink(bot.verify, url, demo);
    await bot.gates.settled();
  };
  const holds = (userId: string, roleId: string) =>
    fake.member(userId)?.roles.includes(roleId) ?? false;
  return {
    fake,
    bot,
    ask,
    prove,
    holds,
    roles: { holders, admin, staff, mods, botRole },
    people: { moderator, manager, person },
    advance: (ms: number) => {
      skew += ms;
    },
  };
}

describe.each(["gateway", "http"] as const)("who may gate a Discord role (%s mode)", (mode) => {
  it("the report: a Manage Channels moderator cannot gate Administrator, so a proof gives nothing", async () => {
    const w = await discordWorld(mode);
    const { moderator } = w.people;
    const answer = await w.ask(
      w.fake.slashCommand(
        "gate",
        { action: "add", role: w.roles.admin.id, spec: "holds 1 Azuki" },
        { user: moderator, memberPermissions: MOD_CHANNEL_PERMISSIONS },
      ),
    );
    // The moderator proves the demo wallet, which holds an Azuki: no Admin role for them.
    await w.prove(moderator);
    expect(w.holds(moderator.id, w.roles.admin.id)).toBe(false);
    expect(w.fake.requestsOf("addMemberRole")).toEqual([]);
    // Because the gate was never added, and the moderator was told what they lack.
    expect(await w.bot.gates.list("discord", w.fake.guildId)).toEqual([]);
    expect(answer).toContain("You need Manage Roles to gate @Admin");
  }, 30_000);

  it("someone with Manage Roles and a higher role is still refused a role with elevated rights", async () => {
    const w = await discordWorld(mode);
    const { manager } = w.people;
    const answer = await w.ask(
      w.fake.slashCommand(
        "gate",
        { action: "add", role: w.roles.admin.id, spec: "holds 1 Azuki" },
        { user: manager, memberPermissions: MOD_CHANNEL_PERMISSIONS },
      ),
    );
    expect(answer).toMatch(/@Admin carries Administrator/);
    expect(await w.bot.gates.list("discord", w.fake.guildId)).toEqual([]);
    await w.prove(manager);
    expect(w.holds(manager.id, w.roles.admin.id)).toBe(false);
  }, 30_000);

  it("the moderator may not remove a gate of a role they could not give either", async () => {
    const w = await discordWorld(mode);
    const added = await w.ask(
      w.fake.slashCommand(
        "gate",
        { action: "add", role: w.roles.holders.id, spec: "holds 1 Azuki" },
        { user: w.people.manager, memberPermissions: MOD_CHANNEL_PERMISSIONS },
      ),
    );
    expect(added).toMatch(/Gate 1 added/);
    const refused = await w.ask(
      w.fake.slashCommand(
        "gate",
        { action: "remove", spec: "1" },
        { user: w.people.moderator, memberPermissions: MOD_CHANNEL_PERMISSIONS },
      ),
    );
    expect(refused).toContain("You need Manage Roles to remove the gate of @Holders");
    expect(await w.bot.gates.list("discord", w.fake.guildId)).toHaveLength(1);
    const removed = await w.ask(
      w.fake.slashCommand(
        "gate",
        { action: "remove", spec: "1" },
        { user: w.people.manager, memberPermissions: MOD_CHANNEL_PERMISSIONS },
      ),
    );
    expect(removed).toMatch(/Gate 1 removed/);
    expect(await w.bot.gates.list("discord", w.fake.guildId)).toEqual([]);
  }, 30_000);

  it("a role that gains an elevated right pauses its gate before the next grant, and goes on once it is gone", async () => {
    const w = await discordWorld(mode);
    const { manager, person } = w.people;
    await w.ask(
      w.fake.slashCommand(
        "gate",
        { action: "add", role: w.roles.holders.id, spec: "holds 1 Azuki" },
        { user: manager, memberPermissions: MOD_CHANNEL_PERMISSIONS },
      ),
    );
    expect(await w.bot.gates.list("discord", w.fake.guildId)).toHaveLength(1);
    // Someone gives Holders Ban Members afterwards: the next proof gives nothing.
    w.fake.editRole(w.roles.holders.id, { permissions: PermissionFlagsBits.BanMembers });
    await w.prove(person);
    expect(w.holds(person.id, w.roles.holders.id)).toBe(false);
    expect(w.fake.requestsOf("addMemberRole")).toEqual([]);
    const [paused] = await w.bot.gates.list("discord", w.fake.guildId);
    expect(paused?.pausedAt).toBeDefined();
    const listed = await w.ask(w.fake.slashCommand("gate", { action: "list" }, { user: person }));
    expect(listed).toMatch(/Paused: @Holders carries Ban Members/);

    // Still there ten minutes later: the gate stays paused.
    w.advance(11 * 60_000);
    await w.bot.gateRecheck.tick();
    expect((await w.bot.gates.list("discord", w.fake.guildId))[0]?.pausedAt).toBeDefined();
    // Taken off: the next round resumes the gate, and the person's next proof gives the role.
    w.fake.editRole(w.roles.holders.id, { permissions: 0n });
    w.advance(11 * 60_000);
    await w.bot.gateRecheck.tick();
    expect((await w.bot.gates.list("discord", w.fake.guildId))[0]?.pausedAt).toBeUndefined();
    await w.prove(person);
    expect(w.holds(person.id, w.roles.holders.id)).toBe(true);
  }, 30_000);
});

describe("who may gate a Telegram group", () => {
  it("its administrators (an admin, an anonymous admin as the group); not a member nor a channel", async () => {
    const fake = await startFakeTelegram();
    cleanups.push(() => fake.close());
    // Two groups, so that their answers (paced a second apart in each chat) come side by side.
    const first = supergroupChat(-1001234567891, "Azuki holders");
    const second = supergroupChat(-1001234567892, "Azuki lounge");
    const admin = user(7102, "Admin", "admin");
    const member = user(7103, "Member", "member");
    for (const group of [first, second]) {
      fake.addChat(group);
      fake.setAdminRights(group.id, fake.botInfo.id);
      fake.setAdminRights(group.id, admin.id);
      fake.setMemberStatus(group.id, member.id, "member");
    }
    const channel = channelChat(-1009876543210, "Announcements");
    const sim = await startTestSimulator({ apiKey: "gates-permissions-tg" });
    cleanups.push(() => sim.close());
    const dataDir = mkdtempSync(join(tmpdir(), "gates-permissions-"));
    cleanups.push(() => rmSync(dataDir, { recursive: true, force: true }));
    const bot = await createBot(
      parseConfig(
        worldEnv(
          { sim, dataDir, telegram: { token: fake.token, apiRoot: fake.apiRoot } },
          { CHAINS: "ethereum" },
        ),
      ),
      { logger: silentLogger() },
    );
    await bot.start();
    cleanups.push(() => bot.stop());
    type Group = typeof first;
    /** Sends a line to a group and resolves to the bot's answer there. */
    const say = async (group: Group, update: ReturnType<typeof fake.message>) => {
      const before = fake.sent.length;
      fake.pushUpdate(update);
      const call = await fake.waitFor(
        (c: RecordedCall) =>
          c.seq > before &&
          c.ok &&
          c.method === "sendMessage" &&
          String(c.params.chat_id) === String(group.id),
        10_000,
      );
      return String(call.params.text);
    };
    const gates = (group: Group) => bot.gates.list("telegram", String(group.id));
    const refusal = /Only people who can manage this chat may add or remove gates/;
    const anonymous = (group: Group, text: string) =>
      fake.message(group, anonymousAdmin, text, { senderChat: group });

    await Promise.all([
      (async () => {
        // An anonymous admin speaks as the group: they may; a member may not remove it.
        expect(await say(first, anonymous(first, "/gate add holds 1 Azuki"))).toMatch(
          /Gate 1 added/,
        );
        expect(await say(first, fake.message(first, member, "/gate remove 1"))).toMatch(refusal);
        expect(await gates(first)).toHaveLength(1);
        expect(await say(first, anonymous(first, "/gate remove 1"))).toMatch(/Gate 1 removed/);
        expect(await gates(first)).toEqual([]);
      })(),
      (async () => {
        expect(await say(second, fake.message(second, member, "/gate add holds 1 Azuki"))).toMatch(
          refusal,
        );
        // A post sent as a channel speaks for the channel, which manages nothing here.
        const asChannel = fake.message(second, channelBot, "/gate add holds 1 Azuki", {
          senderChat: channel,
        });
        expect(await say(second, asChannel)).toMatch(refusal);
        expect(await gates(second)).toEqual([]);
        expect(
          await say(second, fake.message(second, admin, "/gate add behavior collector")),
        ).toMatch(/Gate 1 added/);
        expect(await gates(second)).toHaveLength(1);
      })(),
    ]);
  }, 30_000);
});
