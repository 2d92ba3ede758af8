/**
 * Holder roles on Discord (issue 29), in both modes: the gateway adapter (real discord.js logged
 * in to the fake) and the HTTP-interactions adapter (its own REST), each handing out the same
 * DiscordGateMembership. The fake Discord refuses as Discord does: Manage Roles from the bot's
 * roles, only roles below the bot's highest, no managed role, unknown members and roles, DMs a
 * person turned off.
 */
import { afterAll, afterEach, beforeAll, beforeEach, describe, expect, it } from "vitest";
import { ELEVATED_PERMISSIONS } from "../src/adapters/discord/role-rules.ts";
import type { GateMembership, GateTarget } from "../src/gates/types.ts";
import type { HttpHost } from "../src/http/host.ts";
import type { ChatSender } from "../src/outbound/types.ts";
import { discordAdapterFor, serveDiscordHttp } from "./discord-helpers.ts";
import {
  DEFAULT_USER,
  type FakeDiscord,
  type FakeRole,
  MEMBER_PERMISSIONS,
  PERMISSION,
  startFakeDiscord,
} from "./fakes/discord/index.ts";
import { type RuntimeSetup, startRuntime } from "./helpers.ts";
import { tellOnce } from "./outbound-helpers.ts";

type RoleTarget = Extract<GateTarget, { platform: "discord" }>;
/** gservice adds guildOf to GateMembership as optional; the Discord one has it. */
type DiscordMembership = GateMembership & {
  guildOf(channelId: string): Promise<string | undefined>;
  mayGive: NonNullable<GateMembership["mayGive"]>;
};

const HOLDER = "300000000000000001";
const OTHER = "300000000000000002";

let t: RuntimeSetup;

beforeAll(async () => {
  t = await startRuntime();
});

afterAll(async () => {
  await t.close();
});

/** Starts an adapter of the mode on the fake; returns its membership and how to stop it. */
async function startMode(
  mode: "gateway" | "http",
  fake: FakeDiscord,
): Promise<{
  membership: GateMembership | undefined;
  sender: ChatSender;
  stop: () => Promise<void>;
}> {
  if (mode === "gateway") {
    const adapter = await discordAdapterFor(fake, t.runtime, { registerOnStart: false });
    await adapter.start();
    return { membership: adapter.gateMembership, sender: adapter, stop: () => adapter.stop() };
  }
  const served: {
    adapter: ChatSender & { stop(): Promise<void>; gateMembership?: GateMembership };
    host: HttpHost;
  } = await serveDiscordHttp(fake, t.runtime, t.store.updates, { registerOnStart: false });
  return {
    membership: served.adapter.gateMembership,
    sender: served.adapter,
    stop: async () => {
      await served.adapter.stop();
      await served.host.close();
    },
  };
}

