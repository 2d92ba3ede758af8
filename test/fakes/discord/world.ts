import { generateKeyPairSync, type KeyObject } from "node:crypto";
import type {
  APIApplicationCommand,
  APIApplicationCommandAutocompleteInteraction,
  APIApplicationCommandInteractionDataOption,
  APIApplicationCommandOption,
  APIAttachment,
  APIChatInputApplicationCommandInteraction,
  APIEmbed,
  APIEmoji,
  APIGuild,
  APIGuildMember,
  APIInteraction,
  APIInteractionDataResolved,
  APIInteractionGuildMember,
  APIMessage,
  APIMessageComponentButtonInteraction,
  APIRole,
  APISticker,
  APITextChannel,
  APIUser,
  ChannelFlags,
  GatewayGuildCreateDispatchData,
  GuildMemberFlags,
  GuildSystemChannelFlags,
  Locale,
  RoleFlags,
  StickerFormatType,
  StickerType,
  UserFlags,
} from "discord.js";
import { randomToken, snowflake } from "./snowflake.ts";

/** A file part of a multipart request. */
export interface RecordedFile {
  /** The form field, e.g. `files[0]`. */
  field: string;
  filename: string;
  contentType: string;
  data: Buffer;
}

export interface FakeUserInput {
  id?: string;
  username?: string;
  globalName?: string | null;
}

export interface FakeChannelInput {
  id?: string;
  name: string;
  /** 0 text (default) or 5 announcement. */
  type?: 0 | 5;
}

export interface FakeGuildInput {
  id?: string;
  name?: string;
  channels?: FakeChannelInput[];
  /** Roles besides @everyone, custom emojis and stickers GUILD_CREATE carries; default none. */
  roles?: number;
  emojis?: number;
  stickers?: number;
}

/**
 * `count` guilds shaped like a live community server: `channels` text channels and `roles`,
 * `emojis`, `stickers` (defaults: 20, 15, 10, 2), for measuring what a client keeps of them.
 */
export function populatedGuilds(
  count: number,
  shape: { channels?: number; roles?: number; emojis?: number; stickers?: number } = {},
): FakeGuildInput[] {
  const channels = Array.from({ length: shape.channels ?? 20 }, (_, i) => ({
    name: i === 0 ? "general" : `channel-${i}`,
  }));
  return Array.from({ length: count }, (_, i) => ({
    name: `Community ${i + 1}`,
    channels,
    roles: shape.roles ?? 15,
    emojis: shape.emojis ?? 10,
    stickers: shape.stickers ?? 2,
  }));
}

export interface FakeChannel {
  id: string;
  name: string;
  type: 0 | 5;
  guildId: string;
  position: number;
}

/** A role besides @everyone (whose id is the guild's, position 0, kept in `everyonePermissions`). */
export interface FakeRole {
  id: string;
  name: string;
  /** Higher is above; @everyone is 0. */
  position: number;
  permissions: bigint;
  /** Held by an integration (a bot's own role, the booster role): no one can give it. */
  managed: boolean;
}

export interface FakeRoleInput {
  id?: string;
  name: string;
  /** Default: above every role so far. */
  position?: number;
  permissions?: bigint;
  managed?: boolean;
}

/** A member of a guild and the roles they hold (@everyone implied). */
export interface FakeMember {
  userId: string;
  roles: string[];
  joinedAt: string;
}

export interface FakeGuild {
  id: string;
  name: string;
  ownerId: string;
  joinedAt: string;
  channels: FakeChannel[];
  roles: FakeRole[];
  everyonePermissions: bigint;
  /** The bot is always a member (with no role until given one); people are added by tests. */
  members: Map<string, FakeMember>;
  emojiIds: string[];
  stickerIds: string[];
}

/** Permission bits as Discord sends them (a decimal string of a 64-bit field). */
export const PERMISSION = {
  AddReactions: 1n << 6n,
  ViewChannel: 1n << 10n,
  SendMessages: 1n << 11n,
  EmbedLinks: 1n << 14n,
  AttachFiles: 1n << 15n,
  ReadMessageHistory: 1n << 16n,
  UseExternalEmojis: 1n << 18n,
  ManageChannels: 1n << 4n,
  ManageRoles: 1n << 28n,
  ManageGuild: 1n << 5n,
  Administrator: 1n << 3n,
  UseApplicationCommands: 1n << 31n,
  SendMessagesInThreads: 1n << 38n,
} as const;

