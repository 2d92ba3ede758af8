import type { REST } from "@discordjs/rest";
import {
  type APIGuild,
  type APIGuildMember,
  type APIRole,
  type APIUser,
  PermissionFlagsBits,
  Routes,
} from "discord-api-types/v10";
import { LRUCache } from "lru-cache";
import type { Logger } from "../../log.ts";
import type { GateMembership, GateTarget, MembershipResult } from "../membership.ts";
import {
  elevatedReason,
  highestRole,
  isAbove,
  memberPermissions,
  missingWords,
  personStanding,
} from "./role-rules.ts";

/**
 * Holder roles through Discord's REST API, for both Discord adapters: the gateway one passes
 * discord.js's `client.rest`, the HTTP-interactions one its own REST. Nothing here reads the
 * gateway's caches (they are trimmed, and HTTP mode has none): the roles are read when a gate is
 * added or removed, before each grant (a role that gained an elevated permission is never given)
 * and when a change is refused; the bot's member and the adder's when a gate is added.
 */

/** The audit log's reasons: a server's managers see who gave a role and why. */
const GRANT_REASON = "Gate: passes the holder criteria";
const REVOKE_REASON = "Gate: no longer passes the holder criteria";

/** Discord's JSON error codes this module tells apart. */
const UNKNOWN_GUILD = 10004;
const UNKNOWN_MEMBER = 10007;
const UNKNOWN_ROLE = 10011;
const UNKNOWN_USER = 10013;
const MISSING_ACCESS = 50001;
const MISSING_PERMISSIONS = 50013;

type RestFailure =
  | { kind: "api"; status: number; code: number; message: string }
  | { kind: "transient"; reason: string };

/**
 * What a REST call's error is, read from its fields: discord.js loads @discordjs/rest's CommonJS
 * build and this module its ESM build, so `instanceof` against one copy misses the other's errors.
 * A DiscordAPIError carries a numeric `code` and `status`; an HTTPError (a 5xx after its retries)
 * only a `status`; a RateLimitError (when the REST rejects rather than waits) a `retryAfter`; an
 * abort or a network error none of these.
 */
function readFailure(error: unknown): RestFailure {
  const { status, code, message, retryAfter } = (error ?? {}) as {
    status?: unknown;
    code?: unknown;
    message?: unknown;
    retryAfter?: unknown;
  };
  const text = typeof message === "string" ? message : String(error);
  if (typeof retryAfter === "number")
    return { kind: "transient", reason: `Discord rate limit (${retryAfter} ms)` };
  if (typeof status === "number" && typeof code === "number" && status >= 400 && status < 500)
    return status === 429
      ? { kind: "transient", reason: `Discord rate limit: ${text}` }
      : { kind: "api", status, code, message: text };
  if (typeof status === "number")
    return { kind: "transient", reason: `Discord ${status}: ${text}` };
  return { kind: "transient", reason: `Discord unreachable: ${text}` };
}

export interface DiscordGateMembershipOptions {
  rest: REST;
  logger: Logger;
  /**
   * The bot's user id when the adapter knows it (the gateway's READY); otherwise it is read once
   * with GET /users/@me.
   */
  botUserId?: () => string | undefined;
}

/** The facts a check decides on, read fresh from Discord. */
interface Standing {
  roles: APIRole[];
  botRoles: APIRole[];
  permissions: bigint;
}

/** Channels whose server is remembered: a channel never moves to another server. */
const GUILD_OF_CHANNELS = 10_000;

export class DiscordGateMembership implements GateMembership {
  readonly platform = "discord";
  private botId: string | undefined;
  private readonly guilds = new LRUCache<string, { guildId: string | undefined }>({
    max: GUILD_OF_CHANNELS,
  });

  constructor(private readonly options: DiscordGateMembershipOptions) {}

