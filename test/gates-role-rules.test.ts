/**
 * Discord's rule for who may give a role, and the permissions a gate's role may not carry
 * (src/adapters/discord/role-rules.ts), on roles shaped as GET /guilds/{id}/roles returns them;
 * and docs/gates.md naming the same permissions.
 */
import { readFileSync } from "node:fs";
import { type APIRole, PermissionFlagsBits } from "discord-api-types/v10";
import { describe, expect, it } from "vitest";
import {
  ELEVATED_PERMISSIONS,
  elevatedPermissionsOf,
  elevatedReason,
  missingWords,
  personStanding,
} from "../src/adapters/discord/role-rules.ts";

const GUILD = "100000000000000000";

function role(id: string, position: number, permissions: bigint, name = `role${id}`): APIRole {
  return {
    id,
    name,
    color: 0,
    colors: { primary_color: 0, secondary_color: null, tertiary_color: null },
    hoist: false,
    icon: null,
    unicode_emoji: null,
    position,
    permissions: permissions.toString(),
    managed: false,
    mentionable: false,
    flags: 0 as APIRole["flags"],
  };
}

describe("elevated permissions", () => {
  it("the report's list and the like, from PermissionFlagsBits, each named", () => {
    const flags = new Set(ELEVATED_PERMISSIONS.map((p) => p.flag));
    for (const flag of [
      PermissionFlagsBits.Administrator,
      PermissionFlagsBits.ManageGuild,
      PermissionFlagsBits.ManageRoles,
      PermissionFlagsBits.ManageChannels,
      PermissionFlagsBits.ManageWebhooks,
      PermissionFlagsBits.KickMembers,
      PermissionFlagsBits.BanMembers,
      PermissionFlagsBits.ModerateMembers,
      PermissionFlagsBits.MentionEveryone,
      PermissionFlagsBits.ManageMessages,
      PermissionFlagsBits.ManageNicknames,
      PermissionFlagsBits.ManageGuildExpressions,
      PermissionFlagsBits.ManageEvents,
      PermissionFlagsBits.ManageThreads,
      PermissionFlagsBits.ViewAuditLog,
      PermissionFlagsBits.MuteMembers,
      PermissionFlagsBits.DeafenMembers,
      PermissionFlagsBits.MoveMembers,
    ])
      expect(flags.has(flag)).toBe(true);
    // Bits as Discord numbers them (the 1<<3, 1<<40…), not the list's own.
    expect(PermissionFlagsBits.Administrator).toBe(1n << 3n);
    expect(PermissionFlagsBits.ModerateMembers).toBe(1n << 40n);
  });

  it("everyday rights are not elevated; each elevated one is named", () => {
    const everyday =
      PermissionFlagsBits.ViewChannel |
      PermissionFlagsBits.SendMessages |
      PermissionFlagsBits.AttachFiles |
      PermissionFlagsBits.EmbedLinks |
      PermissionFlagsBits.Connect |
      PermissionFlagsBits.Speak |
      PermissionFlagsBits.CreatePublicThreads |
      PermissionFlagsBits.UseExternalEmojis |
      PermissionFlagsBits.ChangeNickname;
    expect(elevatedPermissionsOf({ permissions: everyday.toString() })).toEqual([]);
    expect(elevatedReason({ name: "Holders", permissions: everyday.toString() })).toBeUndefined();
    const both = PermissionFlagsBits.KickMembers | PermissionFlagsBits.MentionEveryone | everyday;
    expect(elevatedPermissionsOf({ permissions: both.toString() })).toEqual([
      "Kick Members",
      "Mention @everyone, @here and All Roles",
    ]);
    expect(elevatedReason({ name: "Holders", permissions: both.toString() })).toMatch(
      /^@Holders carries Kick Members, Mention @everyone, @here and All Roles: /,
    );
  });

  it("docs/gates.md names every one of them", () => {
    const page = readFileSync(new URL("../docs/gates.md", import.meta.url), "utf8");
    for (const { name } of ELEVATED_PERMISSIONS) expect(page).toContain(name);
  });
});

describe("who may give a role by hand", () => {
  const everyone = role(GUILD, 0, PermissionFlagsBits.SendMessages, "@everyone");
  const top = role("100000000000000001", 3, PermissionFlagsBits.ManageRoles, "Top");
  const target = role("100000000000000002", 2, 0n, "Holders");
  const older = role("100000000000000003", 2, PermissionFlagsBits.ManageRoles, "Twin");
  const roles = [everyone, top, target, older];
  const standing = (memberRoleIds: string[], extra: Partial<{ ownerId: string }> = {}) =>
    personStanding({
      guildId: GUILD,
      ownerId: extra.ownerId,
      userId: "9",
      roles,
      memberRoleIds,
      role: target,
    });

  it("Manage Roles and a role above: may; the owner always", () => {
    expect(standing([top.id])).toEqual({ lacksManageRoles: false, notAbove: false });
    expect(standing([], { ownerId: "9" })).toEqual({ lacksManageRoles: false, notAbove: false });
    expect(standing([])).toEqual({ lacksManageRoles: true, notAbove: true });
  });

  it("on a tie of positions the older role (smaller id) is above", () => {
    // Twin shares Holders' position but is newer: it is below.
    expect(standing([older.id])).toEqual({ lacksManageRoles: false, notAbove: true });
  });

  it("Manage Roles given to @everyone counts for everyone", () => {
    const open = role(GUILD, 0, PermissionFlagsBits.ManageRoles, "@everyone");
    expect(
      personStanding({
        guildId: GUILD,
        ownerId: undefined,
        userId: "9",
        roles: [open, top, target],
        memberRoleIds: [top.id],
        role: target,
      }),
    ).toEqual({ lacksManageRoles: false, notAbove: false });
  });

  it("says what is missing in words, for adding and for removing", () => {
    expect(missingWords({ lacksManageRoles: true, notAbove: true }, "Admin", "add")).toMatch(
      /^You need Manage Roles and a role above @Admin to gate it\./,
    );
    expect(missingWords({ lacksManageRoles: true, notAbove: false }, "Admin", "remove")).toMatch(
      /^You need Manage Roles to remove the gate of @Admin\./,
    );
    expect(missingWords({ lacksManageRoles: false, notAbove: true }, "Admin", "add")).toMatch(
      /^You need a role above @Admin to gate it\./,
    );
    expect(
      missingWords({ lacksManageRoles: false, notAbove: false }, "Admin", "add"),
    ).toBeUndefined();
  });
});