/** What an ordinary member may do in an ordinary channel: no Manage Server, no Manage Channels. */
export const MEMBER_PERMISSIONS =
  PERMISSION.AddReactions |
  PERMISSION.ViewChannel |
  PERMISSION.SendMessages |
  PERMISSION.EmbedLinks |
  PERMISSION.AttachFiles |
  PERMISSION.ReadMessageHistory |
  PERMISSION.UseExternalEmojis |
  PERMISSION.UseApplicationCommands |
  PERMISSION.SendMessagesInThreads;

export const BOT_PERMISSIONS = MEMBER_PERMISSIONS;

/** What the owner and an Administrator have: every bit. */
const ALL_PERMISSIONS = (1n << 53n) - 1n;

export const DEFAULT_USER: Required<FakeUserInput> = {
  id: "200000000000000001",
  username: "tester",
  globalName: "Tester",
};

/** Where an interaction happens and who makes it. */
export interface InteractionContext {
  /** A guild id, or `null` for a DM with the bot; default: the first guild. */
  guildId?: string | null;
  /** Default: the first channel of the guild (or a DM channel). */
  channelId?: string;
  user?: FakeUserInput;
  /** The invoking member's permissions in the channel (ignored in DMs). */
  memberPermissions?: bigint | string;
  /** The bot's permissions in the channel. */
  appPermissions?: bigint | string;
  locale?: string;
}

export interface ButtonClickContext extends InteractionContext {
  /** The message the button sits under; default: the newest stored message carrying the id. */
  message?: APIMessage;
}

export type OptionValue = string | number | boolean | OptionRecord;
export interface OptionRecord {
  [name: string]: OptionValue;
}

export type ApplicationCommandOptionInput =
  | OptionRecord
  | APIApplicationCommandInteractionDataOption[];

export interface InteractionRecord {
  payload: APIInteraction;
  id: string;
  token: string;
  channelId: string;
  guildId: string | null;
  createdAt: number;
  /** The callback type Discord accepted, once acknowledged. */
  responseType?: number;
  /** The `@original` message: the reply, or for component interactions the clicked message. */
  originalMessageId?: string;
}

/** The fake's state: guilds, channels, messages, commands and the interactions in flight. */
export class World {
  readonly applicationId: string;
  readonly token: string;
  /**
   * The application's Ed25519 key pair, made for this fake alone (never written anywhere): Discord
   * signs what it POSTs to an Interactions Endpoint URL with it, and shows the public half as
   * `verify_key` (hex).
   */
  readonly signingKey: KeyObject;
  readonly publicKeyHex: string;
  readonly botUser: APIUser;
  readonly guilds = new Map<string, FakeGuild>();
  readonly channels = new Map<string, FakeChannel>();
  readonly messages = new Map<string, APIMessage>();
  readonly interactions = new Map<string, InteractionRecord>();
  readonly interactionsByToken = new Map<string, InteractionRecord>();
  globalCommands: APIApplicationCommand[] = [];
  /** The bot's DM channels: channel id → the person's user id. */
  readonly dmChannels = new Map<string, string>();
  /** People who turned off DMs from server members (a send to them gets 50007). */
  readonly closedDms = new Set<string>();
  readonly guildCommands = new Map<string, APIApplicationCommand[]>();

  constructor(options: {
    applicationId?: string;
    token: string;
    botName?: string;
    guilds?: FakeGuildInput[];
  }) {
    this.applicationId = options.applicationId ?? snowflake();
    this.token = options.token;
    const { privateKey, publicKey } = generateKeyPairSync("ed25519");
    this.signingKey = privateKey;
    this.publicKeyHex = Buffer.from(
      publicKey.export({ format: "jwk" }).x ?? "",
      "base64url",
    ).toString("hex");
    this.botUser = {
      id: this.applicationId,
      username: options.botName ?? "FakeBot",
      discriminator: "0000",
      global_name: null,
      avatar: null,
      bot: true,
      flags: 0 as UserFlags,
      public_flags: 0 as UserFlags,
    };
    const guilds = options.guilds ?? [{ name: "Fake Guild", channels: [{ name: "general" }] }];
    for (const guild of guilds) this.addGuild(guild);
  }

