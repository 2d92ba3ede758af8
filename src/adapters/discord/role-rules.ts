import { type APIRole, PermissionFlagsBits } from "discord-api-types/v10";

/**
 * Discord's rules for who may give a role, as the gates apply them (issue 34): the bot acts for
 * people and must never let them do through it what they could not do by hand, nor hand out
 * moderator or admin rights to whoever proves a wallet. Pure functions over what REST returns
 * (GET /guilds/{id}/roles, a member's role ids, the guild's owner_id); docs/gates.md lists the same
 * permissions.
 */

/**
 * Permissions a gate's role may not carry: each lets its holder act on other people, the server's
 * settings or its audit trail. A gate gives its role to anyone whose wallet passes, so such a role
 * would sell moderation for an NFT. Names as Server Settings → Roles shows them.
 */
export const ELEVATED_PERMISSIONS: readonly { readonly flag: bigint; readonly name: string }[] = [
  { flag: PermissionFlagsBits.Administrator, name: "Administrator" },
  { flag: PermissionFlagsBits.ManageGuild, name: "Manage Server" },
  { flag: PermissionFlagsBits.ManageRoles, name: "Manage Roles" },
  { flag: PermissionFlagsBits.ManageChannels, name: "Manage Channels" },
  { flag: PermissionFlagsBits.ManageWebhooks, name: "Manage Webhooks" },
  { flag: PermissionFlagsBits.ManageGuildExpressions, name: "Manage Expressions" },
  { flag: PermissionFlagsBits.ManageEvents, name: "Manage Events" },
  { flag: PermissionFlagsBits.ManageThreads, name: "Manage Threads" },
  { flag: PermissionFlagsBits.ManageMessages, name: "Manage Messages" },
  { flag: PermissionFlagsBits.PinMessages, name: "Pin Messages" },
  { flag: PermissionFlagsBits.ManageNicknames, name: "Manage Nicknames" },
  { flag: PermissionFlagsBits.KickMembers, name: "Kick Members" },
  { flag: PermissionFlagsBits.BanMembers, name: "Ban Members" },
  { flag: PermissionFlagsBits.ModerateMembers, name: "Timeout Members" },
  { flag: PermissionFlagsBits.MuteMembers, name: "Mute Members" },
  { flag: PermissionFlagsBits.DeafenMembers, name: "Deafen Members" },
  { flag: PermissionFlagsBits.MoveMembers, name: "Move Members" },
  { flag: PermissionFlagsBits.MentionEveryone, name: "Mention @everyone, @here and All Roles" },
  { flag: PermissionFlagsBits.BypassSlowmode, name: "Bypass Slowmode" },
  { flag: PermissionFlagsBits.ViewAuditLog, name: "View Audit Log" },
  { flag: PermissionFlagsBits.ViewGuildInsights, name: "View Server Insights" },
  {
    flag: PermissionFlagsBits.ViewCreatorMonetizationAnalytics,
    name: "View Server Subscription Insights",
  },
];

/** The elevated permissions a role's own bits carry, by name (empty: the role may be gated). */
export function elevatedPermissionsOf(role: Pick<APIRole, "permissions">): string[] {
  const bits = BigInt(role.permissions);
  return ELEVATED_PERMISSIONS.filter(({ flag }) => (bits & flag) !== 0n).map(({ name }) => name);
}

/** Why a gate may not give this role, or undefined when it may. */
export function elevatedReason(role: Pick<APIRole, "name" | "permissions">): string | undefined {
  const names = elevatedPermissionsOf(role);
  if (names.length === 0) return undefined;
  return `@${role.name} carries ${names.join(", ")}: a gate gives its role to anyone whose wallet passes, so it may not give moderator or admin rights. Pick a role without them, or take them off @${role.name} (Server Settings → Roles → ${role.name} → Permissions).`;
}

/** Discord orders roles by position, then by id (the older role is higher on a tie). */
export function isAbove(a: APIRole, b: APIRole): boolean {
  if (a.position !== b.position) return a.position > b.position;
  return BigInt(a.id) < BigInt(b.id);
}

export function highestRole(roles: readonly APIRole[]): APIRole | undefined {
  let top: APIRole | undefined;
  for (const role of roles) if (!top || isAbove(role, top)) top = role;
  return top;
}

/** A member's server-wide permissions: @everyone's (its id is the guild's) and their roles'. */
export function memberPermissions(
  guildId: string,
  roles: readonly APIRole[],
  memberRoleIds: readonly string[],
): bigint {
  let permissions = BigInt(roles.find((r) => r.id === guildId)?.permissions ?? "0");
  for (const role of roles)
    if (memberRoleIds.includes(role.id)) permissions |= BigInt(role.permissions);
  return permissions;
}

/** What keeps a person from giving a role by hand; both false: they may. */
export interface PersonStanding {
  /** Neither Manage Roles nor Administrator from their roles (nor the ownership). */
  lacksManageRoles: boolean;
  /** Their highest role is not above the role (the owner is above every role). */
  notAbove: boolean;
}

/**
 * Discord's rule for people giving a role: the owner may give any; anyone else needs Manage Roles
 * (Administrator includes it) from @everyone or their roles, and a highest role above it.
 * Administrator does not lift the order: an admin cannot give a role above their own either.
 * `role` undefined (deleted): only the right is asked for.
 */
export function personStanding(input: {
  guildId: string;
  ownerId: string | undefined;
  userId: string;
  roles: readonly APIRole[];
  memberRoleIds: readonly string[];
  role: APIRole | undefined;
}): PersonStanding {
  if (input.ownerId !== undefined && input.userId === input.ownerId)
    return { lacksManageRoles: false, notAbove: false };
  const permissions = memberPermissions(input.guildId, input.roles, input.memberRoleIds);
  const lacksManageRoles =
    (permissions & (PermissionFlagsBits.Administrator | PermissionFlagsBits.ManageRoles)) === 0n;
  const top = highestRole(input.roles.filter((r) => input.memberRoleIds.includes(r.id)));
  const notAbove = input.role !== undefined && (!top || !isAbove(top, input.role));
  return { lacksManageRoles, notAbove };
}

/**
 * Plain words for what a person lacks to add (or remove) the gate of `roleName`, e.g. "You need
 * Manage Roles and a role above @Admin to gate it."; undefined when nothing is missing.
 */
export function missingWords(
  standing: PersonStanding,
  roleName: string,
  purpose: "add" | "remove",
): string | undefined {
  const { lacksManageRoles, notAbove } = standing;
  if (!lacksManageRoles && !notAbove) return undefined;
  const role = `@${roleName}`;
  const what =
    purpose === "add"
      ? { both: "to gate it", one: `to gate ${role}` }
      : { both: "to remove its gate", one: `to remove the gate of ${role}` };
  const tail =
    "Discord lets people give only roles below their own highest one, and only with Manage Roles; a gate may do no more for its adder.";
  if (lacksManageRoles && notAbove)
    return `You need Manage Roles and a role above ${role} ${what.both}. ${tail}`;
  if (lacksManageRoles) return `You need Manage Roles ${what.one}. ${tail}`;
  return `You need a role above ${role} ${what.both}. ${tail}`;
}