  /**
   * Whether the bot can give and take the role now: it has Manage Roles (or Administrator) through
   * its roles, and the role exists, is an ordinary one (not @everyone, not held by an
   * integration, carrying no elevated permission: role-rules.ts) and sits below the bot's highest
   * role. Each problem comes with its fix, in the words of Discord's settings. A paused gate is
   * asked again with this, so it goes on once the problem is gone.
   */
  async check(
    target: GateTarget,
  ): Promise<{ ok: true; target: GateTarget } | { ok: false; reason: string }> {
    if (target.platform !== "discord")
      return { ok: false, reason: "This gate is not for a Discord role." };
    let standing: Standing;
    try {
      standing = await this.standing(target.guildId);
    } catch (error) {
      return { ok: false, reason: rolesUnreadable(error) };
    }
    const role = standing.roles.find((r) => r.id === target.roleId);
    const name = role?.name ?? target.roleName;
    if (!role)
      return {
        ok: false,
        reason: `The role ${name} no longer exists in this server: pick another role.`,
      };
    if (role.id === target.guildId)
      return { ok: false, reason: "@everyone is everyone's: pick a role the bot can give." };
    if (role.managed)
      return {
        ok: false,
        reason: `${name} is managed by an integration (a bot, boosts or a subscription): Discord lets no one give it. Pick another role.`,
      };
    const elevated = elevatedReason(role);
    if (elevated) return { ok: false, reason: elevated };
    const fixes: string[] = [];
    const administrator = (standing.permissions & PermissionFlagsBits.Administrator) !== 0n;
    if (!administrator && (standing.permissions & PermissionFlagsBits.ManageRoles) === 0n)
      fixes.push(
        "Give the bot Manage Roles (Server Settings → Roles → the bot's role → Permissions).",
      );
    const highest = highestRole(standing.botRoles);
    if (!highest || !isAbove(highest, role))
      fixes.push(
        highest
          ? `In Server Settings → Roles, drag the bot's role (${highest.name}) above ${name}.`
          : `Give the bot a role above ${name} (Server Settings → Roles).`,
      );
    if (fixes.length > 0) return { ok: false, reason: fixes.join(" ") };
    return { ok: true, target: { ...target, roleName: role.name } };
  }

  /**
   * Discord's rule for people, applied to the person adding or removing a gate (role-rules.ts):
   * the server's owner, or Manage Roles (or Administrator) with a highest role above the gate's.
   * The roles, the person's member and the owner are read fresh from REST, in both modes.
   */
  async mayGive(
    target: GateTarget,
    userId: string,
    purpose: "add" | "remove",
  ): Promise<{ ok: true } | { ok: false; reason: string }> {
    if (target.platform !== "discord")
      return { ok: false, reason: "This gate is not for a Discord role." };
    const { rest } = this.options;
    const { guildId } = target;
    let roles: APIRole[];
    let guild: APIGuild;
    let memberRoleIds: string[];
    try {
      const [read, readGuild, member] = await Promise.all([
        rest.get(Routes.guildRoles(guildId)) as Promise<APIRole[]>,
        rest.get(Routes.guild(guildId)) as Promise<APIGuild>,
        (rest.get(Routes.guildMember(guildId, userId)) as Promise<APIGuildMember>).catch(
          (error: unknown) => {
            const failure = readFailure(error);
            // Not (or no longer) a member: no role of theirs counts.
            if (failure.kind === "api" && failure.code === UNKNOWN_MEMBER) return undefined;
            throw error;
          },
        ),
      ]);
      roles = read;
      guild = readGuild;
      memberRoleIds = member?.roles ?? [];
    } catch (error) {
      return { ok: false, reason: rolesUnreadable(error) };
    }
    const role = roles.find((r) => r.id === target.roleId);
    const standing = personStanding({
      guildId,
      ownerId: guild.owner_id,
      userId,
      roles,
      memberRoleIds,
      role,
    });
    const missing = missingWords(standing, role?.name ?? target.roleName, purpose);
    return missing ? { ok: false, reason: missing } : { ok: true };
  }

  /**
   * Gives the role, after reading it again: one deleted, or one that gained an elevated
   * permission since the gate was added, is refused (the gate pauses with the reason) and never
   * given. One GET of the roles a grant; grants follow proofs, so they are few.
   */
  async grant(target: GateTarget, userId: string, signal?: AbortSignal): Promise<MembershipResult> {
    if (target.platform === "discord") {
      const safe = await this.grantable(target, signal);
      if (!safe.ok) return safe;
    }
    return this.change("put", target, userId, GRANT_REASON, signal);
  }

  revoke(target: GateTarget, userId: string, signal?: AbortSignal): Promise<MembershipResult> {
    return this.change("delete", target, userId, REVOKE_REASON, signal);
  }

  /**
   * The server a channel belongs to, undefined for a DM (or a channel the bot cannot see): a
   * wallet proved from /verify in a channel is checked against that server's gates. A failure to
   * reach Discord throws, so it is not remembered as "no server".
   */
  async guildOf(channelId: string): Promise<string | undefined> {
    const known = this.guilds.get(channelId);
    if (known) return known.guildId;
    let guildId: string | undefined;
    try {
      const channel = (await this.options.rest.get(Routes.channel(channelId))) as {
        guild_id?: string;
      };
      guildId = channel.guild_id;
    } catch (error) {
      const failure = readFailure(error);
      if (failure.kind === "transient") throw error;
      guildId = undefined;
    }
    this.guilds.set(channelId, { guildId });
    return guildId;
  }