  addGuild(input: FakeGuildInput): FakeGuild {
    const guild: FakeGuild = {
      id: input.id ?? snowflake(),
      name: input.name ?? "Fake Guild",
      ownerId: DEFAULT_USER.id,
      joinedAt: new Date().toISOString(),
      channels: [],
      roles: Array.from({ length: input.roles ?? 0 }, (_, i) => ({
        id: snowflake(),
        name: `Role ${i + 1}`,
        position: i + 1,
        permissions: 0n,
        managed: false,
      })),
      everyonePermissions: MEMBER_PERMISSIONS,
      members: new Map(),
      emojiIds: Array.from({ length: input.emojis ?? 0 }, () => snowflake()),
      stickerIds: Array.from({ length: input.stickers ?? 0 }, () => snowflake()),
    };
    guild.members.set(this.botUser.id, {
      userId: this.botUser.id,
      roles: [],
      joinedAt: guild.joinedAt,
    });
    this.guilds.set(guild.id, guild);
    for (const channel of input.channels ?? [{ name: "general" }])
      this.addChannel(guild.id, channel);
    return guild;
  }

  addChannel(guildId: string, input: FakeChannelInput): FakeChannel {
    const guild = this.guilds.get(guildId);
    if (!guild) throw new Error(`fake Discord: no guild ${guildId}`);
    const channel: FakeChannel = {
      id: input.id ?? snowflake(),
      name: input.name,
      type: input.type ?? 0,
      guildId,
      position: guild.channels.length,
    };
    guild.channels.push(channel);
    this.channels.set(channel.id, channel);
    return channel;
  }

  guild(guildId: string): FakeGuild {
    const guild = this.guilds.get(guildId);
    if (!guild) throw new Error(`fake Discord: no guild ${guildId}`);
    return guild;
  }

  addRole(guildId: string, input: FakeRoleInput): FakeRole {
    const guild = this.guild(guildId);
    const role: FakeRole = {
      id: input.id ?? snowflake(),
      name: input.name,
      position: input.position ?? Math.max(0, ...guild.roles.map((r) => r.position)) + 1,
      permissions: input.permissions ?? 0n,
      managed: input.managed ?? false,
    };
    guild.roles.push(role);
    return role;
  }

  /** Changes a role in place (a move in Server Settings → Roles, a permission taken away). */
  editRole(guildId: string, roleId: string, change: Partial<Omit<FakeRole, "id">>): FakeRole {
    const role = this.guild(guildId).roles.find((r) => r.id === roleId);
    if (!role) throw new Error(`fake Discord: no role ${roleId} in guild ${guildId}`);
    Object.assign(role, change);
    return role;
  }

  deleteRole(guildId: string, roleId: string): void {
    const guild = this.guild(guildId);
    guild.roles = guild.roles.filter((r) => r.id !== roleId);
    for (const member of guild.members.values())
      member.roles = member.roles.filter((id) => id !== roleId);
  }

  addMember(guildId: string, userId: string, roles: string[] = []): FakeMember {
    const member = { userId, roles: [...roles], joinedAt: new Date().toISOString() };
    this.guild(guildId).members.set(userId, member);
    return member;
  }

  removeMember(guildId: string, userId: string): void {
    this.guild(guildId).members.delete(userId);
  }

  /** The permissions a member has from @everyone and their roles (channel overwrites aside). */
  memberPermissions(guildId: string, userId: string): bigint {
    const guild = this.guild(guildId);
    if (guild.ownerId === userId) return ALL_PERMISSIONS;
    const member = guild.members.get(userId);
    let permissions = guild.everyonePermissions;
    for (const role of guild.roles)
      if (member?.roles.includes(role.id)) permissions |= role.permissions;
    return (permissions & PERMISSION.Administrator) !== 0n ? ALL_PERMISSIONS : permissions;
  }

  /** The position of a member's highest role (0: @everyone alone). */
  highestPosition(guildId: string, userId: string): number {
    const guild = this.guild(guildId);
    const held = guild.members.get(userId)?.roles ?? [];
    return Math.max(0, ...guild.roles.filter((r) => held.includes(r.id)).map((r) => r.position));
  }

  rolePayload(role: FakeRole): APIRole {
    return {
      ...this.role(role.id, role.name, role.position, role.permissions),
      managed: role.managed,
      ...(role.managed ? { tags: { integration_id: role.id } } : {}),
    };
  }

  rolesPayload(guild: FakeGuild): APIRole[] {
    return [
      this.role(guild.id, "@everyone", 0, guild.everyonePermissions),
      ...guild.roles.map((r) => this.rolePayload(r)),
    ];
  }

