import {
  type CacheFactory,
  type ClientOptions,
  GatewayIntentBits,
  Options,
  type SweeperOptions,
} from "discord.js";

/**
 * discord.js caches nothing: the bot reads none of it. Every answer comes from the interaction's
 * own payload (ids, the member's permissions in the channel) and every send goes through REST by
 * channel id, so neither the guilds READY lists (3 kB each even unavailable), nor the channels,
 * roles, emojis, stickers of a GUILD_CREATE, nor the members and users met in interactions are
 * kept: each cache holds 0 entries. The shard's readiness counts guilds by id (WebSocketShard#expectedGuilds),
 * not through the guild cache, so limiting it does not delay READY.
 */
const NOTHING = 0;
export const DISCORD_CACHE_LIMITS = {
  ApplicationCommandManager: NOTHING,
  ApplicationEmojiManager: NOTHING,
  AutoModerationRuleManager: NOTHING,
  BaseGuildEmojiManager: NOTHING,
  ChannelManager: NOTHING,
  DMMessageManager: NOTHING,
  EntitlementManager: NOTHING,
  GuildApplicationCommandManager: NOTHING,
  GuildBanManager: NOTHING,
  GuildChannelManager: NOTHING,
  GuildEmojiManager: NOTHING,
  GuildForumThreadManager: NOTHING,
  GuildInviteManager: NOTHING,
  GuildManager: NOTHING,
  GuildMemberManager: NOTHING,
  GuildMessageManager: NOTHING,
  GuildScheduledEventManager: NOTHING,
  GuildSoundboardSoundManager: NOTHING,
  GuildStickerManager: NOTHING,
  GuildTextThreadManager: NOTHING,
  MessageManager: NOTHING,
  PermissionOverwriteManager: NOTHING,
  PollAnswerVoterManager: NOTHING,
  PresenceManager: NOTHING,
  ReactionManager: NOTHING,
  ReactionUserManager: NOTHING,
  RoleManager: NOTHING,
  StageInstanceManager: NOTHING,
  SubscriptionManager: NOTHING,
  ThreadManager: NOTHING,
  ThreadMemberManager: NOTHING,
  UserManager: NOTHING,
  VoiceStateManager: NOTHING,
} as const;

/**
 * Sweepers for anything that still lands in a cache (a manager a later discord.js adds before it
 * is listed above): users and threads every 10 minutes. With the limits above they find nothing.
 */
export const DISCORD_SWEEPERS: SweeperOptions = {
  ...Options.DefaultSweeperSettings,
  users: { interval: 600, filter: () => () => true },
  threads: { interval: 600, lifetime: 600 },
};

/**
 * The client's intents and caches. No intent at all: slash commands, buttons and autocomplete
 * arrive as interactions, which no intent gates, and the Guilds intent would only make Discord
 * send every guild whole (GUILD_CREATE: channels, roles, emojis, stickers) at each start, a
 * flood to parse and throw away. `full`: the Guilds intent and discord.js's default caches, as
 * before; only for measuring what this saves (npm run bench, gateway10k).
 */
export function discordGatewayOptions(
  full = false,
): Pick<ClientOptions, "intents" | "makeCache" | "sweepers"> {
  quietCacheWarnings();
  if (full)
    return {
      intents: [GatewayIntentBits.Guilds],
      makeCache: Options.cacheWithLimits(Options.DefaultMakeCacheSettings),
      sweepers: Options.DefaultSweeperSettings,
    };
  const makeCache: CacheFactory = Options.cacheWithLimits(DISCORD_CACHE_LIMITS);
  return { intents: [], makeCache, sweepers: DISCORD_SWEEPERS };
}

let quieted = false;

/**
 * discord.js warns, once per manager, that limiting the guild, channel, role and overwrite caches
 * "breaks functionality": what breaks is reading those caches (guild.channels.cache,
 * channel.permissionsFor…), which the bot never does; test/discord-adapter.test.ts answers
 * commands and buttons with them empty. That warning alone is not printed, so an operator is not
 * told at every start that something is broken; every other warning is.
 */
function quietCacheWarnings(): void {
  if (quieted) return;
  quieted = true;
  const emit = process.emitWarning.bind(process) as (...args: unknown[]) => void;
  process.emitWarning = ((...args: unknown[]) => {
    const [, second] = args;
    const type =
      typeof second === "string" ? second : (second as { type?: string } | undefined)?.type;
    if (type === "UnsupportedCacheOverwriteWarning") return;
    emit(...args);
  }) as typeof process.emitWarning;
}