  private async change(
    method: "put" | "delete",
    target: GateTarget,
    userId: string,
    reason: string,
    signal?: AbortSignal,
  ): Promise<MembershipResult> {
    if (target.platform !== "discord")
      return { ok: false, kind: "refused", reason: "This gate is not for a Discord role." };
    try {
      await this.options.rest[method](
        Routes.guildMemberRole(target.guildId, userId, target.roleId),
        { reason, ...(signal ? { signal } : {}) },
      );
      return { ok: true };
    } catch (error) {
      const failure = readFailure(error);
      if (failure.kind === "transient")
        return { ok: false, kind: "transient", reason: failure.reason };
      switch (failure.code) {
        case UNKNOWN_MEMBER:
        case UNKNOWN_USER:
          return { ok: false, kind: "gone", reason: "No longer in the server." };
        case UNKNOWN_ROLE:
          return {
            ok: false,
            kind: "refused",
            reason: `The role ${target.roleName} was deleted from the server.`,
          };
        case UNKNOWN_GUILD:
          return { ok: false, kind: "refused", reason: "The bot is no longer in the server." };
        case MISSING_PERMISSIONS:
        case MISSING_ACCESS:
          return { ok: false, kind: "refused", reason: await this.refusal(target) };
        default:
          return {
            ok: false,
            kind: "refused",
            reason: `Discord refused to change ${target.roleName}: ${failure.message}.`,
          };
      }
    }
  }

  /** The role as it is now may be given: it exists and carries no elevated permission. */
  private async grantable(
    target: GateTarget & { platform: "discord" },
    signal?: AbortSignal,
  ): Promise<{ ok: true } | Exclude<MembershipResult, { ok: true }>> {
    let roles: APIRole[];
    try {
      roles = (await this.options.rest.get(
        Routes.guildRoles(target.guildId),
        signal ? { signal } : {},
      )) as APIRole[];
    } catch (error) {
      const failure = readFailure(error);
      if (failure.kind === "transient")
        return { ok: false, kind: "transient", reason: failure.reason };
      if (failure.code === UNKNOWN_GUILD || failure.code === MISSING_ACCESS)
        return { ok: false, kind: "refused", reason: "The bot is no longer in the server." };
      return {
        ok: false,
        kind: "refused",
        reason: `Discord refused to show the server's roles: ${failure.message}.`,
      };
    }
    const role = roles.find((r) => r.id === target.roleId);
    if (!role)
      return {
        ok: false,
        kind: "refused",
        reason: `The role ${target.roleName} was deleted from the server.`,
      };
    const elevated = elevatedReason(role);
    if (elevated) return { ok: false, kind: "refused", reason: elevated };
    return { ok: true };
  }

  /**
   * Why Discord said Missing Permissions, in words a manager can act on: the check again, which
   * names the lost right or the role moved above the bot's. A paused gate shows this.
   */
  private async refusal(target: GateTarget & { platform: "discord" }): Promise<string> {
    const generic = `Discord refused to change ${target.roleName}: give the bot Manage Roles and keep its role above ${target.roleName}.`;
    const checked = await this.check(target).catch(() => undefined);
    return checked && !checked.ok ? checked.reason : generic;
  }

  private async standing(guildId: string): Promise<Standing> {
    const { rest } = this.options;
    const botId = await this.botUserId();
    const [roles, member] = (await Promise.all([
      rest.get(Routes.guildRoles(guildId)),
      rest.get(Routes.guildMember(guildId, botId)),
    ])) as [APIRole[], APIGuildMember];
    const botRoles = roles.filter((r) => member.roles.includes(r.id));
    // @everyone (whose id is the guild's) gives its permissions to every member.
    return { roles, botRoles, permissions: memberPermissions(guildId, roles, member.roles) };
  }

  private async botUserId(): Promise<string> {
    const known = this.botId ?? this.options.botUserId?.();
    if (known) return known;
    const me = (await this.options.rest.get(Routes.user("@me"))) as APIUser;
    this.botId = me.id;
    return me.id;
  }
}

/** Why the server's roles could not be read, in words for the person who asked (add, remove). */
function rolesUnreadable(error: unknown): string {
  const failure = readFailure(error);
  if (failure.kind === "transient")
    return `Discord did not answer (${failure.reason}): try again in a moment.`;
  if (failure.code === UNKNOWN_GUILD || failure.code === MISSING_ACCESS)
    return "The bot is not in this server: invite it again.";
  return `Discord refused to show the server's roles: ${failure.message}.`;
}