  memberPayload(member: FakeMember): APIGuildMember {
    const isBot = member.userId === this.botUser.id;
    return {
      user: isBot ? this.botUser : this.user({ id: member.userId }),
      nick: null,
      avatar: null,
      banner: null,
      roles: [...member.roles],
      joined_at: member.joinedAt,
      premium_since: null,
      deaf: false,
      mute: false,
      flags: 0 as GuildMemberFlags,
      pending: false,
      communication_disabled_until: null,
    };
  }

  /** The bot's DM channel with a person, made on first use as Discord does. */
  dmChannel(userId: string): string {
    for (const [channelId, recipient] of this.dmChannels)
      if (recipient === userId) return channelId;
    const channelId = snowflake();
    this.dmChannels.set(channelId, userId);
    return channelId;
  }

  get defaultGuild(): FakeGuild {
    const first = this.guilds.values().next().value;
    if (!first) throw new Error("fake Discord: no guild configured");
    return first;
  }

  get defaultChannel(): FakeChannel {
    const first = this.defaultGuild.channels[0];
    if (!first) throw new Error("fake Discord: the first guild has no channel");
    return first;
  }

  // ---- payload builders -------------------------------------------------------------------

  channelPayload(channel: FakeChannel): APITextChannel {
    return {
      id: channel.id,
      type: channel.type as 0,
      guild_id: channel.guildId,
      name: channel.name,
      position: channel.position,
      permission_overwrites: [],
      parent_id: null,
      topic: null,
      nsfw: false,
      rate_limit_per_user: 0,
      last_message_id: null,
      flags: 0 as ChannelFlags,
    };
  }

  everyoneRole(guildId: string): APIRole {
    return this.role(guildId, "@everyone", 0, MEMBER_PERMISSIONS);
  }