describe.each(["gateway", "http"] as const)("Discord holder roles (%s mode)", (mode) => {
  let fake: FakeDiscord;
  let membership: DiscordMembership;
  let sender: ChatSender;
  let stop: () => Promise<void>;
  let holders: FakeRole;
  let botRole: FakeRole;
  let target: RoleTarget;

  beforeEach(async () => {
    fake = await startFakeDiscord();
    // Server Settings → Roles, top to bottom: the bot's own role (an integration's, so managed),
    // then Holders.
    holders = fake.addRole({ name: "Holders", position: 1 });
    botRole = fake.addRole({
      name: "Gatekeeper",
      position: 2,
      permissions: PERMISSION.ManageRoles,
      managed: true,
    });
    fake.setBotRoles([botRole.id]);
    fake.addMember(HOLDER);
    fake.addMember(OTHER);
    target = {
      platform: "discord",
      guildId: fake.guildId,
      roleId: holders.id,
      roleName: "holders",
    };
    const started = await startMode(mode, fake);
    stop = started.stop;
    sender = started.sender;
    if (!started.membership) throw new Error(`the ${mode} adapter has no gateMembership`);
    membership = started.membership as DiscordMembership;
  });

  afterEach(async () => {
    await stop();
    await fake.close();
  });

  it("checks the role, then grants and revokes it with an audit log reason", async () => {
    const checked = await membership.check(target);
    // The role's current name comes back, for the gate to show.
    expect(checked).toEqual({ ok: true, target: { ...target, roleName: "Holders" } });

    expect(await membership.grant(target, HOLDER)).toEqual({ ok: true });
    expect(fake.member(HOLDER)?.roles).toEqual([holders.id]);
    const put = fake.requestsOf("addMemberRole").at(-1);
    expect(put?.status).toBe(204);
    expect(put?.params).toMatchObject({
      guildId: fake.guildId,
      userId: HOLDER,
      roleId: holders.id,
    });
    expect(decodeURIComponent(String(put?.headers["x-audit-log-reason"]))).toMatch(/^Gate: /);

    expect(await membership.revoke(target, HOLDER)).toEqual({ ok: true });
    expect(fake.member(HOLDER)?.roles).toEqual([]);
    expect(fake.requestsOf("removeMemberRole").at(-1)?.headers["x-audit-log-reason"]).toBeTruthy();
  });

  it("refuses a bot without Manage Roles, saying how to fix it", async () => {
    fake.editRole(botRole.id, { permissions: 0n });
    const checked = await membership.check(target);
    expect(checked).toEqual({
      ok: false,
      reason: expect.stringContaining("Give the bot Manage Roles"),
    });
    // Discord agrees: the grant itself is refused, and the gate would pause with the same fix.
    const granted = await membership.grant(target, HOLDER);
    expect(granted).toEqual({
      ok: false,
      kind: "refused",
      reason: expect.stringContaining("Give the bot Manage Roles"),
    });
    expect(fake.requestsOf("addMemberRole").at(-1)?.response).toMatchObject({ code: 50013 });
  });

  it("takes Manage Roles from @everyone or Administrator too", async () => {
    fake.editRole(botRole.id, { permissions: PERMISSION.Administrator });
    expect((await membership.check(target)).ok).toBe(true);
    expect(await membership.grant(target, HOLDER)).toEqual({ ok: true });
  });

  it("refuses a role above the bot's, naming the bot's role", async () => {
    fake.editRole(holders.id, { position: 3 });
    const checked = await membership.check(target);
    expect(checked).toEqual({
      ok: false,
      reason: "In Server Settings → Roles, drag the bot's role (Gatekeeper) above Holders.",
    });
  });

  it("says both fixes when both are needed", async () => {
    fake.editRole(botRole.id, { permissions: 0n });
    fake.editRole(holders.id, { position: 3 });
    const checked = await membership.check(target);
    expect(checked.ok).toBe(false);
    const reason = checked.ok ? "" : checked.reason;
    expect(reason).toContain("Give the bot Manage Roles");
    expect(reason).toContain("drag the bot's role (Gatekeeper) above Holders");
  });

  it("refuses a bot with no role at all", async () => {
    fake.setBotRoles([]);
    const checked = await membership.check(target);
    expect(checked.ok).toBe(false);
    expect(checked.ok ? "" : checked.reason).toContain("Give the bot a role above Holders");
  });

  it("refuses a managed role, @everyone and a missing role", async () => {
    const boosters = fake.addRole({ name: "Server Booster", position: 1, managed: true });
    expect(await membership.check({ ...target, roleId: boosters.id })).toEqual({
      ok: false,
      reason: expect.stringContaining("Server Booster is managed by an integration"),
    });
    expect(await membership.grant({ ...target, roleId: boosters.id }, HOLDER)).toMatchObject({
      ok: false,
      kind: "refused",
    });

    expect(await membership.check({ ...target, roleId: fake.guildId })).toEqual({
      ok: false,
      reason: expect.stringContaining("@everyone"),
    });

    fake.deleteRole(holders.id);
    expect(await membership.check(target)).toEqual({
      ok: false,
      reason: "The role holders no longer exists in this server: pick another role.",
    });
    expect(await membership.grant(target, HOLDER)).toEqual({
      ok: false,
      kind: "refused",
      reason: "The role holders was deleted from the server.",
    });
  });

  it("is refused after the gate was added when the role is moved above the bot's", async () => {
    expect((await membership.check(target)).ok).toBe(true);
    expect(await membership.grant(target, HOLDER)).toEqual({ ok: true });

    fake.editRole(holders.id, { position: 5 });
    expect(await membership.grant(target, OTHER)).toEqual({
      ok: false,
      kind: "refused",
      reason: "In Server Settings → Roles, drag the bot's role (Gatekeeper) above Holders.",
    });
    expect(await membership.revoke(target, HOLDER)).toMatchObject({ ok: false, kind: "refused" });
    // Nothing changed on Discord's side.
    expect(fake.member(HOLDER)?.roles).toEqual([holders.id]);
    expect(fake.member(OTHER)?.roles).toEqual([]);
  });

  it("refuses a role carrying any elevated permission, at add and before each grant", async () => {
    for (const { flag, name } of ELEVATED_PERMISSIONS) {
      fake.editRole(holders.id, { permissions: flag | PERMISSION.SendMessages });
      const checked = await membership.check(target);
      expect(checked).toEqual({
        ok: false,
        reason: expect.stringContaining(`@Holders carries ${name}:`),
      });
    }
    // What ordinary members have is no reason to refuse.
    fake.editRole(holders.id, { permissions: MEMBER_PERMISSIONS });
    expect((await membership.check(target)).ok).toBe(true);

    // Granted while plain; given Administrator afterwards: the next grant is refused unasked.
    expect(await membership.grant(target, HOLDER)).toEqual({ ok: true });
    fake.editRole(holders.id, { permissions: PERMISSION.Administrator });
    const puts = fake.requestsOf("addMemberRole").length;
    expect(await membership.grant(target, OTHER)).toEqual({
      ok: false,
      kind: "refused",
      reason: expect.stringContaining("@Holders carries Administrator"),
    });
    expect(fake.requestsOf("addMemberRole")).toHaveLength(puts);
    expect(fake.member(OTHER)?.roles).toEqual([]);
    // Taking the role away is no escalation: it goes through.
    expect(await membership.revoke(target, HOLDER)).toEqual({ ok: true });
  });

  it("lets a person gate a role only as Discord lets them give it by hand", async () => {
    // Roles, top to bottom: Gatekeeper (bot) 5, Staff 4 (Manage Roles), Mods 3 (Manage
    // Channels), Holders 2, Juniors 1 (Manage Roles), Admins 1 (Administrator, newer).
    fake.editRole(botRole.id, { position: 5 });
    fake.editRole(holders.id, { position: 2 });
    const staff = fake.addRole({ name: "Staff", position: 4, permissions: PERMISSION.ManageRoles });
    const mods = fake.addRole({
      name: "Mods",
      position: 3,
      permissions: PERMISSION.ManageChannels,
    });
    const juniors = fake.addRole({
      name: "Juniors",
      position: 1,
      permissions: PERMISSION.ManageRoles,
    });
    const admins = fake.addRole({
      name: "Admins",
      position: 1,
      permissions: PERMISSION.Administrator,
    });
    const person = (id: string, roles: string[]) => {
      fake.addMember(id, roles);
      return id;
    };
    const may = (userId: string, purpose: "add" | "remove" = "add") =>
      membership.mayGive(target, userId, purpose);

    expect(await may(person("400000000000000001", [staff.id]))).toEqual({ ok: true });
    // The owner may, holding no role at all (nor being a listed member).
    expect(await may(DEFAULT_USER.id)).toEqual({ ok: true });
    expect(await may(person("400000000000000002", [mods.id]))).toEqual({
      ok: false,
      reason: expect.stringMatching(/^You need Manage Roles to gate @Holders\./),
    });
    expect(await may(person("400000000000000003", [juniors.id]))).toEqual({
      ok: false,
      reason: expect.stringMatching(/^You need a role above @Holders to gate it\./),
    });
    // Administrator does not lift the order of roles.
    expect(await may(person("400000000000000004", [admins.id]))).toEqual({
      ok: false,
      reason: expect.stringMatching(/^You need a role above @Holders to gate it\./),
    });
    expect(await may(person("400000000000000005", []))).toEqual({
      ok: false,
      reason: expect.stringMatching(
        /^You need Manage Roles and a role above @Holders to gate it\./,
      ),
    });
    // Someone who is not in the server has no role that counts.
    expect(await may("400000000000000099")).toMatchObject({ ok: false });
    // Removal asks the same, in its own words.
    expect(await may("400000000000000002", "remove")).toEqual({
      ok: false,
      reason: expect.stringMatching(/^You need Manage Roles to remove the gate of @Holders\./),
    });
    // A deleted role: Manage Roles is enough to remove its gate.
    fake.deleteRole(holders.id);
    expect(await may("400000000000000003", "remove")).toEqual({ ok: true });
    expect(await may("400000000000000002", "remove")).toMatchObject({ ok: false });
    // The roles, the guild's owner and the person's member were read from REST.
    expect(fake.requestsOf("getGuild").length).toBeGreaterThan(0);
    expect(
      fake.requestsOf("getMember", (r) => r.params.userId === "400000000000000001"),
    ).toHaveLength(1);
  });

  it("says to try again when Discord fails while asking who may gate", async () => {
    fake.addMember("400000000000000001");
    fake.failGuild(fake.guildId, { status: 503 });
    const may = await membership.mayGive(target, "400000000000000001", "add");
    expect(may.ok ? "" : may.reason).toContain("try again");
  });

  it("says gone for a member who left", async () => {
    expect(await membership.grant(target, HOLDER)).toEqual({ ok: true });
    fake.removeMember(HOLDER);
    expect(await membership.revoke(target, HOLDER)).toEqual({
      ok: false,
      kind: "gone",
      reason: expect.any(String),
    });
    expect(await membership.grant(target, HOLDER)).toMatchObject({ ok: false, kind: "gone" });
    expect(fake.requestsOf("removeMemberRole").at(-1)?.response).toMatchObject({ code: 10007 });
  });

  it("says transient when Discord fails", async () => {
    fake.failGuild(fake.guildId, { status: 503 });
    expect(await membership.grant(target, HOLDER)).toMatchObject({ ok: false, kind: "transient" });
    const checked = await membership.check(target);
    expect(checked.ok ? "" : checked.reason).toContain("try again");
    fake.clearFailures();
    expect(await membership.grant(target, HOLDER)).toEqual({ ok: true });
  });

  it("finds the server of a channel, none for a DM or an unknown channel, remembered", async () => {
    expect(await membership.guildOf(fake.channelId)).toBe(fake.guildId);
    expect(await membership.guildOf(fake.channelId)).toBe(fake.guildId);
    expect(
      fake.requestsOf("getChannel", (r) => r.params.channelId === fake.channelId),
    ).toHaveLength(1);
    expect(await tellOnce(sender, "discord", HOLDER, "hello")).toBe(true);
    const dm = fake.dms(HOLDER)[0]?.channel_id ?? "";
    expect(await membership.guildOf(dm)).toBeUndefined();
    expect(await membership.guildOf("123456789012345678")).toBeUndefined();
    // An outage is not "no server": it throws and is asked again next time.
    const other = fake.addChannel({ name: "other" });
    fake.failChannel(other.id, { status: 503 });
    await expect(membership.guildOf(other.id)).rejects.toThrow();
    fake.clearFailures();
    expect(await membership.guildOf(other.id)).toBe(fake.guildId);
  });

  it('tells a person in DM, and says "closed" when their DMs are closed', async () => {
    expect(await tellOnce(sender, "discord", HOLDER, "Your Holders role ends in 24 hours.")).toBe(
      true,
    );
    expect(fake.dms(HOLDER).map((m) => m.content)).toEqual(["Your Holders role ends in 24 hours."]);

    fake.closeDms(OTHER);
    expect(await tellOnce(sender, "discord", OTHER, "Your Holders role ends in 24 hours.")).toBe(
      "closed",
    );
    expect(fake.dms(OTHER)).toEqual([]);
  });
});