  role(id: string, name: string, position: number, permissions: bigint): APIRole {
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
      flags: 0 as RoleFlags,
    };
  }

  emoji(id: string, index: number): APIEmoji {
    return {
      id,
      name: `emoji_${index}`,
      roles: [],
      user: this.user(),
      require_colons: true,
      managed: false,
      animated: index % 3 === 0,
      available: true,
    };
  }

  sticker(guildId: string, id: string, index: number): APISticker {
    return {
      id,
      name: `sticker ${index}`,
      description: `A sticker of the server, number ${index}`,
      tags: "smile",
      type: 2 as StickerType.Guild,
      format_type: 1 as StickerFormatType.PNG,
      available: true,
      guild_id: guildId,
      user: this.user(),
      sort_value: index,
    };
  }

  /** GET /guilds/{id}: the guild object (its owner_id, its roles), without GUILD_CREATE's extras. */
  guildPayload(guild: FakeGuild): APIGuild {
    const {
      joined_at: _joinedAt,
      large: _large,
      unavailable: _unavailable,
      member_count: _memberCount,
      voice_states: _voiceStates,
      members: _members,
      channels: _channels,
      threads: _threads,
      presences: _presences,
      stage_instances: _stageInstances,
      guild_scheduled_events: _events,
      soundboard_sounds: _sounds,
      ...rest
    } = this.guildCreate(guild);
    return rest;
  }

  /** GUILD_CREATE as the Guilds intent delivers it after READY. */
  guildCreate(guild: FakeGuild): GatewayGuildCreateDispatchData {
    return {
      id: guild.id,
      name: guild.name,
      icon: null,
      splash: null,
      discovery_splash: null,
      banner: null,
      description: null,
      owner_id: guild.ownerId,
      afk_channel_id: null,
      afk_timeout: 300,
      verification_level: 0,
      default_message_notifications: 1,
      explicit_content_filter: 0,
      roles: this.rolesPayload(guild),
      emojis: guild.emojiIds.map((id, i) => this.emoji(id, i)),
      stickers: guild.stickerIds.map((id, i) => this.sticker(guild.id, id, i)),
      features: [],
      mfa_level: 0,
      application_id: null,
      system_channel_id: null,
      system_channel_flags: 0 as GuildSystemChannelFlags,
      rules_channel_id: null,
      public_updates_channel_id: null,
      safety_alerts_channel_id: null,
      vanity_url_code: null,
      premium_tier: 0,
      premium_subscription_count: 0,
      premium_progress_bar_enabled: false,
      preferred_locale: "en-US" as Locale,
      nsfw_level: 0,
      hub_type: null,
      max_members: 500000,
      max_video_channel_users: 25,
      incidents_data: null,
      joined_at: guild.joinedAt,
      large: false,
      unavailable: false,
      member_count: 2,
      voice_states: [],
      members: [
        this.memberPayload({
          userId: this.botUser.id,
          roles: guild.members.get(this.botUser.id)?.roles ?? [],
          joinedAt: guild.joinedAt,
        }),
      ],
      channels: guild.channels.map((c) => this.channelPayload(c)),
      threads: [],
      presences: [],
      stage_instances: [],
      guild_scheduled_events: [],
      soundboard_sounds: [],
    };
  }

  user(input: FakeUserInput = {}): APIUser {
    const id = input.id ?? DEFAULT_USER.id;
    const isDefault = id === DEFAULT_USER.id;
    return {
      id,
      username: input.username ?? (isDefault ? DEFAULT_USER.username : `user${id.slice(-6)}`),
      discriminator: "0",
      global_name:
        input.globalName === undefined
          ? isDefault
            ? DEFAULT_USER.globalName
            : null
          : input.globalName,
      avatar: null,
      public_flags: 0 as UserFlags,
      flags: 0 as UserFlags,
      banner: null,
      accent_color: null,
    };
  }

  private member(
    user: APIUser,
    permissions: bigint | string,
    roles: readonly string[] = [],
  ): APIInteractionGuildMember {
    return {
      user,
      nick: null,
      avatar: null,
      banner: null,
      roles: [...roles],
      joined_at: "2024-01-01T00:00:00.000000+00:00",
      premium_since: null,
      deaf: false,
      mute: false,
      flags: 0 as GuildMemberFlags,
      pending: false,
      communication_disabled_until: null,
      permissions: permissions.toString(),
    };
  }

  /** The fields every interaction carries, for a guild channel or a DM. */
  private base(ctx: InteractionContext) {
    const guildId = ctx.guildId === undefined ? this.defaultGuild.id : ctx.guildId;
    const user = this.user(ctx.user);
    const id = snowflake();
    const token = `aW50ZXJhY3Rpb246${id}:${randomToken(48)}`;
    const common = {
      id,
      application_id: this.applicationId,
      token,
      version: 1 as const,
      app_permissions: (ctx.appPermissions ?? BOT_PERMISSIONS).toString(),
      locale: (ctx.locale ?? "en-US") as Locale,
      entitlements: [],
      attachment_size_limit: 10 * 1024 * 1024,
    };
    if (guildId === null) {
      const channelId = ctx.channelId ?? snowflake();
      return {
        ...common,
        channel: {
          id: channelId,
          type: 1 as const,
          recipients: [user],
          last_message_id: null,
          flags: 0,
        },
        channel_id: channelId,
        user,
        authorizing_integration_owners: { "0": "0" },
        context: 1 as const,
      };
    }
    const guild = this.guilds.get(guildId);
    const channel =
      ctx.channelId === undefined ? guild?.channels[0] : this.channels.get(ctx.channelId);
    const channelId = ctx.channelId ?? channel?.id ?? snowflake();
    const channelPayload = channel
      ? this.channelPayload(channel)
      : { id: channelId, type: 0 as const, guild_id: guildId, name: "unknown", position: 0 };
    return {
      ...common,
      guild: { id: guildId, locale: "en-US" as Locale, features: [] },
      guild_id: guildId,
      guild_locale: "en-US" as Locale,
      channel: {
        ...channelPayload,
        permissions: (ctx.memberPermissions ?? MEMBER_PERMISSIONS).toString(),
      },
      channel_id: channelId,
      // The roles a member of the fake guild holds, as Discord sends them with each interaction.
      member: this.member(
        user,
        ctx.memberPermissions ?? MEMBER_PERMISSIONS,
        guild?.members.get(user.id)?.roles ?? [],
      ),
      authorizing_integration_owners: { "0": guildId },
      context: 0 as const,
    };
  }

  findCommand(name: string, guildId: string | null): APIApplicationCommand | undefined {
    const inGuild = guildId ? this.guildCommands.get(guildId) : undefined;
    return (
      inGuild?.find((c) => c.name === name && (c.type ?? 1) === 1) ??
      this.globalCommands.find((c) => c.name === name && (c.type ?? 1) === 1)
    );
  }

  /** A slash command (type 2) with options typed from the registered command when there is one. */
  slashCommand(
    name: string,
    options: ApplicationCommandOptionInput = {},
    ctx: InteractionContext = {},
  ): APIChatInputApplicationCommandInteraction {
    const base = this.base(ctx);
    const guildId = "guild_id" in base ? base.guild_id : null;
    const command = this.findCommand(name, guildId);
    const resolved: APIInteractionDataResolved = {};
    const dataOptions = Array.isArray(options)
      ? options
      : this.dataOptions(`/${name}`, options, command?.options, resolved, guildId, undefined);
    return {
      ...base,
      type: 2,
      data: {
        id: command?.id ?? snowflake(),
        name,
        type: 1,
        ...(command?.guild_id ? { guild_id: command.guild_id } : {}),
        ...(dataOptions.length > 0 ? { options: dataOptions } : {}),
        ...(Object.keys(resolved).length > 0 ? { resolved } : {}),
      },
    } as APIChatInputApplicationCommandInteraction;
  }

  /** An autocomplete request (type 4): `focused` names the option being typed, as a string. */
  autocomplete(
    name: string,
    options: OptionRecord,
    focused: string,
    ctx: InteractionContext = {},
  ): APIApplicationCommandAutocompleteInteraction {
    const base = this.base(ctx);
    const guildId = "guild_id" in base ? base.guild_id : null;
    const command = this.findCommand(name, guildId);
    const resolved: APIInteractionDataResolved = {};
    const dataOptions = this.dataOptions(
      `/${name}`,
      options,
      command?.options,
      resolved,
      guildId,
      focused,
    );
    if (!JSON.stringify(dataOptions).includes('"focused":true')) {
      throw new Error(`fake Discord: autocomplete for /${name} has no option "${focused}"`);
    }
    return {
      ...base,
      type: 4,
      data: {
        id: command?.id ?? snowflake(),
        name,
        type: 1,
        ...(command?.guild_id ? { guild_id: command.guild_id } : {}),
        options: dataOptions,
      },
    } as APIApplicationCommandAutocompleteInteraction;
  }

  /** A button click (type 3, component_type 2) on a stored message carrying `customId`. */
  buttonClick(
    customId: string,
    ctx: ButtonClickContext = {},
  ): APIMessageComponentButtonInteraction {
    const message = ctx.message ?? this.findMessageWithButton(customId, ctx.channelId) ?? undefined;
    const channelId = ctx.channelId ?? message?.channel_id;
    const guildId =
      ctx.guildId !== undefined
        ? ctx.guildId
        : channelId && this.channels.has(channelId)
          ? (this.channels.get(channelId)?.guildId ?? null)
          : undefined;
    const base = this.base({
      ...ctx,
      ...(channelId === undefined ? {} : { channelId }),
      ...(guildId === undefined ? {} : { guildId }),
    });
    const clicked = message ?? this.syntheticButtonMessage(customId, base.channel_id);
    return {
      ...base,
      type: 3,
      message: clicked,
      data: { custom_id: customId, component_type: 2 },
    } as APIMessageComponentButtonInteraction;
  }

  findMessageWithButton(customId: string, channelId?: string): APIMessage | undefined {
    const all = [...this.messages.values()].reverse();
    return all.find(
      (m) =>
        (channelId === undefined || m.channel_id === channelId) &&
        JSON.stringify(m.components ?? []).includes(JSON.stringify(customId)),
    );
  }

  private syntheticButtonMessage(customId: string, channelId: string): APIMessage {
    return this.buildMessage({
      channelId,
      body: {
        content: "",
        components: [
          { type: 1, components: [{ type: 2, style: 2, label: "Button", custom_id: customId }] },
        ],
      },
      files: [],
    });
  }

  private dataOptions(
    where: string,
    given: OptionRecord,
    defs: APIApplicationCommandOption[] | undefined,
    resolved: APIInteractionDataResolved,
    guildId: string | null,
    focused: string | undefined,
  ): APIApplicationCommandInteractionDataOption[] {
    const out: APIApplicationCommandInteractionDataOption[] = [];
    for (const [name, value] of Object.entries(given)) {
      const def = defs?.find((d) => d.name === name);
      if (defs && !def) {
        throw new Error(
          `fake Discord: ${where} has no option "${name}" (registered: ${defs.map((d) => d.name).join(", ") || "none"})`,
        );
      }
      const type = def?.type ?? inferOptionType(value);
      if (type === 1 || type === 2) {
        if (typeof value !== "object") {
          throw new Error(`fake Discord: ${where} ${name} is a subcommand: give its options`);
        }
        const subDefs =
          def && "options" in def ? (def.options as APIApplicationCommandOption[]) : undefined;
        out.push({
          name,
          type,
          options: this.dataOptions(
            `${where} ${name}`,
            value,
            subDefs ?? (def ? [] : undefined),
            resolved,
            guildId,
            focused,
          ),
        } as APIApplicationCommandInteractionDataOption);
        continue;
      }
      if (typeof value === "object") {
        throw new Error(`fake Discord: ${where} option "${name}" takes a value, not options`);
      }
      if (name === focused) {
        out.push({
          name,
          type,
          value: String(value),
          focused: true,
        } as APIApplicationCommandInteractionDataOption);
        continue;
      }
      checkOptionValue(where, name, type, value, def);
      out.push({ name, type, value } as APIApplicationCommandInteractionDataOption);
      if (typeof value === "string") this.resolve(type, value, resolved, guildId);
    }
    if (defs && focused === undefined) {
      for (const def of defs) {
        if ("required" in def && def.required && !(def.name in given)) {
          throw new Error(
            `fake Discord: ${where} needs option "${def.name}" (Discord enforces required options)`,
          );
        }
      }
    }
    return out;
  }

  private resolve(
    type: number,
    id: string,
    resolved: APIInteractionDataResolved,
    guildId: string | null,
  ): void {
    if (type === 6 || type === 9) {
      resolved.users = { ...resolved.users, [id]: this.user({ id }) };
      if (guildId) {
        const { user: _user, ...member } = this.member(this.user({ id }), MEMBER_PERMISSIONS);
        resolved.members = { ...resolved.members, [id]: member };
      }
    } else if (type === 7) {
      const channel = this.channels.get(id);
      resolved.channels = {
        ...resolved.channels,
        [id]: {
          id,
          name: channel?.name ?? "unknown",
          type: channel?.type ?? 0,
          permissions: MEMBER_PERMISSIONS.toString(),
        } as NonNullable<APIInteractionDataResolved["channels"]>[string],
      };
    } else if (type === 8 && guildId) {
      resolved.roles = {
        ...resolved.roles,
        [id]: { ...this.everyoneRole(guildId), id, name: `role${id.slice(-4)}` },
      };
    }
  }

  // ---- messages ---------------------------------------------------------------------------

  /**
   * Builds the message Discord would return for a create or edit body: attachments from the
   * uploaded parts (`attachments[].id` refers to `files[n]`), `attachment://` embed images
   * resolved, and on an edit the fields not sent kept from `previous`.
   */
  buildMessage(input: {
    channelId: string;
    body: Record<string, unknown>;
    files: RecordedFile[];
    previous?: APIMessage;
    interaction?: InteractionRecord;
    webhook?: boolean;
  }): APIMessage {
    const { channelId, body, files, previous, interaction } = input;
    const id = previous?.id ?? snowflake();
    const attachments = this.attachments(channelId, body, files, previous?.attachments ?? []);
    const embeds = Array.isArray(body.embeds)
      ? (body.embeds as APIEmbed[]).map((embed) => resolveEmbed(embed, attachments))
      : (previous?.embeds ?? []);
    const guildId = this.channels.get(channelId)?.guildId;
    const ephemeralBit = (previous?.flags ?? 0) & 64;
    const flags =
      typeof body.flags === "number" ? (body.flags & ~128) | ephemeralBit : (previous?.flags ?? 0);
    const message: APIMessage = {
      id,
      channel_id: channelId,
      ...(guildId ? { guild_id: guildId } : {}),
      author: this.botUser,
      content: typeof body.content === "string" ? body.content : (previous?.content ?? ""),
      timestamp: previous?.timestamp ?? new Date().toISOString(),
      edited_timestamp: previous ? new Date().toISOString() : null,
      tts: false,
      mention_everyone: false,
      mentions: [],
      mention_roles: [],
      attachments,
      embeds,
      components: Array.isArray(body.components)
        ? (body.components as APIMessage["components"])
        : (previous?.components ?? []),
      pinned: false,
      type: previous?.type ?? (interaction && interaction.payload.type === 2 ? 20 : 0),
      flags,
      ...(input.webhook ? { webhook_id: this.applicationId } : {}),
      ...(interaction ? { application_id: this.applicationId } : {}),
    } as APIMessage;
    if (interaction && !previous) {
      const payload = interaction.payload;
      const user = "member" in payload && payload.member ? payload.member.user : payload.user;
      if (user) {
        message.interaction_metadata = {
          id: interaction.id,
          type: payload.type,
          user,
          authorizing_integration_owners: payload.authorizing_integration_owners,
        } as APIMessage["interaction_metadata"] & object;
      }
    }
    this.messages.set(id, message);
    return message;
  }

  private attachments(
    channelId: string,
    body: Record<string, unknown>,
    files: RecordedFile[],
    previous: APIAttachment[],
  ): APIAttachment[] {
    const byIndex = new Map<string, RecordedFile>();
    files.forEach((file, i) => {
      const match = /^files?\[?(\d+)\]?$/.exec(file.field);
      byIndex.set(match?.[1] ?? String(i), file);
    });
    const upload = (file: RecordedFile, description?: unknown): APIAttachment => {
      const id = snowflake();
      const path = `${channelId}/${id}/${encodeURIComponent(file.filename)}`;
      return {
        id,
        filename: file.filename,
        size: file.data.length,
        url: `https://cdn.discordapp.com/attachments/${path}`,
        proxy_url: `https://media.discordapp.net/attachments/${path}`,
        content_type: file.contentType,
        ...(typeof description === "string" ? { description } : {}),
      };
    };
    if (Array.isArray(body.attachments)) {
      const used = new Set<RecordedFile>();
      const out: APIAttachment[] = [];
      for (const entry of body.attachments as { id?: unknown; description?: unknown }[]) {
        const id = String(entry.id);
        const kept = previous.find((a) => a.id === id);
        const file = byIndex.get(id);
        if (kept) out.push(kept);
        else if (file) {
          used.add(file);
          out.push(upload(file, entry.description));
        }
      }
      for (const file of files) if (!used.has(file)) out.push(upload(file));
      return out;
    }
    return [...previous, ...files.map((file) => upload(file))];
  }
}

function resolveEmbed(embed: APIEmbed, attachments: APIAttachment[]): APIEmbed {
  const resolveMedia = <T extends { url: string }>(media: T | undefined): T | undefined => {
    if (!media?.url.startsWith("attachment://")) return media;
    const name = media.url.slice("attachment://".length);
    const attachment = attachments.find((a) => a.filename === name);
    return attachment ? { ...media, url: attachment.url, proxy_url: attachment.proxy_url } : media;
  };
  const image = resolveMedia(embed.image);
  const thumbnail = resolveMedia(embed.thumbnail);
  return {
    type: "rich" as APIEmbed["type"] & string,
    ...embed,
    ...(image ? { image } : {}),
    ...(thumbnail ? { thumbnail } : {}),
  } as APIEmbed;
}

function inferOptionType(value: OptionValue): number {
  if (typeof value === "object") return 1;
  if (typeof value === "boolean") return 5;
  if (typeof value === "number") return Number.isInteger(value) ? 4 : 10;
  return 3;
}

/** What the Discord client would refuse to send. */
function checkOptionValue(
  where: string,
  name: string,
  type: number,
  value: string | number | boolean,
  def: APIApplicationCommandOption | undefined,
): void {
  const fail = (why: string) => {
    throw new Error(`fake Discord: ${where} option "${name}": ${why}`);
  };
  if (type === 3 && typeof value !== "string") fail("must be a string");
  if (type === 4 && !(typeof value === "number" && Number.isSafeInteger(value))) {
    fail("must be a safe integer");
  }
  if (type === 10 && typeof value !== "number") fail("must be a number");
  if (type === 5 && typeof value !== "boolean") fail("must be a boolean");
  if ([6, 7, 8, 9, 11].includes(type) && (typeof value !== "string" || !/^\d+$/.test(value))) {
    fail("must be a snowflake");
  }
  if (def && "choices" in def && Array.isArray(def.choices) && def.choices.length > 0) {
    const choices = def.choices as { value: unknown }[];
    if (!choices.some((c) => c.value === value)) {
      fail(`must be one of ${choices.map((c) => JSON.stringify(c.value)).join(", ")}`);
    }
  }
  if (def && "max_length" in def && typeof value === "string") {
    if (typeof def.max_length === "number" && value.length > def.max_length) fail("too long");
    if (typeof def.min_length === "number" && value.length < def.min_length) fail("too short");
  }
  if (def && "max_value" in def && typeof value === "number") {
    if (typeof def.max_value === "number" && value > def.max_value) fail("too large");
  }
  if (def && "min_value" in def && typeof value === "number") {
    if (typeof def.min_value === "number" && value < def.min_value) fail("too small");
  }
}

export function newInteractionRecord(payload: APIInteraction): InteractionRecord {
  return {
    payload,
    id: payload.id,
    token: payload.token,
    channelId: payload.channel?.id ?? payload.channel_id ?? "",
    guildId: payload.guild_id ?? null,
    createdAt: Date.now(),
  };
}
